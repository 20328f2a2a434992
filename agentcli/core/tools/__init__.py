"""The tool registry: which tools an agent is offered, and the one place tool calls run."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .base import NO_RECURSION, OUTPUT_CAP, Tool, ToolContext, ToolError, cap_output, check_input, check_numbers

__all__ = ["Tool", "ToolContext", "ToolError", "ToolRegistry", "ToolOutcome", "default_tools"]


@dataclass(frozen=True)
class ToolOutcome:
    output: str
    is_error: bool = False


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

    def only(self, names: Iterable[str]) -> "ToolRegistry":
        wanted = set(names)
        return ToolRegistry(t for t in self._tools.values() if t.name in wanted)

    def without(self, *names: str) -> "ToolRegistry":
        return ToolRegistry(t for t in self._tools.values() if t.name not in names)

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
        if name == "task" and ctx.depth > 0:
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
            return ToolOutcome(f"A PreToolUse hook blocked this call: {hooked.blocked}", True)
        outcome = await self.run_tool(tool, args, ctx, approved=bool(hooked and hooked.allowed))
        if ctx.hooks:
            after = await ctx.hooks.after_tool(name, args, ctx.tool_use_id, outcome.output, outcome.is_error)
            notes = [f"[PostToolUse hook] {text}" for text in (after.blocked, *after.context) if text]
            if notes:
                outcome = ToolOutcome("\n\n".join([outcome.output, *notes]), outcome.is_error)
        return outcome

    async def run_tool(self, tool: Tool, args: dict[str, Any], ctx: ToolContext, approved: bool) -> ToolOutcome:
        """Ask the permissions (``approved``: a hook said yes to what would ask), then run the tool."""
        try:
            ask = ctx.permissions.authorize
            refusal = await (ask(tool, args, ctx, approved=True) if approved else ask(tool, args, ctx))
            if refusal:
                return ToolOutcome(refusal, True)
            output = await tool.run(args, ctx)
            if len(output) > OUTPUT_CAP and ctx.output_dir is not None:
                output = await asyncio.to_thread(keep_in_full, output, ctx)
        except ToolError as exc:
            return ToolOutcome(cap_output(str(exc), OUTPUT_CAP), True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool must not end the session
            return ToolOutcome(f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}.", True)
        return ToolOutcome(cap_output(output, OUTPUT_CAP))


def call_summary(tool: Tool | None, args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    text = tool.summary(args) if tool is not None else ""
    if not text:
        text = next((str(v) for v in args.values() if isinstance(v, str) and v.strip()), "")
    return text.strip().splitlines()[0] if text.strip() else ""


def keep_in_full(output: str, ctx: ToolContext) -> str:
    """Save an output too long for the model in the session folder (within the caps of
    ``outputs.py``); say where, above the cut version."""
    from .outputs import CappedCopy

    copy = CappedCopy(ctx, f"{ctx.tool_use_id or 'output'}.txt")
    try:
        copy.write(output.encode("utf-8", errors="replace"))
    finally:
        copy.close()
    return f"{copy.note(len(output), 'characters')}\n{output}"


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
