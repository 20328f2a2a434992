"""A cut-off child: its closing summary is not one of its turns, and cancelling it is an event at once."""

from __future__ import annotations

import asyncio
import threading

from agentcli.core.events import SubagentCancelling, SubagentFinished, TurnStarted
from tests.fakes.anthropic_server import first_user_text, offers_tool, text, tool_result_text, tool_results, tool_use
from tests.waiting import until, within


def is_child(body):
    return not offers_tool(body, "task")


def is_main(body):
    return offers_tool(body, "task")


async def test_a_child_capped_at_4_turns_reports_4_turns_and_that_it_summarized(server, make_session):
    server.when(is_main, tool_use("task", {"description": "Short leash", "prompt": "Search briefly."}), text("ok"))
    server.when(lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"}, text("Partial: src/ only."))
    server.responder = lambda body: tool_use("glob", {"pattern": "*"})  # the child never stops by itself
    session, events = make_session(subagent_max_turns=4)
    await session.send("go")
    assert len([b for b in server.requests if is_child(b)]) == 5  # 4 turns, then the summary call
    assert [e.turn for e in events.of(TurnStarted) if e.agent_id == "sa-1"] == [1, 2, 3, 4]
    [finished] = events.of(SubagentFinished)
    assert finished.status == "capped" and finished.turns == 4 and finished.summarized
    answer = tool_result_text(tool_results([b for b in server.requests if is_main(b)][-1])[0])
    assert "[sa-1 · capped · 4 turns + summary ·" in answer
    assert session.subagents.records["sa-1"].turns == 4


async def test_cancelling_a_child_is_an_event_before_its_summary_returns(server, make_session):
    hold, summary = threading.Event(), threading.Event()
    server.when(is_main, tool_use("task", {"description": "Slow one", "prompt": "Slow errand"}), text("Reported."))
    server.when(
        lambda b: first_user_text(b) == "Slow errand" and b.get("tool_choice") == {"type": "none"},
        text("Partial: looked in src/ only.", gate=summary, gate_timeout=120),
    )
    server.when(
        lambda b: first_user_text(b) == "Slow errand",
        tool_use("grep", {"pattern": "x"}),
        text("never sent", gate=hold, gate_timeout=120),
    )
    session, events = make_session()
    run = asyncio.create_task(session.send("one slow errand"))
    try:
        await until(
            lambda: len([b for b in server.requests if first_user_text(b) == "Slow errand"]) == 2,
            "the child to wait on its second call",
        )
        assert session.subagents.cancel("sa-1")
        [cancelling] = events.of(SubagentCancelling)  # at once, while the summary is still to come
        assert cancelling.id == "sa-1" and cancelling.agent_id == "sa-1" and not events.of(SubagentFinished)
        assert not session.subagents.cancel("sa-1")  # asked once: a second x changes nothing
        summary.set()
        await within(run, "the parent's answer")
        [finished] = events.of(SubagentFinished)
        assert finished.status == "cancelled" and finished.summarized and finished.turns == 2
    finally:
        hold.set()
        summary.set()
