"""Paging up a long resumed conversation: the next part is drawn ahead of the view, what is far below it is hidden
behind gaps of its rows (so a page costs the same however much is drawn), and coming back shows it again in the
same rows, with no frame showing a gap (ui/tui/widgets/offscreen.py)."""

from __future__ import annotations

from typing import Any

from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.widgets.entries import PrunedMarker
from agentcli.ui.tui.widgets.history import AHEAD, keep_drawn
from agentcli.ui.tui.widgets.offscreen import HIDE_BEYOND, SHOW_WITHIN, Gap, reveal_all, view_rows
from tests.ui.test_resume_cost import _exchanges
from tests.ui.test_tui_support import until

SIZE = (100, 30)


async def test_history_far_below_is_hidden_behind_gaps_and_shown_again_in_its_rows(server, make_session):
    session, _ = make_session()
    session.restored_events = _exchanges(80)  # 480 messages and calls: many screens
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        view = app.conversation
        await until(pilot, lambda: view.max_scroll_y > 0, "a conversation taller than the view")
        await pilot.pause()

        def screen() -> list[str]:  # the conversation's rows on screen (its scrollbar aside: more is drawn above)
            area = view.scrollable_content_region
            lines = app.screen._compositor.render_strips()[area.y : area.bottom]
            return [strip.text[area.x : area.right] for strip in lines]

        def entries() -> list[Any]:
            return [c for c in view.children if not isinstance(c, (Gap, PrunedMarker))]

        at_end, opened = screen(), len(entries())
        shown_gaps: list[int] = []  # each layout: the rows of gaps inside the view (none may be)
        layouts = [0]

        def laid_out(_: Any) -> None:
            layouts[0] += 1
            shown = view.content_region
            shown_gaps.extend(
                g.region.height for g in view.query_children(Gap) if g.display and g.region.overlaps(shown)
            )

        # (under the app: the view drops what is subscribed under it each time it moves, History.stop_watching_layouts)
        app.screen.screen_layout_refresh_signal.subscribe(app, laid_out, immediate=True)
        height = view.scrollable_content_region.height
        assert view_rows(view) == height  # what a scroll reads instead (not building the whole screen's map)

        def ahead() -> bool:  # at least a screen drawn above the view, or all of it
            return view.scroll_y >= AHEAD * height or not view.query(PrunedMarker)

        view.scroll_home(animate=False, immediate=True)
        await until(pilot, lambda: len(entries()) > opened, "the earlier part drawn on reaching the top")
        await until(pilot, ahead, "the part before it drawn ahead, with no scroll")
        bound = (2 * HIDE_BEYOND + 4) * height  # the rows laid out: the view, five screens each side, part gaps
        for _ in range(60):
            if view.virtual_size.height > bound + 3 * height:
                break
            view.scroll_to(y=view.scroll_y - height, animate=False, immediate=True)  # a page up
            await until(pilot, ahead, "the next part drawn ahead")

        def laid_out_rows() -> int:
            return view.virtual_size.height - sum(g.rows for g in view.query_children(Gap) if g.display)

        assert view.virtual_size.height > bound + 3 * height
        await until(pilot, lambda: laid_out_rows() <= bound, "the entries far below hidden")
        hidden = [e for e in entries() if not e.display]
        assert hidden and all(e in hidden for g in view.query_children(Gap) for e in g.entries)
        view.scroll_end(animate=False, immediate=True)
        await until(pilot, lambda: screen() == at_end, "the end shown again as it was")

        def hidden_above() -> bool:
            return any(g.display and g.region.bottom <= view.region.y for g in view.query_children(Gap))

        await until(pilot, hidden_above, "the entries far above hidden")
        await pilot.pause()
        assert screen() == at_end
        assert layouts[0] > 10 and shown_gaps == []  # and no frame showed a gap in the view
        rows = view.virtual_size.height
        reveal_all(view)
        await until(pilot, lambda: not view.query_children(Gap), "every gap gone")
        await pilot.pause()
        assert view.virtual_size.height == rows  # each gap had exactly the rows of what it stood for


async def _paged_up(pilot: Any, view: Any, screens: int) -> int:
    """From the end of a long resumed conversation, jump to the top and page up until ``screens`` screens are drawn
    (or all of it), each part drawn ahead before the next page; what is far below is hidden behind gaps meanwhile.
    Returns the view's height."""
    await until(pilot, lambda: view.max_scroll_y > 0, "a conversation taller than the view")
    height: int = view.scrollable_content_region.height

    def ahead() -> bool:
        return bool(view.scroll_y >= AHEAD * height or not view.query(PrunedMarker))

    view.scroll_home(animate=False, immediate=True)
    await until(pilot, ahead, "the earlier part drawn ahead")
    while view.virtual_size.height < screens * height and view.query(PrunedMarker):
        view.scroll_to(y=view.scroll_y - height, animate=False, immediate=True)  # a page up
        await until(pilot, ahead, "the next part drawn ahead")
    return height


