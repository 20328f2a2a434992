"""A child's result survives the main agent's compaction (issue 41, part 4): a compaction while background children
run, and one between a child's end and its delivery. Every result reaches the model once, with its receipt."""

from __future__ import annotations

import json
import threading

from agentcli.core.events import Compacted, Event, SubagentFinished, SubagentResultDelivered
from tests.core.test_compaction import is_summarizer
from tests.fakes.anthropic_server import first_user_text, offers_tool, reply, text, tool_use, tool_use_block
from tests.waiting import until, within


def is_main(body):
    return offers_tool(body, "task") and not is_summarizer(body)


def errand(name):
    return tool_use_block(
        "task", {"description": f"Errand {name}", "prompt": f"Errand {name}.", "run_in_background": True}
    )


def delivered(body, child):
    """How many times the request's history holds ``child``'s delivered result."""
    return json.dumps(body["messages"]).count(f"Background subagent {child} (")


def assert_each_result_once_with_its_receipt(server, children):
    main = [b for b in server.requests if is_main(b)]
    for child, said in children.items():
        assert delivered(main[-1], child) == 1, child  # in the history the model reads now: once
        # and it arrived once: the first request that holds it is the only one whose latest message brings it
        arrivals = [b for b in main if f"Background subagent {child} (" in json.dumps(b["messages"][-1])]
        assert len(arrivals) == 1, child
        note = next(
            block["text"]
            for block in arrivals[0]["messages"][-1]["content"]
            if f"Background subagent {child} (" in block.get("text", "")
        )
        assert said in note and f"Receipt for {child}" in note and "README.md" in note


async def test_results_of_children_running_through_a_compaction_arrive_once_with_their_receipts(server, make_session):
    release = threading.Event()
    server.when(is_summarizer, text("## Summary\nTwo errands run in the background."))
    server.when(
        is_main,
        reply(errand("A"), errand("B")),
        tool_use("read_file", {"path": "README.md"}, usage={"input_tokens": 180_000}),  # nearly full
        text("Waiting for both."),
        text("Got one."),
        text("Got the other."),
    )
    for name in "AB":
        server.when(
            lambda b, name=name: not offers_tool(b, "task") and first_user_text(b) == f"Errand {name}.",
            tool_use("read_file", {"path": "README.md"}, gate=release, gate_timeout=120),
            text(f"Errand {name}: the README says it is a demo."),
        )
    session, events = make_session()
    running_at_compaction: list[list[str]] = []

    def note_running(event: Event) -> None:
        if isinstance(event, Compacted):
            running_at_compaction.append([r.id for r in session.running_children])

    session.subscribe(note_running)

    assert (await session.send("Run two errands in the background")).text == "Waiting for both."
    assert running_at_compaction == [["sa-1", "sa-2"]]  # the main agent compacted while both ran
    release.set()
    await within(session.finish_background(), "both results read")

    assert_each_result_once_with_its_receipt(server, {"sa-1": "Errand A: the README", "sa-2": "Errand B: the README"})
    assert sorted(e.id for e in events.of(SubagentResultDelivered)) == ["sa-1", "sa-2"]
    server.assert_no_rejections()


async def test_a_result_that_ends_during_a_compaction_is_delivered_after_it_once_with_its_receipt(server, make_session):
    compacting, child_done = threading.Event(), threading.Event()

    def summarizer(body):  # the child ends while the summary is being written
        compacting.set()
        return text("## Summary\nOne errand runs in the background.", gate=child_done, gate_timeout=120)

    server.when(is_summarizer, summarizer)
    server.when(is_main, reply(errand("A")), text("Started it."), text("Errand A is done."))
    server.when(
        lambda b: not offers_tool(b, "task"),
        tool_use("read_file", {"path": "README.md"}),
        text("Errand A: the README says it is a demo.", gate=compacting, gate_timeout=120),
    )
    session, events = make_session()
    session.subscribe(lambda e: child_done.set() if isinstance(e, SubagentFinished) else None)
    assert (await session.send("Run an errand in the background")).text == "Started it."

    assert await within(session.compact(), "the compaction")  # /compact, as the user would type it
    await until(lambda: session.results_waiting, "sa-1's result waiting")
    [compacted] = events.of(Compacted)
    assert "Background subagent sa-1" not in json.dumps(compacted.messages)  # not delivered yet: still waiting
    result = await within(session.read_results(), "the turn that reads it")
    assert result is not None and result.text == "Errand A is done."

    assert_each_result_once_with_its_receipt(server, {"sa-1": "Errand A: the README"})
    assert [e.id for e in events.of(SubagentResultDelivered)] == ["sa-1"]
    assert await session.read_results() is None  # nothing is delivered twice
    server.assert_no_rejections()


async def test_a_result_waiting_through_a_compaction_and_a_restart_arrives_once_with_its_receipt(
    server, make_session, resume
):
    server.when(is_summarizer, text("## Summary\nOne errand ran in the background."))
    server.when(is_main, reply(errand("A")), text("Started it."), text("Errand A is done, after the restart."))
    server.when(
        lambda b: not offers_tool(b, "task"),
        tool_use("read_file", {"path": "README.md"}),
        text("Errand A: the README says it is a demo."),
    )
    session, _ = make_session()
    assert (await session.send("Run an errand in the background")).text == "Started it."
    await within(session.subagents.wait_background(), "the child to finish")
    assert session.results_waiting and await within(session.compact(), "the compaction")
    session.close()  # the process ends before the result was read

    again, events = resume(continue_=True)
    assert again.results_waiting
    result = await within(again.read_results(), "the turn that reads it")
    assert result is not None and result.text == "Errand A is done, after the restart."
    assert_each_result_once_with_its_receipt(server, {"sa-1": "Errand A: the README"})
    assert [e.id for e in events.of(SubagentResultDelivered)] == ["sa-1"]
    server.assert_no_rejections()
