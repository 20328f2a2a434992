"""Scrolling up a long resumed conversation: the part drawn above the view when it reaches the top is about a
screenful, and no frame shows the view moved by it."""

from __future__ import annotations

from typing import Any

from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.widgets.entries import PrunedMarker
from tests.ui.test_resume_cost import _exchanges
from tests.ui.test_tui_support import until

SIZE = (100, 30)


async def test_what_is_drawn_above_the_top_never_moves_the_view(server, make_session):
    session, _ = make_session()
    session.restored_events = _exchanges(30)  # 180 messages and calls: far more than a screen
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        view = app.conversation
        await until(pilot, lambda: view.max_scroll_y > 0, "a conversation taller than the view")
        first = view.children[1]
        assert isinstance(view.children[0], PrunedMarker)
        drawn, at_top = len(view.children), view.content_region.y + first.virtual_region.y  # its row at the top
        frames: list[tuple[int, int]] = []  # each layout's number of entries and row of the entry first before

        def laid_out(_: Any) -> None:
            frames.append((len(view.children), first.region.y))

        view.scroll_home(animate=False, immediate=True)
        app.screen.screen_layout_refresh_signal.subscribe(view, laid_out, immediate=True)
        await until(pilot, lambda: any(count > drawn for count, _ in frames), "the earlier part drawn")
        await pilot.pause()
        assert {row for _, row in frames} == {at_top}  # where the scroll to the top shows it, in every frame
        added = min(count for count, _ in frames if count > drawn) - drawn  # the first part drawn (then the next
        # part is drawn ahead, and what is far below hidden behind gaps: offscreen.py)
        assert 0 < added <= SIZE[1]  # about a screenful: what a page up at the top waits for