async def test_a_jump_shows_only_the_gaps_in_view_and_the_rest_shows_those_near_it(server, make_session):
    """A jump's frame lays out only the hidden entries it shows: every entry shown joins that layout, and showing the
    gaps within SHOW_WITHIN screens there too cost a jump back to the end 40-100 ms once trips to the top had left
    gaps. Once the view rests, those near it are shown, and the gaps shown are removed. The last screen is never
    hidden."""
    session, _ = make_session()
    session.restored_events = _exchanges(80)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        view = app.conversation
        height = await _paged_up(pilot, view, 2 * HIDE_BEYOND + SHOW_WITHIN + 4)

        def near_end() -> list[Gap]:  # displayed gaps in the last screen or SHOW_WITHIN screens above it
            end = view.max_scroll_y
            return [
                g
                for g in view.query_children(Gap)
                if g.display and g.virtual_region.bottom > end - SHOW_WITHIN * height
            ]

        await until(pilot, lambda: len(near_end()) > 1, "gaps near the end, hidden far below the view")
        last_screen = view.max_scroll_y  # never hidden: a jump to the end shows it as it is, with no whole layout
        assert all(g.virtual_region.bottom <= last_screen for g in view.query_children(Gap) if g.display)
        in_frame: list[tuple[int, int]] = []  # each layout until the rest: (gaps in the view, gaps near it)

        def laid_out(_: Any) -> None:
            if view.scroll_y == view.max_scroll_y:
                in_view = [g for g in near_end() if g.virtual_region.bottom > view.scroll_y]
                in_frame.append((len(in_view), len(near_end()) - len(in_view)))

        view.scroll_end(animate=False, immediate=True)
        app.screen.screen_layout_refresh_signal.subscribe(app, laid_out, immediate=True)
        await until(pilot, lambda: bool(in_frame), "the jump's frame laid out")
        assert in_frame[0][0] == 0, "a gap showed in the view"
        assert in_frame[0][1] > 0, "the jump's frame showed the gaps near the view too"
        await until(pilot, lambda: not near_end(), "the gaps near the view shown once it rests")
        await until(pilot, lambda: all(g.entries for g in view.query_children(Gap)), "the gaps shown removed")


async def test_clearing_frees_the_history_frozen_when_it_was_drawn(server, make_session):
    """Where the process freezes what it keeps (the command line does; tests do not), each part drawn by paging
    up is frozen too (history.keep_drawn): /clear must let the collector free it again, or it leaks."""
    import gc
    import weakref

    session, _ = make_session()
    session.restored_events = _exchanges(20)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    gc.freeze()  # as sdk_import does after startup
    try:
        async with app.run_test(size=SIZE) as pilot:
            view = app.conversation
            await until(pilot, lambda: len(view.children) > 3, "the history drawn")
            keep_drawn()
            drawn = [weakref.ref(child) for child in view.children]
            await view.clear()
            await view.add_user("and now?")  # the next layout: Textual's caches let go of the cleared entries
            await until(pilot, lambda: any(r() is None for r in drawn) or not gc.get_freeze_count(), "the let-go")
            for _ in range(3):
                await pilot.pause()
            gc.collect()
            assert not [r for r in drawn if r() is not None], "the cleared history is kept (frozen) for good"
    finally:
        gc.unfreeze()


async def test_a_gap_shown_beside_one_still_hidden_keeps_the_rows_around_it(server, make_session):
    """A gap shown again while the one above it is still hidden (paging back through gaps hidden on different trips)
    must take the rows it took: the margin between a user's message and the answer above it is counted once, whichever
    of the two is hidden. Counted twice, the history grew a row once the view rested, and what showed moved."""
    session, _ = make_session()
    session.restored_events = _exchanges(80)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        view = app.conversation
        height = await _paged_up(pilot, view, 2 * HIDE_BEYOND + SHOW_WITHIN + 6)

        def rested() -> bool:
            shown = view.content_region
            in_view = [g for g in view.query_children(Gap) if g.display and g.region.overlaps(shown)]
            return view._tending is None and not view._laying_out and view._kept is None and not in_view

        for jump in [view.scroll_end, view.scroll_home] * 4 + [view.scroll_end]:  # gaps hidden on each trip
            jump(animate=False, immediate=True)
            await until(pilot, rested, "the view at rest")
        rows = view.virtual_size.height
        for _ in range(12):  # paging up from the end shows the gaps hidden on different trips, one beside another
            view.scroll_to(y=view.scroll_y - height, animate=False, immediate=True)
            await until(pilot, rested, "the view at rest")
            await pilot.pause()
            await until(pilot, rested, "the view at rest")
            assert view.virtual_size.height == rows, f"at {view.scroll_y}: the history took another row count"
