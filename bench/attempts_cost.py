"""What best-of-N costs (issue 41): the tokens of ``task`` with ``attempts: 3`` against one child given the same
brief, both played by the stand-in server (its token counts: JSON characters ÷ 4)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentcli.core.events import AttemptsCompared
from tests.fakes.anthropic_server import Reply, offers_tool, text, tool_use

from .common import StandIn, close_session, committed_repo, make_session, request_tokens
from .stats import Section, Stat

ATTEMPTS = 3
CHECK = "grep -qx 42 answer.txt"
PROMPT = "The answer module's value is wrong: read app/answer.py, put the right answer in answer.txt."
MODULE = "".join(f'def part_{n}():\n    """Part {n} of the answer."""\n    return {n}\n\n\n' for n in range(40))
# Each child's errand, call by call: read the module, write the answer, run the check, answer.
STEPS: list[Reply] = [
    tool_use("read_file", {"path": "app/answer.py", "offset": 1, "limit": 40}),
    tool_use("write_file", {"path": "answer.txt", "content": "42\n"}),
    tool_use("bash", {"command": CHECK}),
    text("Wrote 42 to answer.txt; `grep -qx 42 answer.txt` passes."),
]


def _repo(root: Path) -> None:
    committed_repo(root, {"app/answer.py": MODULE}, "Parts")


def _responder(attempts: bool) -> Any:
    task = {"description": "Fix the answer", "prompt": PROMPT}
    call = (
        {**task, "attempts": ATTEMPTS, "check": CHECK}
        if attempts
        else {**task, "isolation": "worktree", "prompt": f"{PROMPT} Run `{CHECK}` before you answer."}
    )

    def respond(body: dict[str, Any]) -> Reply:
        if not offers_tool(body, "task"):  # a child: its step by how many messages it has
            return STEPS[min(len(body["messages"]) // 2, len(STEPS) - 1)]
        return tool_use("task", call) if len(body["messages"]) == 1 else text("sa-1 passed its check; take it.")

    return respond


async def _run(root: Path, attempts: bool) -> dict[str, float]:
    with StandIn(responder=_responder(attempts)) as server:
        compared: list[AttemptsCompared] = []
        session = make_session(
            server,
            root,
            lambda e: compared.append(e) if isinstance(e, AttemptsCompared) else None,
            permission_mode="acceptEdits",
            permissions={"allow": ["bash(grep *)"]},
        )
        await session.send("Fix the answer" + (f", {ATTEMPTS} ways" if attempts else ""))
        records = session.children
        await close_session(session)
        server.assert_no_rejections()
        if len(records) != (ATTEMPTS if attempts else 1) or any(r.status != "done" for r in records):
            raise RuntimeError(f"the errand went wrong: {[(r.id, r.status) for r in records]}")
        if attempts and [a.check for a in compared[0].attempts] != ["passed"] * ATTEMPTS:
            raise RuntimeError(f"the checks did not all pass: {compared[0].attempts}")
        children = [b for b in server.requests if not offers_tool(b, "task")]
        main = [b for b in server.requests if offers_tool(b, "task")]
        return {
            "children": sum(request_tokens(b) for b in children),
            "main": sum(request_tokens(b) for b in main),
            "all": sum(request_tokens(b) for b in server.requests),
            "calls": len(server.requests),
            "answer": request_tokens(main[-1]) - request_tokens(main[0]),
        }


def run(work: Path) -> Section:
    section = Section("Best-of-N attempts")
    root = work / "attempts-repo"
    _repo(root)
    many, one = asyncio.run(_run(root, True)), asyncio.run(_run(root, False))
    section.row(
        f"input tokens, {ATTEMPTS} attempts' children",
        Stat([many["children"]], "tokens", 0),
        f"one child: {Stat([one['children']], 'tokens', 0)}",
        f"{many['children'] / one['children']:.2f}×",
        note="each: read, write, the check, its answer",
    )
    section.row(
        "input tokens, every request",
        Stat([many["all"]], "tokens", 0),
        f"one child: {Stat([one['all']], 'tokens', 0)}",
        f"{many['all'] / one['all']:.2f}×",
        note="the main agent's calls too: the task call and the answer after the comparison",
    )
    section.row(
        "the main agent's context, grown by the result",
        Stat([many["answer"]], "tokens", 0),
        f"one child: {Stat([one['answer']], 'tokens', 0)}",
        f"{many['answer'] / one['answer']:.2f}×",
        note=f"its answering request less its first; {many['calls']:.0f} model calls in all, "
        f"the lone child's errand: {one['calls']:.0f}",
    )
    section.notes.append(
        f"Best-of-N attempts: a git repository with a 40-function module; the main agent calls task with attempts: "
        f"{ATTEMPTS} and check `{CHECK}`; each attempt (a general-purpose child in its own worktree) reads the module, "
        "writes answer.txt, runs the check and answers, then agentcli runs the check in each worktree and the main "
        "agent gets the comparison and the answers. Against: the same errand handed to one child in its own worktree "
        "(isolation: worktree), told to run the same check, making the same calls. Tokens as the stand-in counts a "
        "request (JSON characters ÷ 4), summed over the children's requests and the main agent's. Deterministic: "
        "one run each."
    )
    return section
