"""Best-of-N attempts (core/engine/attempts.py): task with attempts runs N isolated children on one brief, runs the
check in each worktree, and compares them; the user merges one and discards the rest."""

from __future__ import annotations

import threading

from agentcli.core.events import AttemptsCompared
from tests.fakes.anthropic_server import offers_tool, text, tool_result_text, tool_results, tool_use

CHECK = "grep -qx 42 answer.txt && touch check-ran.txt"  # passes for one attempt; leaves a file behind when it does
# What each attempt writes: the right answer, a wrong one, and a file the check does not look at.
WRITES = [("answer.txt", "41\n"), ("answer.txt", "42\n"), ("notes.txt", "the answer is somewhere\n")]


def is_main(body):
    return offers_tool(body, "task")


def children(server) -> None:
    """Three scripted attempts: each writes one of WRITES (in the order their first requests arrive), then answers."""
    taken = iter(WRITES)
    lock = threading.Lock()

    def child(body):
        if len(body["messages"]) > 1:
            return text("Done: I wrote the file.")
        with lock:
            path, content = next(taken)
        return tool_use("write_file", {"path": path, "content": content})

    server.when(lambda b: not is_main(b), *[child] * 6)


async def test_three_attempts_are_checked_compared_then_one_merged_and_the_rest_discarded(server, make_session, repo):
    children(server)
    server.when(
        is_main,
        tool_use(
            "task",
            {
                "description": "Write the answer",
                "prompt": "Put the answer in answer.txt.",
                "attempts": 3,
                "check": CHECK,
            },
        ),
        text("sa-2's check passed; I recommend it."),
    )
    session, recorder = make_session(
        permission_mode="acceptEdits", permissions={"allow": ["bash(grep *)", "bash(touch *)"]}
    )
    await session.send("Have three attempts write the answer")

    compared = next(e for e in recorder.events if isinstance(e, AttemptsCompared))
    assert compared.check == CHECK and len(compared.attempts) == 3
    by_check = {a.check: a for a in compared.attempts}
    assert sorted(a.check for a in compared.attempts) == ["failed", "failed", "passed"]
    winner = by_check["passed"]
    assert winner.files == 1 and winner.added == 1 and winner.status == "done" and winner.tokens > 0
    assert "answer.txt" in winner.diff
    failed_ones = [a for a in compared.attempts if a.check == "failed"]
    assert {a.diff.split(": ", 1)[1] for a in failed_ones} == {"answer.txt +1 −0", "notes.txt +1 −0"}

    # the main agent got the same comparison as text, and the brief told each child the check
    result = tool_result_text(tool_results(server.requests[-1])[0])
    assert '3 attempts at "Write the answer"' in result and CHECK in result and "/merge sa-N" in result
    assert all(a.id in result for a in compared.attempts)
    child_brief = next(b for b in server.requests if not is_main(b))["messages"][0]["content"][0]["text"]
    assert f"agentcli runs `{CHECK}` in your worktree" in child_brief

    # the user takes the winner: its file, not the check's leftovers, reaches the working tree
    said = await session.worktree("merge", winner.id)
    assert "answer.txt" in said
    assert (repo / "answer.txt").read_text() == "42\n" and not (repo / "check-ran.txt").exists()
    for loser in failed_ones:
        assert "Discarded" in await session.worktree("discard", loser.id)
        assert await session.worktree_root(loser.id) is None
    assert not (repo / "notes.txt").exists()


async def test_attempts_that_cannot_run_as_asked_are_refused_in_one_sentence(server, make_session):
    server.when(
        is_main,
        tool_use("task", {"description": "Too many", "prompt": "p", "attempts": 7}),
        tool_use("task", {"description": "Later", "prompt": "p", "attempts": 2, "run_in_background": True}),
        text("ok"),
    )
    session, _ = make_session()
    await session.send("go")
    too_many, background = (tool_results(body)[0] for body in server.requests[1:3])
    assert too_many["is_error"] and tool_result_text(too_many) == "task: 'attempts' must be at most 4, not 7."
    assert background["is_error"] and "attempts run in the foreground" in tool_result_text(background)
    assert not session.children  # nothing started


def test_the_task_tool_offers_attempts_in_few_bytes():
    import json

    from agentcli.core.engine.task_tool import ATTEMPTS_SCHEMA

    assert set(ATTEMPTS_SCHEMA) == {"attempts", "check", "attempt_models"}
    assert len(json.dumps(ATTEMPTS_SCHEMA)) < 600  # the weight rule: a request carries what it needs
