"""The tool registry: which tools an agent is offered, and the one place tool calls run."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..content import agentcli_note
from ..rules import names_tool
from .base import NO_RECURSION, OUTPUT_CAP, Tool, ToolContext, ToolError, cap_output, check_input, check_numbers

__all__ = ["Tool", "ToolContext", "ToolError", "ToolRegistry", "ToolOutcome", "default_tools"]


@dataclass(frozen=True)
class ToolOutcome:
    output: str
    is_error: bool = False
    blocks: tuple[dict[str, Any], ...] = ()  # content blocks after the text, such as an MCP tool's images
    denied: bool = False  # refused before it ran: by the permissions or a PreToolUse hook

    def content(self) -> str | list[dict[str, Any]]:
        """The ``tool_result`` content: the text, and the other blocks after it when there are any."""
        text = self.output or "(no output)"
        return [{"type": "text", "text": text}, *self.blocks] if self.blocks else text


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools = {tool.name: tool for tool in tools}

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in self._tools.values()]

    def add(self, tool: Tool) -> None:
        """Offer one more tool from the next model call on (an MCP server's, once it is ready)."""
        self._tools[tool.name] = tool

    def only(self, names: Iterable[str]) -> "ToolRegistry":
        wanted = list(names)
        return ToolRegistry(t for t in self._tools.values() if any(names_tool(n, t.name) for n in wanted))

    def without(self, *names: str) -> "ToolRegistry":
        return ToolRegistry(t for t in self._tools.values() if not any(names_tool(n, t.name) for n in names))

    def kind(self, name: str) -> str:
        tool = self._tools.get(name)
        return tool.kind if tool is not None else ""

    def summary(self, name: str, args: Any) -> str:
        """A call on one line: the tool's key argument (the path, pattern, command), else its first text."""
        return call_summary(self._tools.get(name), args)

    def runs_concurrently(self, name: str) -> bool:
        tool = self._tools.get(name)
        return tool is None or tool.kind in ("read", "task")

    async def call(self, name: str, args: Any, ctx: ToolContext) -> ToolOutcome:
        """Run one tool call. Every failure becomes an is_error outcome; only cancellation raises."""
        problem = check_numbers(name, args)  # first: even a call refused for its name stays in the history
        if problem:
            return ToolOutcome(problem, True)
        if name == "task" and ctx.depth > 0:  # the one no-recursion guard: a subagent starts no subagents
            return ToolOutcome(NO_RECURSION, True)
        tool = self._tools.get(name)
        if tool is None:
            offered = ", ".join(self._tools) or "none"
            return ToolOutcome(f"There is no tool named '{name}'; the tools are: {offered}.", True)
        problem = check_input(tool, args)
        if problem:
            return ToolOutcome(problem, True)
        hooked = await ctx.hooks.before_tool(name, args, ctx.tool_use_id) if ctx.hooks else None
        if hooked is not None and hooked.blocked:
            return ToolOutcome(f"A PreToolUse hook blocked this call: {hooked.blocked}", True, denied=True)
        outcome = await self.run_tool(tool, args, ctx, approved=bool(hooked and hooked.allowed))
        if ctx.hooks:
            after = await ctx.hooks.after_tool(name, args, ctx.tool_use_id, outcome.output, outcome.is_error)
            notes = [agentcli_note(f"A PostToolUse hook said: {text}")["text"]
                     for text in (after.blocked, *after.context) if text]
            if notes:
                outcome = dataclasses.replace(outcome, output="\n\n".join([outcome.output, *notes]))
        return outcome

    async def run_tool(self, tool: Tool, args: dict[str, Any], ctx: ToolContext, approved: bool) -> ToolOutcome:
        """Ask the permissions (``approved``: a hook said yes to what would ask), then run the tool."""
        try:
            ask = ctx.permissions.authorize
            refusal = await (ask(tool, args, ctx, approved=True) if approved else ask(tool, args, ctx))
            if refusal:
                return ToolOutcome(refusal, True, denied=True)
            output = await tool.run(args, ctx)
            blocks: tuple[dict[str, Any], ...] = ()
            if isinstance(output, ToolOutcome):  # a tool with more than text to give (MCP images)
                output, blocks = output.output, output.blocks
            if len(output) > OUTPUT_CAP and ctx.output_dir is not None:
                from .outputs import keep_in_full  # the one full-output store (bash streams into it too)

                output = await asyncio.to_thread(keep_in_full, output, ctx)
        except ToolError as exc:
            return ToolOutcome(cap_output(str(exc), OUTPUT_CAP), True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool must not end the session
            return ToolOutcome(f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}.", True)
        return ToolOutcome(cap_output(output, OUTPUT_CAP), blocks=blocks)


def call_summary(tool: Tool | None, args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    text = tool.summary(args) if tool is not None else ""
    if not text:
        text = next((str(v) for v in args.values() if isinstance(v, str) and v.strip()), "")
    return text.strip().splitlines()[0] if text.strip() else ""


def default_tools(root: Path | None = None) -> list[Tool]:
    """Every built-in tool but ``task`` (the session adds it: it runs the engine above the tools).

    The read-only git tools come too when ``root`` lies in a git repository.
    """
    from .files import EditFile, ReadFile, WriteFile
    from .git import git_tools, is_git_repo
    from .search import Glob, Grep
    from .shell import Bash, BashOutput, KillBash

    git = git_tools() if root is not None and is_git_repo(root) else []
    return [ReadFile(), WriteFile(), EditFile(), Grep(), Glob(), Bash(), BashOutput(), KillBash(), *git]
