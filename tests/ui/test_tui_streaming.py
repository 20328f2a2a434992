"""The TUI's sink merges a model's per-token text deltas, so the screen keeps up with a fast model,
without changing what is shown or its order."""

from __future__ import annotations

import threading

from agentcli.core.events import Event, Notice, TextDelta
from agentcli.ui.tui.sink import MergingSink
from agentcli.ui.tui.widgets.answer import AssistantEntry
from agentcli.ui.tui.widgets.entries import NoticeEntry
from tests import waiting
from tests.fakes.anthropic_server import reply, sse_events, text
from tests.ui.test_tui_support import SIZE, answer, plain, send, shown, until


def _flow() -> list[Event]:
    """Deltas of the main agent and of a child, interleaved, with a notice in between."""
    return [
        TextDelta(text="He"),
        TextDelta(text="llo"),
        TextDelta(text=", "),
        TextDelta(text="child ", agent_id="a1", parent_tool_use_id="t1"),
        TextDelta(text="says", agent_id="a1", parent_tool_use_id="t1"),
        TextDelta(text="world"),
        Notice(level="warning", text="careful"),
        TextDelta(text="!"),
        TextDelta(text="!"),
    ]


async def test_consecutive_deltas_of_one_agent_merge_and_any_other_event_flushes_them_first():
    posted: list[Event] = []
    sink = MergingSink(posted.append)
    for event in _flow():
        sink(event)
    await waiting.until(lambda: len(posted) == 5, "the last run of deltas to be flushed when the loop turns")
    assert [(type(e).__name__, e.agent_id, getattr(e, "text", "")) for e in posted] == [
        ("TextDelta", "main", "Hello, "),
        ("TextDelta", "a1", "child says"),
        ("TextDelta", "main", "world"),
        ("Notice", "main", "careful"),
        ("TextDelta", "main", "!!"),
    ]


async def test_the_merged_text_is_flushed_when_the_loop_turns_without_another_event():
    posted: list[Event] = []
    sink = MergingSink(posted.append)
    sink(TextDelta(text="a"))
    sink(TextDelta(text="b"))
    assert posted == []  # still merging this turn
    await waiting.until(lambda: posted, "the merged text to be flushed when the loop turns")
    assert [e.text for e in posted if isinstance(e, TextDelta)] == ["ab"]
    sink(TextDelta(text="c"))  # a new turn: a new run, flushed again
    await waiting.until(lambda: len(posted) == 2, "the next run to be flushed")
    assert [e.text for e in posted if isinstance(e, TextDelta)] == ["ab", "c"]


def test_without_an_event_loop_each_event_is_posted_as_it_comes():
    posted: list[Event] = []
    sink = MergingSink(posted.append)
    for event in _flow():
        sink(event)
    assert len(posted) == len(_flow())


async def test_a_flood_of_deltas_shows_the_whole_text_in_order_then_a_later_notice(tui):
    app = tui()
    pieces = [f"word{i} " for i in range(3000)]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for piece in pieces:
            app.deliver(TextDelta(text=piece))
        app.deliver(Notice(level="warning", text="after the answer"))
        await until(pilot, lambda: app.conversation.query(NoticeEntry).filter(".-warning"), "the notice to show")
        answers = list(app.conversation.query(AssistantEntry))
        assert len(answers) == 1
        assert answers[0].source == "".join(pieces)
        children = list(app.conversation.children)
        notice = next(c for c in children if isinstance(c, NoticeEntry) and "after the answer" in plain(c))
        assert children.index(answers[0]) < children.index(notice)


async def test_a_streamed_answer_from_the_model_reads_as_sent(server, tui):
    reply_text = "First line of **the answer**.\n\n" + " ".join(f"token{i}" for i in range(400))
    server.when(lambda body: True, text(reply_text))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "hi")
        answers = list(app.conversation.query(AssistantEntry))
        assert [a.source for a in answers] == [reply_text]


async def test_a_draft_cut_before_message_stop_is_replaced_by_the_answer_asked_for_again(server, tui):
    """A reply cut after a text block completed is asked for again whole (tests/e2e/test_cut_draft.py): the draft
    shows while it streams, and then the answer takes its place, not a second entry beside it."""
    base = reply("An almost complete answer.", "And a part never sent whole")
    names = [name for name, _ in sse_events(base, {"model": "m", "messages": []})]
    gate = threading.Event()  # the stream waits after the draft's block until the draft is on screen
    server.script(
        base.with_options(
            gate=gate,
            gate_after_events=names.index("content_block_stop") + 1,
            end_after_events=names.index("content_block_stop") + 3,
        ),
        text("The whole answer."),
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "question")
        await until(pilot, lambda: "An almost complete answer." in shown(app.conversation), "the draft to show")
        gate.set()
        await until(pilot, lambda: not app.busy, "the turn to end")
        await pilot.pause()
        assert [a.source for a in app.conversation.query(AssistantEntry)] == ["The whole answer."]
        assert "almost complete" not in shown(app.conversation)
