"""Prompt-cache reuse (issue 38 §2): over a scripted 30-turn session with a plan, a mode change, a background
child, a steer and a compaction, the share of the input bytes that repeat an earlier request's beginning, which
the API's prompt cache serves at a tenth of the price.

Each request body is read as the cache reads it: tools, then system, then messages, without the
``cache_control`` marks (where a breakpoint sits is no part of the prefix). Two shares: against the request just
before (whatever agent sent it), and against the best of every earlier request (the cache keeps each prefix for
five minutes, so a parent's request after its child's still finds its own). A variant adds a tool mid-session, as
an MCP server that comes up does, and the model calls it: on agentcli's route its definition is carried in a note
after the latest message (core/tools/on_demand.py), so the tools stay as cached."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from agentcli.core.tools.base import Tool, ToolContext, ToolOutcome
from tests.fakes.anthropic_server import offers_tool, text, tool_use
from tests.waiting import until, within

from .common import StandIn, close_session, make_session
from .stats import Section

TURNS = 30  # user prompts in the script
PLAN = {
    "todos": [
        {"content": "Read the code", "status": "in_progress", "activeForm": "Reading the code"},
        {"content": "Fix the greeting", "status": "pending", "activeForm": "Fixing the greeting"},
    ]
}
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: unmarked(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value


def as_blocks(content: Any) -> Any:
    """A string content as the one text block the API reads it as."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def canonical(body: dict[str, Any]) -> bytes:
    """A request as the cache matches it: tools, then system, then messages (the API's order), unmarked, and a
    string content as its text block (Claude Code sends a message as blocks while it is last, as a string after)."""
    fields = {
        "tools": body.get("tools"),
        "system": as_blocks(body.get("system")),
        "messages": [{**m, "content": as_blocks(m.get("content"))} for m in body.get("messages", [])],
    }
    parts = [f'"{name}":{_encode(unmarked(value))}' for name, value in fields.items() if value is not None]
    return ("{" + ",".join(parts) + "}").encode()


def common_prefix(a: bytes, b: bytes) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # slices compare in C: a binary search beats a byte loop by far
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def shares(bodies: list[dict[str, Any]]) -> tuple[float, float, int]:
    """(share repeating the previous request, share repeating the best earlier one, requests)."""
    seen = [canonical(body) for body in bodies]
    total = sum(len(c) for c in seen)
    previous = sum(common_prefix(c, seen[i - 1]) for i, c in enumerate(seen) if i)
    best = sum(max((common_prefix(c, earlier) for earlier in seen[:i]), default=0) for i, c in enumerate(seen))
    return previous / total, best / total, len(seen)


