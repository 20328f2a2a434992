"""The tool registry: which tools an agent is offered, and the one place tool calls run."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from ..events import Preview, ToolKind

from ..content import Message, agentcli_note, quoted
from ..errors import ToolError
from ..policy.permissions import Permissions
from ..policy.rules import names_tool
from ..system.workspace import OutsideWorkspace
from ..tool_facts import KNOWN
from ..tool_settings import ToolSettings
from .base import NO_RECURSION, SandboxStopped, Tool, ToolContext, ToolOutcome, check_input, check_numbers
from .caps import OUTPUT_CAP, cap_output

__all__ = ["Tool", "ToolContext", "ToolError", "ToolRegistry", "ToolOutcome", "ToolSettings", "default_tools"]

# What the API takes back in a tool_use block: an id in its format, used once, and a name in a tool's format.
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
NO_NAME = "invalid_tool_name"  # the name a call is kept under when the one it gave is no tool's name


class CallFacts(TypedDict):
    """What a ``ToolCallStarted`` says of a call besides itself (``ToolRegistry.described``)."""

    kind: ToolKind | Literal[""]
    summary: str
    preview: Preview


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool], withheld: Iterable[str] = ()) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self.withheld = frozenset(withheld)  # main-only tools left out of a subagent's registry (for_subagents)

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
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

    def remove(self, name: str) -> None:
        """Stop offering a tool from the next model call on (one an MCP server withdrew)."""
        self._tools.pop(name, None)

    def only(self, names: Iterable[str]) -> ToolRegistry:
        wanted = list(names)
        return ToolRegistry(
            (t for t in self._tools.values() if any(names_tool(n, t.name) for n in wanted)), self.withheld
        )

    def joined(self, *tools: Tool) -> ToolRegistry:
        """These tools and ``tools`` (an agent's own, such as its tool_search), as a new registry."""
        return ToolRegistry([*self._tools.values(), *tools], self.withheld)

    def without(self, *names: str) -> ToolRegistry:
        return ToolRegistry(
            (t for t in self._tools.values() if not any(names_tool(n, t.name) for n in names)), self.withheld
        )

    def for_subagents(self) -> ToolRegistry:
        """The tools a subagent may be offered: all but the main agent's own (task, message_subagent, worktree…)."""
        return ToolRegistry(
            (t for t in self._tools.values() if not t.main_only),
            self.withheld | {t.name for t in self._tools.values() if t.main_only},
        )

    def kind(self, name: str) -> ToolKind | Literal[""]:
        tool = self._tools.get(name)
        return tool.kind if tool is not None else ""

    def described(self, name: str, args: Any) -> CallFacts:
        """What a ``ToolCallStarted`` says of a call besides itself: its tool's kind and preview, and its summary."""
        tool = self._tools.get(name)
        return CallFacts(
            kind=self.kind(name), summary=self.summary(name, args), preview=tool.preview if tool is not None else ""
        )

    def summary(self, name: str, args: Any) -> str:
        """A call on one line: the tool's key argument (the path, pattern, command), else its first text."""
        return call_summary(self._tools.get(name), args)

    def runs_concurrently(self, name: str) -> bool:
        tool = self._tools.get(name)
        return tool is None or tool.kind in ("read", "task")

    def checked(
        self, content: list[dict[str, Any]], history: list[Message]
    ) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """A model's reply made fit to keep and send back, and why each malformed call in it is refused
        (by its id as kept): no call is run whose id, name or input the API would refuse in the history.

        Such a call is kept with a fresh id (its result answers that id), its name if that is a tool
        name's format (else ``NO_NAME``) and its input if that is an object (else ``{}``)."""
        used = {
            b.get("id")
            for m in history
            if m["role"] == "assistant" and isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_use"
        }
        kept: list[dict[str, Any]] = []
        refused: dict[str, str] = {}
        for block in content:
            if block.get("type") != "tool_use":
                kept.append(block)
                continue
            tool_use_id, name, args = block.get("id"), block.get("name"), block.get("input")
            problem = self.malformed(tool_use_id, name, args, used)
            if problem:
                tool_use_id = f"toolu_agentcli_{uuid.uuid4().hex[:20]}"
                refused[tool_use_id] = problem
                name = name if isinstance(name, str) and TOOL_NAME.fullmatch(name) else NO_NAME
                block = {
                    "type": "tool_use",
                    "id": tool_use_id,
                    "name": name,
                    "input": args if isinstance(args, dict) else {},
                }
            used.add(tool_use_id)
            kept.append(block)
        return kept, refused

    def malformed(self, tool_use_id: Any, name: Any, args: Any, used: set[Any]) -> str | None:
        """Why a call cannot be run or sent back as it is, in one sentence; None when it can."""
        again = "so it was not run; make the call again"
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            shown = json.dumps(name, ensure_ascii=False)
            shown = shown if len(shown) <= 60 else shown[:59] + "…"
            return (
                f"This call's tool name {shown} is not the name of a tool, {again} with one of: "
                f"{', '.join(self._tools) or 'none'}."
            )
        if not isinstance(args, dict):
            kind = {list: "a list", str: "a string", bool: "true or false", type(None): "null"}.get(
                type(args), "a number"
            )
            return f"The input of this {name} call was {kind}, not an object of parameters, {again} with one."
        if not isinstance(tool_use_id, str) or not TOOL_USE_ID.fullmatch(tool_use_id):
            return f"This {name} call had no valid id, {again}."
        if tool_use_id in used:
            return f"This {name} call repeated the id {tool_use_id} of another call, {again} if it is still needed."
        return None

    async def call(self, name: str, args: Any, ctx: ToolContext) -> ToolOutcome:
        """Run one tool call. Every failure becomes an is_error outcome; only cancellation raises.

        What it returns is quoted (``content.quoted``): this is where every tool's output, which may hold any
        outside text (a command's output, a page, an MCP server's result), is kept from reading as agentcli's
        notes; the notes a PostToolUse hook adds after it are agentcli's own. A tool that quotes its own output
        beside notes of agentcli's (``quotes_own_output``: task) is left as it is."""
        tool = self._tools.get(name)
        outcome, ran = await self.attempt(name, args, ctx, tool)
        if tool is None or not tool.quotes_own_output:
            outcome = dataclasses.replace(outcome, output=quoted(outcome.output))
        if ran and ctx.hooks:  # PostToolUse hears of every call that ran; PostToolUseFailure of those that failed
            said = {
                "PostToolUse": await ctx.hooks.after_tool(name, args, ctx.tool_use_id, outcome.output, outcome.is_error)
            }
            if outcome.is_error and not outcome.denied:
                said["PostToolUseFailure"] = await ctx.hooks.tool_failed(
                    name, args, ctx.tool_use_id, outcome.output, False
                )
            notes = [
                agentcli_note(f"A {event} hook said: {text}")["text"]
                for event, verdict in said.items()
                for text in (verdict.blocked, *verdict.context)
                if text
            ]
            if notes:
                stop = next((v.stop for v in said.values() if v.stop), "")
                outcome = dataclasses.replace(outcome, output="\n\n".join([outcome.output, *notes]), stop=stop)
        return outcome

    async def attempt(self, name: str, args: Any, ctx: ToolContext, tool: Tool | None) -> tuple[ToolOutcome, bool]:
        """The call's outcome as the tool (or what refused it) gave it, and whether it got as far as the
        permissions and the tool (which is when a PostToolUse hook hears of it)."""
        problem = check_numbers(name, args)  # first: even a call refused for its name stays in the history
        if problem:
            return ToolOutcome(problem, True), False
        if ctx.depth > 0 and (name in self.withheld or (tool is not None and tool.main_only)):
            # the one guard: a subagent runs no tool of the main agent's, so it starts no subagents
            facts = KNOWN.get(name)
            return ToolOutcome(
                NO_RECURSION
                if facts is not None and facts.role == "delegate"
                else f"{name} is the main agent's tool alone; "
                "do this part of the work yourself, or say in your answer what is needed.",
                True,
            ), False
        if tool is None:
            offered = ", ".join(self._tools) or "none"
            return ToolOutcome(f"There is no tool named '{name}'; the tools are: {offered}.", True), False
        problem = check_input(tool, args)
        if problem:
            return ToolOutcome(problem, True), False
        hooked = await ctx.hooks.before_tool(name, args, ctx.tool_use_id) if ctx.hooks else None
        if hooked is not None and hooked.blocked:
            return ToolOutcome(
                f"A PreToolUse hook blocked this call: {hooked.blocked}", True, denied=True, stop=hooked.stop
            ), False
        return await self.run_tool(tool, args, ctx, approved=bool(hooked and hooked.allowed)), True

    async def run_tool(self, tool: Tool, args: dict[str, Any], ctx: ToolContext, approved: bool) -> ToolOutcome:
        """Ask the permissions (``approved``: a hook said yes to what would ask), then run the tool. The
        outcome says how long the permission took (``waited``), which the call's time leaves out."""
        waited = 0.0
        if (
            not approved
            and ctx.hooks
            and ctx.permissions.interactive
            and ctx.permissions.decide(tool, args, ctx).verdict == "ask"
        ):  # the user would be asked: a hook may answer
            hooked = await ctx.hooks.permission_request(tool.name, args, ctx.tool_use_id)
            if hooked.blocked:
                return ToolOutcome(
                    f"A PermissionRequest hook denied this call: {hooked.blocked}", True, denied=True, stop=hooked.stop
                )
            if hooked.updated_input is not None:
                given = ctx.hooks.own_input(tool.name, hooked.updated_input, args)
                if problem := check_input(tool, given):
                    return ToolOutcome(problem, True)
                args = given
            approved = hooked.allowed
        try:
            ask, asked = ctx.permissions.authorize, time.monotonic()
            refusal = await (ask(tool, args, ctx, approved=True) if approved else ask(tool, args, ctx))
            waited = time.monotonic() - asked
            if isinstance(refusal, dict):  # allowed with another input (the Agent SDK's can_use_tool)
                if problem := check_input(tool, refusal):
                    return ToolOutcome(problem, True, waited=waited)
                args, refusal = refusal, None
            if refusal:
                return ToolOutcome(refusal, True, denied=True, waited=waited)
            watched = edited_file(tool, args, ctx)
            before = (
                await asyncio.to_thread(ctx.edit_watch.before_edit, watched) if watched and ctx.edit_watch else None
            )
            try:
                output = await tool.run(args, ctx)
            except SandboxStopped as stopped:  # the sandbox's second ask: judged here, as the first was
                why = (
                    await ctx.permissions.ask_sandbox(tool, args, ctx, stopped.needed)
                    if isinstance(ctx.permissions, Permissions)
                    else "no one can be asked here"
                )
                output = await stopped.again() if not why else stopped.refused(why)
            if watched and ctx.edit_watch and before is not None and isinstance(output, str):
                output += await ctx.edit_watch.after_edit(watched, before, ctx)
            blocks: tuple[dict[str, Any], ...] = ()
            if isinstance(output, ToolOutcome):  # a tool with more than text to give (MCP images)
                blocks = output.blocks
                output = output.output
            if len(output) > OUTPUT_CAP and ctx.output_dir is not None:
                from ..storage.outputs import keep_in_full  # the one full-output store (bash streams into it too)

                output = await asyncio.to_thread(keep_in_full, output, ctx)
        except ToolError as exc:
            return ToolOutcome(cap_output(str(exc), OUTPUT_CAP), True, waited=waited)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool must not end the session
            return ToolOutcome(f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}.", True, waited=waited)
        return ToolOutcome(cap_output(output, OUTPUT_CAP), blocks=blocks, waited=waited)


def edited_file(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Path | None:
    """The file an edit_file or write_file call changes (a tool that edits the file its path names, as it declares),
    when something watches edits (``ctx.edit_watch``)."""
    if (
        ctx.edit_watch is None
        or not (tool.kind == "edit" and tool.claude_file_path)
        or not isinstance(args.get("path"), str)
    ):
        return None
    try:
        return ctx.workspace.resolve(args["path"])
    except (OSError, ValueError, RuntimeError, OutsideWorkspace):  # the tool itself says what is wrong
        return None


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
    from ..system.git import is_git_repo
    from .background import BashOutput, KillBash
    from .edit import EditFile
    from .files import ReadFile, WriteFile
    from .git import git_tools
    from .search import Glob, Grep
    from .shell import Bash
    from .todo import TodoWrite
    from .web import WebFetch

    git = git_tools() if root is not None and is_git_repo(root) else []
    return [
        ReadFile(),
        WriteFile(),
        EditFile(),
        Grep(),
        Glob(),
        Bash(),
        BashOutput(),
        KillBash(),
        *git,
        TodoWrite(),
        WebFetch(),
    ]
