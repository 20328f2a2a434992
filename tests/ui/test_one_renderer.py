"""One renderer, one formatter, one approval queue.

`sessions show` and line mode's /transcript draw from the view model (records → events → SessionView);
the status bar's facts come from it; the footer the model reads and the screens write durations and
tokens alike; the engine asks one approval question at a time, so a front end only shows the one asked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentcli.core.engine.subagent_record import SubagentRecord, report_of
from agentcli.core.events import (
    ALLOW_ONCE,
    ApprovalRequested,
    Compacted,
    Event,
    HistoryCleared,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    Usage,
    UsageUpdated,
    UserMessage,
)
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.shell import Bash
from agentcli.sessions_cli import replay
from agentcli.ui.format import seconds, tokens
from agentcli.ui.transcript_text import main_lines, subagent_lines
from agentcli.ui.view import SessionView
from tests.conftest import TOOLS
from tests.origin import Origin
from tests.waiting import until

CHILD: Origin = {"agent_id": "sa-1", "parent_tool_use_id": "t9"}


def record(ts: str, type_: str, **fields: Any) -> dict[str, Any]:
    return {
        "ts": f"2026-11-30T10:00:{ts}+00:00",
        "type": type_,
        "agent_id": "main",
        "parent_tool_use_id": None,
        **fields,
    }


def stored_session() -> list[dict[str, Any]]:
    """A main transcript as the store writes it today, and with one user message and one call in the
    format of before (no origin, no kind or summary)."""
    return [
        record("00", "session_started", session_id="s", cwd="/w", model="m"),
        record("01", "user_message", content=[{"type": "text", "text": "look at a and b"}]),  # no origin
        record("02", "tool_call_started", id="t1", name="read_file", input={"path": "a.py"}),  # no kind/summary
        record("02", "tool_call_started", id="t2", name="grep", input={"pattern": "b"}, kind="read", summary="b"),
        record("03", "tool_call_finished", id="t2", name="grep", output="b.py:1:b", is_error=False, seconds=0.2),
        record("03", "tool_call_finished", id="t1", name="read_file", output="A", is_error=False, seconds=0.3),
        record("04", "retrying", attempt=2, retries=8, delay=4.0, error="Overloaded."),
        record("05", "subagent_started", id="sa-1", subagent_type="explore", description="Map it", prompt="p", **CHILD),
        record(
            "09",
            "subagent_finished",
            id="sa-1",
            status="done",
            result="mapped",
            turns=7,
            usage={"input_tokens": 12_000, "output_tokens": 300},
            seconds=41.3,
            **CHILD,
        ),
        record("10", "session_resumed", session_id="s", cwd="/w", model="m"),
        record("11", "history_cleared", messages=[]),
        record("12", "compacted", messages_summarized=6, tokens_before=9, tokens_after=3, summary="s", messages=[]),
        record(
            "13",
            "tool_call_started",
            id="t3",
            name="bash",
            input={"command": "make"},
            kind="exec",
            summary="make",
            origin="user",
        ),
    ]


def test_sessions_show_draws_a_stored_session_from_the_view():
    view, _ = replay(stored_session())
    lines = list(main_lines(view, live=False))
    assert lines[:2] == ["", "> look at a and b"]
    # parallel calls: each result under its own call, though grep's came first
    assert lines[2:8] == ["", '● read_file(path="a.py")', "  ⎿ A", "", '● grep(pattern="b")', "  ⎿ b.py:1:b"]
    assert "! Overloaded. Retrying in 4 s (2/8)." in lines
    assert "  ▸ sa-1 started · explore · Map it" in lines
    assert "  ▪ sa-1 done · 7 turns · 12.3k tokens · 41 s" in lines
    assert "── /clear: the conversation started afresh" in lines
    assert "── compacted 6 older messages into a summary" in lines
    assert any(line.startswith("── resumed ") for line in lines)
    assert lines[-2:] == ['● bash(command="make")', "  ⎿ interrupted: no result was recorded"]
    assert view.transcript.calls["t1"].kind == "read"  # filled in for a record of before
    assert view.context_used == 3  # after the compaction


def test_parallel_tasks_results_each_name_their_task():
    task = {"kind": "task", "summary": ""}
    records = [
        record("01", "tool_call_started", id="t8", name="task", input={"description": "Map a"}, **task),
        record("01", "tool_call_started", id="t9", name="task", input={"description": "Map b"}, **task),
        record("02", "tool_call_finished", id="t9", name="task", output="b mapped", is_error=False, seconds=2.0),
        record("03", "tool_call_finished", id="t8", name="task", output="a mapped", is_error=False, seconds=3.0),
    ]
    lines = list(main_lines(replay(records)[0], live=False))
    assert lines[lines.index('● task(description="Map b")') + 1] == "  ⎿ b mapped"  # came right after its call
    assert lines[lines.index('  ↳ the result of task "Map a":') + 1] == "  ⎿ a mapped"
    assert lines.index('  ↳ the result of task "Map a":') > lines.index("  ⎿ b mapped")


def test_a_child_that_never_finished_ran_from_its_first_record_to_its_last():
    records = [
        record("00", "subagent_started", id="sa-1", subagent_type="explore", description="d", prompt="Go.", **CHILD),
        record("01", "user_message", content=[{"type": "text", "text": "Go."}], origin="user", **CHILD),
        record("01", "turn_started", turn=1, max_turns=30, **CHILD),
        record(
            "05", "tool_call_started", id="c1", name="glob", input={"pattern": "*"}, kind="read", summary="*", **CHILD
        ),
    ]
    view, now = replay(records)
    lines = list(subagent_lines(view.subagents["sa-1"], live=True, now=now))
    assert lines[1] == "Status: running · 1 turn · 0 tokens · 5.0 s"
    assert "> Go." not in lines  # the brief is shown once, under Brief:
    assert "  ⎿ (running)" in lines


def test_the_status_bar_facts_are_the_views():
    view = SessionView()
    main, child = Usage(1000, 300, cost=0.01), Usage(2000, 0, cost=0.02)
    view.apply(UsageUpdated(usage=main, total=main, model="claude-x"), 0.0)
    view.apply(SubagentStarted(id="sa-1", subagent_type="explore", description="d", prompt="p", **CHILD), 0.0)
    view.apply(UsageUpdated(usage=child, total=child, **CHILD), 1.0)
    view.apply(ToolCallStarted(id="c1", name="grep", input={}, kind="read", **CHILD), 1.0)
    view.apply(ToolCallFinished(id="c1", name="grep", output="x" * 4000, is_error=False, seconds=0.1, **CHILD), 1.0)
    facts = view.status(model="claude-x", mode="default", context_window=200_000, busy=True)
    assert (facts.tokens, facts.cost, facts.context_used, facts.kept_out) == (3300, "$0.0300", 1000, 2000)
    view.apply(Compacted(messages_summarized=4, tokens_before=1000, tokens_after=200, summary="s", messages=[]), 2.0)
    assert view.status(model="m", mode="default", context_window=1).context_used == 200
    view.apply(HistoryCleared(), 3.0)
    assert view.status(model="m", mode="default", context_window=1).context_used == 0


def test_the_footer_the_model_reads_and_the_screens_format_alike():
    record = SubagentRecord(
        id="sa-1",
        type="explore",
        description="d",
        prompt="p",
        tool_use_id="t",
        status="done",
        turns=7,
        usage=Usage(12_000, 300),
        seconds=41.3,
    )
    assert (
        report_of(record).footer
        == f"[sa-1 · done · 7 turns · {tokens(12_300)} tokens · {seconds(41.3)}]"
        == "[sa-1 · done · 7 turns · 12.3k tokens · 41 s]"
    )
    assert (seconds(0.3), seconds(9.96), seconds(59.7), seconds(125)) == ("0.3 s", "10 s", "1 min 00 s", "2 min 05 s")


def test_line_mode_transcript_of_a_record_is_drawn_from_the_view():
    events: list[Event] = [
        SubagentStarted(id="sa-1", subagent_type="explore", description="d", prompt="Find it.", **CHILD),
        UserMessage(content=[{"type": "text", "text": "Find it."}], **CHILD),
        TurnStarted(turn=1, max_turns=30, **CHILD),
        ToolCallStarted(id="c1", name="grep", input={"pattern": "x"}, kind="read", summary="x", **CHILD),
        ToolCallFinished(id="c1", name="grep", output="a.py:1:x", is_error=False, seconds=0.1, **CHILD),
        SubagentFinished(
            id="sa-1", status="done", result="It is in a.py.", turns=1, usage=Usage(10, 2), seconds=1.5, **CHILD
        ),
    ]
    record = SubagentRecord(
        id="sa-1",
        type="explore",
        description="d",
        prompt="Find it.",
        tool_use_id="t9",
        status="done",
        result="It is in a.py.",
        turns=1,
        usage=Usage(10, 2),
        seconds=1.5,
        events=events,
    )
    from agentcli.ui.plain.transcript import transcript_text

    text = transcript_text(record)
    assert text.splitlines()[:2] == ["sa-1 · explore · d", "Status: done · 1 turn · 12 tokens · 1.5 s"]
    assert '● grep(pattern="x")' in text and "  ⎿ a.py:1:x" in text and "  It is in a.py." in text


async def test_the_engine_asks_one_question_at_a_time_and_withdraws_a_cancelled_one(tmp_path: Path):
    """What lets the TUI and line mode keep no queue of their own."""
    asked: list[ApprovalRequested] = []

    def emit(event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            asked.append(event)

    ctx = ToolContext(
        workspace=Workspace.at(tmp_path), emit=emit, permissions=Permissions(interactive=True), settings=TOOLS
    )
    first = asyncio.ensure_future(ctx.permissions.authorize(Bash(), {"command": "touch one"}, ctx.for_call("a")))
    second = asyncio.ensure_future(ctx.permissions.authorize(Bash(), {"command": "touch two"}, ctx.for_call("b")))
    await until(lambda: len(asked) == 1, "the first question")
    # both calls were started in the same loop pass, so the second has reached the queue by now
    assert len(asked) == 1 and not second.done(), "a second question while the first was open"
    first.cancel()  # its call was cancelled: the question is withdrawn...
    await until(lambda: len(asked) == 2, "the second question after the first was withdrawn")
    assert asked[0].future is not None and asked[0].future.cancelled()
    assert asked[1].input == {"command": "touch two"}
    assert asked[1].future is not None
    asked[1].future.set_result(ALLOW_ONCE)
    assert await second is None


def test_a_task_left_without_a_result_says_so_after_its_childs_lines():
    """sessions show of a session killed while a child ran printed the task's "no result" line above the
    child's start; it comes where a result would have, after the child's end."""
    view = SessionView()
    view.apply(UserMessage(content=[{"type": "text", "text": "Find beta"}]), 0.0)
    view.apply(
        ToolCallStarted(
            id="t9", name="task", input={"description": "Find beta", "prompt": "p"}, kind="task", preview="delegate"
        ),
        0.0,
    )
    view.apply(SubagentStarted(id="sa-1", subagent_type="explore", description="Find beta", prompt="p", **CHILD), 0.0)
    lines = [line for line in main_lines(view, live=False) if line.startswith("  ")]
    assert lines == [
        "  ▸ sa-1 started · explore · Find beta",
        "  ▪ sa-1 interrupted: the process stopped while it worked",
        "  ⎿ interrupted: no result was recorded",
    ]
