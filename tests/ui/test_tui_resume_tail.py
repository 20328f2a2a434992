"""A long resumed session draws only its latest part; scrolling to the top draws the part before it."""

from __future__ import annotations

from agentcli.core.events import AssistantMessage, Event, ToolCallFinished, ToolCallStarted, UserMessage
from agentcli.ui.tui.app import RESUME_WIDGETS, make_app
from agentcli.ui.tui.widgets.entries import PrunedMarker
from agentcli.ui.tui.widgets.offscreen import Gap
from agentcli.ui.tui.widgets.prompt import PromptInput
from agentcli.ui.tui.widgets.tool_call import ToolCallEntry
from tests.ui.test_tui_support import SIZE, plain, until


def _history(exchanges: int) -> list[Event]:
    events: list[Event] = []
    for n in range(exchanges):
        events += [
            UserMessage(content=[{"type": "text", "text": f"question {n}"}]),
            ToolCallStarted(id=f"a{n}", name="grep", input={"pattern": f"p{n}"}, summary=f"p{n}"),
            ToolCallStarted(id=f"b{n}", name="glob", input={"pattern": f"g{n}"}, summary=f"g{n}"),
            ToolCallFinished(id=f"a{n}", name="grep", output=f"found {n}", is_error=False, seconds=-1.0),
            ToolCallFinished(id=f"b{n}", name="glob", output=f"files {n}", is_error=False, seconds=-1.0),
            AssistantMessage(content=[{"type": "text", "text": f"answer {n}"}]),
        ]
    return events


def _texts(app) -> list[str]:
    return [
        plain(c).splitlines()[0] for c in app.conversation.children if not isinstance(c, (PrunedMarker, Gap))
    ]  # (a gap's entries are
    # children too, hidden)


async def test_scrolling_to_the_top_draws_earlier_messages_in_order_until_the_first(server, make_session):
    session, _ = make_session()
    session.restored_events = _history(60)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.focused, PromptInput)
        view = app.conversation
        assert len(view.children) <= RESUME_WIDGETS + 1
        assert isinstance(view.children[0], PrunedMarker)
        for _ in range(20):
            if not view.query(PrunedMarker):
                break
            drawn = len(view.children)
            view.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            view.scroll_home(animate=False, immediate=True)
            await until(
                pilot,
                lambda: len(view.children) > drawn or not view.query(PrunedMarker),
                "earlier messages to be drawn above",
            )
            await until(
                pilot,  # the reader's place is kept, below what was added (unless the part drawn ahead of the
                lambda: view.scroll_y > 0 or not view.query(PrunedMarker),  # last page up was the first)
                "the view to stay on what the reader was looking at",
            )
        assert not view.query(PrunedMarker)
        texts = _texts(app)
        assert texts[0] == "you question 0"
        questions = [t for t in texts if t.startswith("you question")]
        assert questions == [f"you question {n}" for n in range(60)]
        assert plain(view.children[-1]) == "answer 59"
        unfinished = [e.call.id for e in view.query(ToolCallEntry) if e.result is None]
        assert unfinished == []  # calls drawn later still got their outputs
