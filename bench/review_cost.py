"""What a review costs: the tokens of a 4-reviewer /review of one planted bug, against one child given the same
diff, both played by the stand-in server (its token counts: JSON characters ÷ 4)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import Reply, offers_tool, text, tool_use

from .common import StandIn, close_session, committed_repo, make_session, request_tokens
from .stats import Section, Stat

MODULE = "".join(f'def helper_{n}(value):\n    """Helper {n}."""\n    return value + {n}\n\n\n' for n in range(40))
FINDING = {
    "severity": "high",
    "location": "app/core.py:98",
    "problem": "helper_19 adds 190, not 19.",
    "fix": "Return value + 19.",
}


def _repo(root: Path) -> None:
    committed_repo(root, {"app/core.py": MODULE}, "Helpers")
    (root / "app" / "core.py").write_text(MODULE.replace("return value + 19\n", "return value + 190\n"))


def _reviewer(body: dict[str, Any]) -> Reply:
    """Every reviewer (and the lone child) reads the changed lines once, then reports the bug."""
    if len(body["messages"]) == 1:
        return tool_use("read_file", {"path": "app/core.py", "offset": 90, "limit": 15})
    return text("```findings\n" + json.dumps([FINDING]) + "\n```")


def _responder(body: dict[str, Any]) -> Reply:
    if not offers_tool(body, "task"):
        return _reviewer(body)
    if "tagged `review`" in json.dumps(body["messages"][-1]):  # the merge call
        return text("One bug.\n```review\n" + json.dumps([{"from": ["F1", "F2", "F3", "F4"], **FINDING}]) + "\n```")
    return (
        tool_use("task", {"description": "review", "prompt": body["messages"][-1]["content"][0]["text"]})
        if len(body["messages"]) == 1
        else text("One bug at app/core.py:98.")
    )


async def _run(root: Path, how: str) -> dict[str, float]:
    with StandIn(responder=_responder) as server:
        session = make_session(server, root)
        if how == "review":
            review = await session.review()
            assert len(review.findings) == 1 and review.findings[0].verified, review.summary()
        else:
            from agentcli.core.engine.review import brief
            from agentcli.core.engine.review_diff import load_diff

            await session.send(brief(load_diff(root, "")))  # the main agent hands the same brief to one child
        await close_session(session)
        server.assert_no_rejections()
        children = [b for b in server.requests if not offers_tool(b, "task")]
        main = [b for b in server.requests if offers_tool(b, "task")]
        return {
            "children": sum(request_tokens(b) for b in children),
            "main": sum(request_tokens(b) for b in main),
            "all": sum(request_tokens(b) for b in server.requests),
            "calls": len(server.requests),
        }


def run(work: Path) -> Section:
    section = Section("Review")
    root = work / "review-repo"
    _repo(root)
    review, single = asyncio.run(_run(root, "review")), asyncio.run(_run(root, "child"))
    section.row(
        "input tokens, 4 reviewers",
        Stat([review["children"]], "tokens", 0),
        f"one child: {Stat([single['children']], 'tokens', 0)}",
        f"{review['children'] / single['children']:.2f}×",
        note="each reviewer: the diff, one read, its answer",
    )
    section.row(
        "input tokens, every request",
        Stat([review["all"]], "tokens", 0),
        f"one child: {Stat([single['all']], 'tokens', 0)}",
        f"{review['all'] / single['all']:.2f}×",
        note="the main agent's calls too: the merge, or the task call and the answer",
    )
    section.row(
        "input tokens, the main agent's merge",
        Stat([review["main"]], "tokens", 0),
        note=f"{review['calls']:.0f} model calls in all; the lone child's errand: {single['calls']:.0f}",
    )
    section.notes.append(
        "A 40-function module with one planted bug (helper_19 returns value + 190), uncommitted; `/review` on it: "
        "four built-in reviewers, each reads the 15 lines around the change once and reports the bug, then the "
        "main agent merges the four into one. Against: the main agent hands the same brief (the diff and the "
        "reporting format) to one general-purpose child by `task`, which does the same read. Tokens as the "
        "stand-in counts a request (JSON characters ÷ 4), summed over every request of the children, and of the "
        "main agent. Deterministic: one run each."
    )
    return section
