"""A whole layout of a long conversation is done once, not twice (ui/tui/screens/layout.py): it asks for no second
layout for the virtual sizes it gave, and after a scroll's layout it arranges the screen once. Each was a whole
arrangement of every drawn widget more, in the rest after a page up drew the next part above."""

from __future__ import annotations

import time
from typing import Any

from textual.geometry import Size
from textual.widgets import Static

from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.screens.layout import VIRTUAL_SIZE, OneLayoutScreen
from agentcli.ui.tui.screens.transcript import TranscriptScreen
from agentcli.ui.view import Subagent
from tests.fakes.anthropic_server import text
from tests.ui.test_resume_cost import _exchanges
from tests.ui.test_tui_support import send, until

SIZE = (100, 30)


def counting_arrangements(screen: Any) -> list[bool]:
    """Record each arrangement of ``screen``'s widgets (True: of all of them, not only what shows)."""
    compositor, calls = screen._compositor, []
    arrange = compositor._arrange_root

    def counted(root: Any, size: Any, visible_only: bool = True) -> Any:
        calls.append(not visible_only)
        return arrange(root, size, visible_only)

    compositor._arrange_root = counted
    return calls


async def resumed(pilot: Any) -> Any:
    view = pilot.app.conversation
    await until(pilot, lambda: view.max_scroll_y > 0, "a conversation taller than the view")
    await pilot.pause()
    return view


async def test_a_whole_layout_asks_for_no_second_one(server, make_session):
    session, _ = make_session()
    session.restored_events = _exchanges(30)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await resumed(pilot)
        screen = app.screen
        assert isinstance(screen, OneLayoutScreen)
        screen._refresh_layout(Size(SIZE[0] - 20, SIZE[1]))  # narrower: every entry gets a new virtual size
        laid_out = list(screen._compositor.widgets)
        assert len(laid_out) > 20
        assert [w for w in laid_out if w._layout_required] == []  # (Textual's own: each asked for a layout again)
        screen._refresh_layout()  # (back to the app's size)


async def test_what_is_set_as_it_is_painted_still_asks_for_its_layout(server, make_session):
    session, _ = make_session()
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    seen: list[bool] = []

    class Painted(Static):
        def render_lines(self, crop: Any) -> Any:
            seen.append(VIRTUAL_SIZE._layout)  # a widget setting its virtual size here (as Textual's lists do)
            return super().render_lines(crop)

    async with app.run_test(size=SIZE) as pilot:
        await app.screen.mount(Painted("painted"))
        await until(pilot, lambda: seen, "the widget painted")
        seen.clear()
        app.screen._refresh_layout(Size(SIZE[0] - 20, SIZE[1]))  # a whole layout, then its painting
        assert seen and all(seen) and VIRTUAL_SIZE._layout


async def test_a_whole_layout_after_a_scroll_arranges_the_screen_once(server, make_session):
    session, _ = make_session()
    session.restored_events = _exchanges(30)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        view = await resumed(pilot)
        screen = app.screen
        calls = counting_arrangements(screen)
        screen._refresh_layout(scroll=True)  # as a scroll lays out: what shows only, the map of all marked stale
        screen._refresh_layout()  # a whole layout (it asks each resized widget its size)
        assert calls == [False, True]
        assert [c.region for c in view.children]  # every widget's place, from the map that layout built
        assert calls == [False, True]  # (Textual's own compositor arranged them all again here)


def test_a_subagents_transcript_is_such_a_screen_too():
    screen = TranscriptScreen(Subagent(id="a1", type="general", description="look"), now=time.monotonic)
    assert isinstance(screen, OneLayoutScreen) and screen._compositor.reflow.__name__ == "reflow_keeping_map"


async def test_a_move_after_tending_is_laid_out_as_a_scroll_once(server, make_session):
    """Tending's last step lays out what shows as a scroll does; a move that came after the pass laid it out so
    itself, and under load the step, run after that move's frame, cost the move a frame more."""
    session, _ = make_session()
    session.restored_events = _exchanges(30)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        view = await resumed(pilot)
        await until(pilot, lambda: not view._laying_out and view._tending is None, "the view tended and resting")
        asked: list[bool] = []
        refresh_scroll = view._refresh_scroll

        def counted() -> None:
            asked.append(True)
            refresh_scroll()

        view._refresh_scroll = counted
        for scrolled_since in (False, True):
            asked.clear()
            view._tended_at = time.monotonic()
            view._scrolled_at = view._tended_at + (1 if scrolled_since else -1)
            view._laying_out = 1
            view._lay_out_as_scrolled()
            assert asked == ([] if scrolled_since else [True])


async def test_the_conversation_that_follows_its_end_stays_there_when_the_prompt_grows(server, tui):
    """The conversation follows its end; a recalled or pasted text makes the prompt taller and the conversation
    shorter in one layout, which placed its end by its former height: its last rows were hidden behind the prompt
    until something else laid the screen out (Textual's second layout did, which the screen no longer asks for)."""
    server.script(text("\n\n".join(f"Paragraph {i}: " + "word " * 30 for i in range(12)) + "\n\nDone."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        view, prompt = app.conversation, app.prompt
        await send(pilot, "hi")
        await until(pilot, lambda: not app.busy and view.max_scroll_y > 0, "an answer taller than the view")
        await until(pilot, lambda: view.scroll_y == view.max_scroll_y, "the view at its end")
        height = view.size.height
        prompt.load_text("\n".join(f"line {i}" for i in range(15)))  # what recalling a long message does
        await until(pilot, lambda: view.size.height < height, "the prompt grown")
        await until(pilot, lambda: view.scroll_y == view.max_scroll_y, "the view still at its end")
        await pilot.pause()
        area = view.scrollable_content_region
        rows = [strip.text for strip in app.screen._compositor.render_strips()[area.y : area.bottom]]
        assert "Done." in "\n".join(rows)  # its last row, on screen
