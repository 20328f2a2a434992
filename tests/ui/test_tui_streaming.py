"""The TUI's sink merges a model's per-token text deltas, so the screen keeps up with a fast model,
without changing what is shown or its order."""

from __future__ import annotations

from agentcli.core.events import Event, Notice, TextDelta
from agentcli.ui.tui.sink import MergingSink
from agentcli.ui.tui.widgets.conversation import AssistantEntry, NoticeEntry
from tests import waiting
from tests.fakes.anthropic_server import text
from tests.ui.test_tui_support import SIZE, answer, plain, until


def _flow() -> list[Event]:
    """Deltas of the main agent and of a child, interleaved, with a notice in between."""
    return [TextDelta(text="He"), TextDelta(text="llo"), TextDelta(text=", "),
            TextDelta(text="child ", agent_id="a1", parent_tool_use_id="t1"), TextDelta(text="says", agent_id="a1",
                                                                                         parent_tool_use_id="t1"),
            TextDelta(text="world"), Notice(level="warning", text="careful"), TextDelta(text="!"),
            TextDelta(text="!")]


async def test_consecutive_deltas_of_one_agent_merge_and_any_other_event_flushes_them_first():
    posted: list[Event] = []
    sink = MergingSink(posted.append)
    for event in _flow():
        sink(event)
    await waiting.until(lambda: len(posted) == 5, "the last run of deltas to be flushed when the loop turns")
    assert [(type(e).__name__, e.agent_id, getattr(e, "text", "")) for e in posted] == [
        ("TextDelta", "main", "Hello, "), ("TextDelta", "a1", "child says"), ("TextDelta", "main", "world"),
        ("Notice", "main", "careful"), ("TextDelta", "main", "!!")]


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