class Enabled(Tool):
    """A tool that joins mid-session (what an MCP server that comes up adds today)."""

    name = "lookup_symbol"
    description = "Find where a symbol is defined in the workspace's index."
    input_schema = {"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome("greet: src/app.py:1")


def _project(root: Path) -> None:
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    # a README of a real project's size: read each turn, the conversation outgrows what compaction keeps verbatim
    (root / "README.md").write_text(
        "# A small app\n\nIt greets.\n\n"
        + "".join(
            f"## Section {n}\n\nHow the app greets in case {n}: it takes a name and returns a greeting.\n\n"
            for n in range(110)
        )
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)


def _is_summarizer(body: dict[str, Any]) -> bool:
    """Compaction's call: the conversation's own request with tool_choice none (or, when that cannot fit, tool-less)."""
    return body.get("tool_choice") == {"type": "none"} or not body.get("tools")


def _is_main(body: dict[str, Any]) -> bool:
    return offers_tool(body, "task") and not _is_summarizer(body)


async def _session(server: StandIn, root: Path, add_tool: bool) -> list[dict[str, Any]]:
    """Drive the script; the main agent's, the child's and the summarizer's requests, in order."""
    server.reset()
    server.when(_is_summarizer, text("The user is fixing the greeting in src/app.py."))
    # the child answers at once, as Claude Code's does in its script (prompt_cache_claude.py): one request each
    server.when(lambda body: not _is_main(body), text("1 Python file: src/app.py."))
    session = make_session(server, root)
    held = threading.Event()  # the stand-in's thread waits on it
    try:
        for turn in range(1, TURNS + 1):
            if turn == 5:
                server.when(_is_main, tool_use("todo_write", PLAN), text("Planned."))
            elif turn == 8:
                session.permissions.set_mode("acceptEdits")
                server.when(
                    _is_main,
                    tool_use("edit_file", {"path": "src/app.py", "old_string": "'hello '", "new_string": "'Hello, '"}),
                    text("Edited."),
                )
            elif turn == 12:
                server.when(
                    _is_main,
                    tool_use(
                        "task",
                        {
                            "description": "Count Python files",
                            "prompt": "Count the Python files.",
                            "run_in_background": True,
                        },
                    ),
                    text("Started a child."),
                    text("The child found 1 Python file."),
                )
            elif turn == 16:
                server.when(_is_main, tool_use("glob", {"pattern": "*.md"}, gate=held), text("Reading README then."))
            elif turn == 20 and add_tool:
                session.tools.add(Enabled())
                server.when(_is_main, tool_use("lookup_symbol", {"symbol": "greet"}), text("Found it."))
            else:
                if turn == 24:
                    if not await session.compact():
                        raise RuntimeError("the script's /compact found nothing to compact")
                    server.when(_is_main, text("Going on from the summary."))
                else:
                    server.when(_is_main, tool_use("read_file", {"path": "README.md"}), text(f"Answer {turn}."))
            run = asyncio.create_task(session.send(f"Step {turn}: look at the project and go on."))
            if turn == 16:
                count = len(server.requests)
                await until(lambda count=count: len(server.requests) > count, "the held call")
                session.steering.add("Read README.md, not the Python files.")
                held.set()
            await within(run, f"turn {turn}")
            if turn == 12:
                await until(lambda: session.subagents.pending, "the child's result")
                await within(session.read_results(), "the turn on the child's result")
        server.assert_no_rejections()
        return server.requests
    finally:
        held.set()
        await close_session(session)


def run(work: Path) -> Section:
    from . import prompt_cache_claude

    section = Section("Prompt cache")
    root = work / "cache-project"
    _project(root)
    with StandIn() as server:
        ours = {added: shares(asyncio.run(_session(server, root, added))) for added in (False, True)}
    try:
        _project(theirs_root := work / "cache-project-claude")
        bodies, version = prompt_cache_claude.session(work, theirs_root)
        theirs: tuple[float, float, int] | None = shares(bodies)
        peer = f"Claude Code {version}"
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        theirs, peer = None, f"Claude Code not measured: {str(exc)[:150]}"
    for k, name in enumerate(
        (
            "input bytes repeating the previous request's beginning",
            "input bytes repeating the longest earlier request's beginning",
        )
    ):
        for added, how in ((False, "no tool enabled"), (True, "a tool enabled and called at turn 20")):
            previous = ours[added]
            versus = f"{peer}: {theirs[k]:.1%}" if theirs else peer
            ratio = f"{previous[k] / theirs[k]:.2f}×" if theirs else ""
            section.row(
                f"{name}: agentcli, {how}",
                f"{previous[k]:.1%}",
                versus if added else "",
                ratio if added else "",
                note=f"{previous[2]} requests"
                + (f"; Claude Code's: {theirs[2]}, its tool enabled by ToolSearch" if theirs and added else ""),
            )
    section.notes.append(
        "Prompt cache: a scripted 30-prompt session on a small git project whose README (9.6 kB) is read each turn: "
        "a plan (todo_write), a switch to acceptEdits and an edit, a background child, a steer into a held tool "
        "call, a tool that joins at prompt 20 (as an MCP server's would) called by its name, /compact at prompt 24; "
        "the child answers at once, as Claude Code's does in its script. Every request the stand-in server received (the main agent's, the child's, the "
        "summarizer's) is read as the API's cache matches it: tools → system → messages, cache_control marks left "
        "out, a string content as its text block. 'Previous': the share of all input bytes that repeat the "
        "beginning of the request just before, whoever sent it; 'longest earlier': of any earlier request (the cache "
        "keeps each for five minutes, so a parent's request after its child's still finds its own). Claude Code "
        "runs the same script through `-p --input-format stream-json` (bench/prompt_cache_claude.py)."
    )
    return section
