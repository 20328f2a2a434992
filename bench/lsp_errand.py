"""An explore child's errand "find every caller of X", with and without the lsp tool, in the Python repository of
bench/lsp.py, driven by a scripted model that follows what its tools return: the child's model calls (turns) and
the bytes of tool result it read, and whether its answer named exactly the true callers.

X is `_process_response` of SyncAPIClient: AsyncAPIClient has a method of the same name, so grep's lines must be
sorted out. The scripted model does what a careful model does with each tool:
- with lsp: asks `references` of the name (the tool finds the definition by name, and says another has it), then
  answers with the places listed that are not the definition;
- without: greps the name, then, since two classes define it, greps the class lines of the files with hits to
  tell which class each call is in, then answers with the calls inside SyncAPIClient.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import offers_tool, text, tool_result_text, tool_results, tool_use

from .common import StandIn, close_session, make_session
from .lsp import TRUTH, definition_line, python_repository
from .stats import Section

NAME, CLASS = "_process_response", "SyncAPIClient"
BRIEF = f"Find every caller of `{NAME}` of {CLASS} (anthropic/_base_client.py). List them as path:line."
PLACE = re.compile(r"^([\w./-]+\.py):(\d+):\s?(.*)$")


def _places(result: str) -> list[tuple[str, int, str]]:
    return [(m[1], int(m[2]), m[3]) for line in result.splitlines() if (m := PLACE.match(line))]


def _calls(places: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    return [p for p in places if not re.match(rf"\s*(async\s+)?def\s+{NAME}\b", p[2])]


def _enclosing(path: str, line: int, classes: list[tuple[str, int, str]]) -> str:
    found = [text for where, number, text in classes if where == path and number <= line]
    match = re.match(r"class\s+(\w+)", found[-1]) if found else None
    return match[1] if match else ""


def _child(with_lsp: bool):  # type: ignore[no-untyped-def]
    """The child's scripted model: each reply chosen from the conversation so far."""

    def next_reply(body: dict[str, Any]) -> Any:
        results = [
            tool_result_text(block)
            for message in body["messages"]
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in tool_results({"messages": [message]})
        ]
        if with_lsp:
            if not results:
                return tool_use("lsp", {"operation": "references", "symbol": NAME})
            callers = _calls(_places(results[0]))
        else:
            if not results:
                return tool_use("grep", {"pattern": rf"\b{NAME}\b", "output_mode": "content"})
            hits = _places(results[0])
            if len(results) == 1:
                files = sorted({path for path, _, _ in hits})
                return tool_use(
                    "grep",
                    {"pattern": r"^class \w+", "output_mode": "content", "path": files[0] if len(files) == 1 else "."},
                )
            callers = [p for p in _calls(hits) if _enclosing(p[0], p[1], _places(results[1])) == CLASS]
        return text("Callers:\n" + "\n".join(f"{path}:{line}" for path, line, _ in callers))

    return next_reply


async def _errand(root: Path, with_lsp: bool) -> tuple[int, int, set[str]]:
    """The child's model calls, the tool-result bytes it read and the callers it answered."""
    server = StandIn()
    server.start()
    is_main = lambda body: offers_tool(body, "task")  # noqa: E731
    server.when(
        is_main,
        tool_use("task", {"description": "Find callers", "prompt": BRIEF, "subagent_type": "explore"}),
        text("Done."),
    )
    server.responder = lambda body: None if is_main(body) else _child(with_lsp)(body)
    lsp = (
        {
            "pylsp": {
                "command": [str(Path(sys.executable).parent / "pylsp")],
                "languages": ["python"],
                "patterns": ["*.py"],
            }
        }
        if with_lsp
        else {}
    )
    session = make_session(server, root, tool_search="off", lsp_discover=False, lsp=lsp)
    try:
        await session.send("Delegate it.")
    finally:
        await close_session(session)
        server.stop()
    child = [body for body in server.requests if not offers_tool(body, "task")]
    last = child[-1]
    read = sum(
        len(tool_result_text(block).encode())
        for message in last["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in tool_results({"messages": [message]})
    )
    answer = [block["text"] for block in _child(with_lsp)(last).blocks if block.get("type") == "text"][0]
    return len(child), read, {line for line in answer.splitlines()[1:]}


def run(work: Path) -> Section:
    section = Section("Find every caller (explore child, scripted)")
    root = python_repository(work)
    truth = next(s for s in json.loads(TRUTH.read_text())["symbols"] if s["name"] == NAME)
    defined = f"{truth['path']}:{definition_line(root / truth['path'], NAME)}"
    true = {place for place in truth["references"] if place != defined}
    rows = {}
    for with_lsp in (True, False):
        rows[with_lsp] = asyncio.run(_errand(root, with_lsp))
    (turns, read, said), (grep_turns, grep_read, grep_said) = rows[True], rows[False]
    section.row(
        f"callers of `{NAME}` of {CLASS}: child's model calls",
        f"{turns} (lsp)",
        f"grep and read only: {grep_turns}",
        f"{turns / grep_turns:.2f}×",
    )
    section.row(
        "… tool-result bytes the child read",
        f"{read:,} B",
        f"grep and read only: {grep_read:,} B",
        f"{read / max(grep_read, 1):.2f}×",
    )
    section.row(
        "… its answer against the true callers",
        "right" if said == true else f"wrong: {sorted(said)}",
        f"grep and read only: {'right' if grep_said == true else 'wrong: ' + str(sorted(grep_said))}",
    )
    section.notes.append(__doc__.split("\n\n", 1)[1].replace("\n", " "))
    return section
