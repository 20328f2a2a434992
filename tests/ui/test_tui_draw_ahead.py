"""While a long resumed conversation's view rests, the screen above it and the first screen of what is drawn are
rendered ahead, so the frame of a page up or of a jump to the top renders no entry's lines afresh, a code block's
colours included (ui/tui/widgets/ahead.py); and what shows is laid out as a scroll lays it out, so that frame
repaints what moved, not the footer's keys or the prompt (ui/tui/widgets/history.py: ``History._tend``)."""

from __future__ import annotations

from typing import Any

from textual._styles_cache import StylesCache
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.widget import Widget
from textual.widgets import Footer

from agentcli.core.events import AssistantMessage
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.widgets import history
from tests.ui.test_resume_cost import _exchanges
from tests.ui.test_tui_support import until

SIZE = (100, 30)


async def test_a_page_up_and_a_jump_to_the_top_render_no_entry_afresh(server, make_session, monkeypatch):
    session, _ = make_session()
    session.restored_events = [  # 180 messages and calls: far more than a screen; each answer with a code block
        AssistantMessage(content=[{"type": "text", "text": f"{e.content[0]['text']}\n\n```python\nx = 1\n```"}])
        if isinstance(e, AssistantMessage)
        else e
        for e in _exchanges(30)
    ]
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        view = app.conversation
        await until(pilot, lambda: view.max_scroll_y > 0, "a conversation taller than the view")
        fresh: list[Widget] = []  # the widgets inside the conversation that rendered lines not rendered before
        footer = app.query_one(Footer)  # its keys: what a move leaves as it was (unlike the prompt, whose cursor
        repainted: list[Widget] = []  # blinks), and those of them the move's frame repainted
        render_widget = StylesCache.render_widget

        def counted(cache: StylesCache, widget: Widget, crop: Region) -> Any:
            before = len(cache._cache) if cache._width == widget.region.width else 0
            strips = render_widget(cache, widget, crop)
            if len(cache._cache) > before and view in widget.ancestors:
                fresh.append(widget)
            if footer in widget.ancestors:
                repainted.append(widget)
            return strips

        monkeypatch.setattr(StylesCache, "render_widget", counted)

        async def rest() -> None:
            """Let the view rest until it is tended (ahead.py: drawn ahead then)."""
            view.tend()  # (a scroll tends it too; this one makes sure a rest follows)
            await until(pilot, lambda: view._tending is None and not view._loading, "the view at rest, tended")
            await pilot.pause()  # and what it asked of the refresh after it done
            await app.wait_for_refresh()

        async def move(scroll: Any) -> list[Widget]:
            """Move after a rest; what the move's frame rendered afresh inside the conversation."""
            await rest()
            fresh.clear()
            repainted.clear()
            scroll()
            await app.wait_for_refresh()
            assert repainted == []
            return [w for w in fresh if not isinstance(w, ScrollBar)]

        height = view.scrollable_content_region.height
        while view.max_scroll_y <= 4 * height:  # earlier parts drawn, so that a page up from the end shows rows
            view.scroll_home(animate=False, immediate=True)  # no frame showed before
            await until(pilot, lambda: view.scroll_y > 0, "the earlier part drawn above the top")
        await rest()
        view.scroll_end(animate=False, immediate=True)
        assert await move(lambda: view.scroll_to(y=view.scroll_y - height, animate=False, immediate=True)) == []
        assert await move(lambda: view.scroll_home(animate=False, immediate=True)) == []


async def test_a_rest_whose_timer_fired_before_a_scroll_waits_for_the_next_rest(server, make_session, monkeypatch):
    """Under load the tend timer's tick can be queued when a move starts (a quarter second after a jump, the rest
    after it still running): the move's reset of the timer is then too late, and tending there drew ahead and laid out
    in the move's frame (20 ms of CPU instead of 7 for a jump back to the end, bench section session)."""
    session, _ = make_session()
    session.restored_events = _exchanges(30)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        view = app.conversation
        await until(pilot, lambda: view.max_scroll_y > 0, "a conversation taller than the view")
        await until(pilot, lambda: view._tending is None and view._kept is None, "the view at rest, tended")
        drawn: list[float] = []
        monkeypatch.setattr(history, "draw_ahead", lambda *_: drawn.append(view.scroll_y))
        view._tending = view.set_timer(60, view._tend)  # a timer that has fired, its tick queued: the scroll's
        view._tending.stop()  # reset no longer stops it
        view.scroll_to(y=view.scroll_y - 3, animate=False, immediate=True)
        view._tend()  # the queued tick, run in the move's frame
        assert drawn == []
        await until(pilot, lambda: drawn == [view.scroll_y], "drawn ahead once the view rests after the scroll")
