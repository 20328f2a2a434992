"""While a long resumed conversation's view rests, the screen above it and the first screen of what is drawn are
rendered ahead, so the frame of a page up or of a jump to the top renders no entry's lines afresh, a code block's
colours included (ui/tui/widgets/ahead.py); and what shows is laid out as a scroll lays it out, so that frame
repaints what moved, not the footer's keys or the prompt (ui/tui/widgets/history.py: ``History._lay_out_as_scrolled``),
also when the gaps a rest hides far entries behind are mounted after the frame that follows it, as under load."""

from __future__ import annotations

from typing import Any

import pytest
from textual._styles_cache import StylesCache
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.widget import Widget
from textual.widgets import Footer

from agentcli.core.events import AssistantMessage
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.widgets import history, offscreen
from tests.ui.test_resume_cost import _exchanges
from tests.ui.test_tui_support import until

SIZE = (100, 30)


class LateGap(offscreen.Gap):
    """A gap whose mount starts only after the frame that follows hiding the entries it stands for, as on a busy
    machine (then it runs as any gap's)."""

    async def _pre_process(self) -> bool:
        await self.app.wait_for_refresh()
        return await super()._pre_process()


@pytest.mark.parametrize("gap", [offscreen.Gap, LateGap])
async def test_a_page_up_and_a_jump_to_the_top_render_no_entry_afresh(server, make_session, monkeypatch, gap):
    monkeypatch.setattr(offscreen, "Gap", gap)  # (hide_far's gaps; what finds them also finds a LateGap)
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

        def tended() -> bool:  # no pass due, running or queued (a load it started is loading, or it tends again)
            return view._tending is None and not view._loading and not view._laying_out

        async def rest() -> None:
            """Let the view rest until it is tended (ahead.py: drawn ahead then) and what shows is laid out as a scroll
            lays it out, the layout the move's frame compares with (``History._lay_out_as_scrolled``: a whole layout
            leaves Textual's compositor no map of what shows)."""
            view.tend()  # (a scroll tends it too; this one makes sure a rest follows)
            await until(pilot, tended, "the view at rest, tended")
            await until(
                pilot, lambda: app.screen._compositor._visible_map is not None, "what shows laid out as scrolled"
            )
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
        # Earlier parts drawn, so that a page up from the end shows rows no frame showed before, and more than seven
        # screens of them, so that the rest at the end finds the first screen farther than hide_far's five (offscreen.py:
        # hidden there, the jump to the top rendered it afresh; with four screens drawn that went unseen).
        while view.max_scroll_y <= 7 * height:
            view.scroll_home(animate=False, immediate=True)
            await until(pilot, lambda: view.scroll_y > 0, "the earlier part drawn above the top")
        await rest()
        view.scroll_end(animate=False, immediate=True)
        assert await move(lambda: view.scroll_to(y=view.scroll_y - height, animate=False, immediate=True)) == []
        assert await move(lambda: view.scroll_home(animate=False, immediate=True)) == []
        await rest()  # (the jump's rest may mount gaps: a LateGap waiting for a frame as the app closes waits forever)


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
