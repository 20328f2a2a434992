"""A resumed session's conversation, drawn in part: its latest part first (before the session opens, from the
file's tail: ``preview``, kept by ``adopt``), then earlier parts as the view reaches the top of what is drawn,
about a screenful at a time (``load_earlier``), each drawn above it without moving the view (``arrange``). The
widgets are built by ``Conversation.apply`` from the events, each folded first into a view model of the replay."""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.scrollbar import ScrollBar
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from ....core.content import text_of as content_text
from ....core.events import (
    AssistantMessage,
    Event,
    TextDelta,
    TextReset,
    ToolCallFinished,
    ToolCallStarted,
    UserMessage,
)
from ...view import SessionView
from .ahead import draw_ahead
from .entries import PrunedMarker
from .offscreen import Gap, hide_far, remove_revealed, reveal_all, reveal_near

if TYPE_CHECKING:
    from .answer import AssistantEntry
    from .early_answer import EarlyAnswer
    from .tool_call import TaskEntry, ToolCallEntry


def answer_entry(text: str = "") -> AssistantEntry:
    from .answer import AssistantEntry

    return AssistantEntry(text)


def text_of(content: Any) -> str:
    return content_text(content, "\n\n")


AHEAD = 1.0  # screens: scrolling up nearer than this to the top of what is drawn draws the next part above it
TEND_AFTER = 0.05  # seconds the view rests after a scroll before it is tended (``History.tend``)


def tail_start(events: list[Event], widgets: int, rows: int = 0, *, likely: bool = False) -> int:
    """Where to start replaying so that about ``widgets`` messages and tool calls are drawn, or fewer once
    they are sure to take ``rows`` rows (0: no such bound): a message is at least two rows with its
    margin, a tool call one. ``likely``: once they are likely to, a message taking a row per line of its
    text and its margin (what the first frame of a resumed session draws; the rest follows it)."""
    seen = taken = 0
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if isinstance(event, ToolCallStarted):
            taken += 1
        elif isinstance(event, (AssistantMessage, UserMessage)) and (text := text_of(event.content).strip()):
            taken += 2 if not likely else text.count("\n") + 2
        else:
            continue
        seen += 1
        if seen >= widgets or rows and taken >= rows:
            return index
    return 0


def keep_drawn() -> None:
    """Once a part of the history is drawn (its blocks composed by the frame after it): where the process freezes
    what it keeps (the command line: core/model/sdk_import.py; not under tests), freeze it too. The collector's
    full passes scanned every object drawn so far, and each page drawn above made them longer: 160 to 180 ms,
    in the frame of a page up. What is drawn stays until the conversation is cleared (then it is not reclaimed:
    the price of never scanning it, until ``let_go_drawn``)."""
    if gc.get_freeze_count():
        gc.collect(1)  # the young garbage first, cheaply
        gc.freeze()


def let_go_drawn() -> None:
    """The conversation was cleared: what ``keep_drawn`` froze of it would never be reclaimed (a widget's parent
    and children hold each other, so only the collector frees them). Unfrozen, the collector frees it once Textual's
    caches let go of it too (the next layout); what lives on is frozen again when paging up next draws a part."""
    if gc.get_freeze_count():
        gc.unfreeze()


class History(VerticalScroll):
    """What ``Conversation`` draws of a resumed session's past events; the conversation builds the widgets."""

    BLANK = True  # its entries draw all it shows; its own rows (padding, the space between them) are blank strips

    tools: dict[str, ToolCallEntry]
    tasks: dict[str, TaskEntry]
    _retry: Static | None  # the line of the run of retries going on now
    _batch: list[Widget] | None  # replaying: widgets mounted together at the end
    _replaying: SessionView | None
    _replayed: list[Event]  # a resumed session's events; those before _drawn_from are not drawn
    _drawn_from: int  # yet: scrolling to the top draws them (load_earlier)
    _earlier_limit: int
    _preview: tuple[list[Event], bool] | None  # a resumed session's tail, drawn before it opened
    _unfilled: tuple[list[Event], int, int] | None  # what its first frame left to draw next
    _early: list[EarlyAnswer] | None  # its first frame's answers drawn as text (early_answer.py),
    _unsettled: list[EarlyAnswer]  # while it is built, and until they are Markdown entries
    _arranged: DockArrangeResult | None  # its latest layout, and an entry to keep in place
    _kept: tuple[Widget, int | None] | None  # through the layouts until what is drawn above it settles
    _tending: Timer | None = None  # a pass drawing ahead and hiding what is far off screen is due (``tend``)
    _laying_out = 0  # passes whose last step, laying out what shows as a scroll does, is due (``_tend``)
    _watching_layouts = False  # resting since that step: a whole layout is followed by a scroll's (``_laid_out``)
    _paging = False  # scrolled up to the top of what was drawn: from then on, ``tend`` after each scroll
    _replayed_any = False  # past events drawn, never shown yet: worth drawing ahead (ahead.py; live entries were shown)
    _upward = False  # the latest scroll was up
    _scrolled_at = 0.0  # time.monotonic() of the latest scroll: the view rests from then on
    _tended_at = 0.0  # and of the latest pass of tending (``_tend``)
    _loading = False  # load_earlier is drawing

    async def apply(self, event: Event) -> None:
        raise NotImplementedError

    async def add(self, *widgets: Widget) -> None:
        raise NotImplementedError

    async def write(self, text: str) -> None:
        raise NotImplementedError

    async def clear(self) -> None:
        raise NotImplementedError

    def retried(self, view: SessionView) -> None:
        raise NotImplementedError

    async def finish_tool(self, event: ToolCallFinished) -> None:
        raise NotImplementedError

    async def replay(self, events: Iterable[Event], *, limit: int | None = None) -> None:
        """Show events that already happened: whole messages instead of their deltas.

        With ``limit``, only the latest events that make about that many widgets are drawn; scrolling
        to the top draws the next ``limit`` earlier ones (``load_earlier``).
        """
        events = list(events)
        self._replayed_any = True
        if limit is not None:  # enough to fill the screen and scroll up from (then earlier parts load)
            start = tail_start(events, limit, rows=self.app.size.height + 1)
            if start:
                await self.mount(PrunedMarker())
            self._replayed, self._drawn_from, self._earlier_limit = events, start, limit
            events = events[start:]
        pending = await self._rebuild(events)
        await self.add(*self._batch_done())
        if pending:  # the message being written right now
            await self.write("".join(pending))

    async def preview(self, events: list[Event], *, whole: bool, limit: int) -> None:
        """Draw the latest ``events`` of a resumed session before it opens (tui/preview.py: its file's tail;
        ``whole``: the whole file); ``adopt`` keeps them once the session is open. The first frame holds
        what likely fills the screen, the rest of what ``replay`` would draw comes right after it, above;
        nothing earlier loads meanwhile: the session holds the earlier part."""
        self._replayed_any = True
        start = tail_start(events, limit, rows=self.app.size.height + 1)
        first = max(start, tail_start(events, limit, rows=self.app.size.height + 1, likely=True))
        if events and isinstance(events[-1], TextDelta):  # a message still being written: all in one go (what
            first = start  # is drawn above it later must not end its stream)
        self._replayed, self._drawn_from, self._earlier_limit = events, start, limit
        self._preview, self._early = (events, whole), []
        pending = await self._rebuild(events[first:])  # (waits on nothing: mounted next, in one go with the
        self._unsettled, self._early = self._early, None  # marker, so the first frame shows them all)
        await self.add(*([PrunedMarker()] if start or not whole else []), *self._batch_done())
        if pending:  # the message being written when the session was left
            await self.write("".join(pending))
        if first > start:
            self._unfilled = (events, start, first)
        if self._unfilled or self._unsettled:
            self.screen.screen_layout_refresh_signal.subscribe(self, self.painted)

    def _whole_answer(self, text: str) -> Widget:
        """A whole answer's entry; in a preview's first frame, drawn as text where it can be (early_answer.py)."""
        if self._early is not None and not self.app.native_ansi_color:
            from .early_answer import EarlyAnswer, blocks

            if (found := blocks(text)) is not None:
                self._early.append(EarlyAnswer(text, found))
                return self._early[-1]
        return answer_entry(text)

    def painted(self, screen: object = None) -> None:
        """After a frame (a screen's layout is drawn, then its signal posted; the app's first frame: Ready):
        once the preview's first frame is out, draw its answers as Markdown and the rest of it."""
        if self._unfilled is None and not self._unsettled:
            self.screen.screen_layout_refresh_signal.unsubscribe(self)
        elif self.children and self.children[-1].region:  # laid out, so drawn
            self.screen.screen_layout_refresh_signal.unsubscribe(self)
            self.call_later(self._after_first_frame)

    async def _after_first_frame(self) -> None:
        await self._settle()
        await self._fill_up()
        self.tend()  # once it rests, draw ahead what a move shows next (ahead.py)

    async def _settle(self) -> None:
        """Swap the answers a preview's first frame drew as text for their Markdown entries, each in its place
        and all in one frame (they take the same rows)."""
        early, self._unsettled = [e for e in self._unsettled if e.parent is self], []
        entries = [answer_entry(e.text) for e in early]
        for old, new in zip(early, entries, strict=True):
            new.display = False
            await self.mount(new, before=old)
        for old, new in zip(early, entries, strict=True):
            old.display, new.display = False, True
        if early:
            await self.remove_children(early)

    async def _fill_up(self) -> None:
        """After the first frame of a preview: draw the rest of the screenful above what it drew (the view
        is at the bottom, and stays there)."""
        if self._unfilled is None:  # done, or cleared meanwhile
            return
        (events, start, end), self._unfilled = self._unfilled, None
        await self._draw_above(events, start, end)

    async def adopt(self, events: list[Event]) -> bool:
        """The session opened with ``events``: keep the drawn preview if they end with the events it drew
        (and have no earlier ones if it drew the whole file), and draw the earlier part on scrolling up as
        ``replay`` does; otherwise clear it (the caller draws ``events``). False when nothing is kept."""
        if self._preview is None:
            return False
        (tail, whole), self._preview = self._preview, None
        offset = len(events) - len(tail)
        if offset < 0 or (whole and offset) or events[offset:] != tail or self.tasks:  # a task's line shows
            await self.clear()  # its child's state, which the session brings
            return False
        await self._after_first_frame()
        self._replayed, self._drawn_from = events, offset + self._drawn_from
        if not self._drawn_from:
            self._replayed = []
            await self.query(PrunedMarker).remove()
        elif self.scroll_y <= 0 < self.max_scroll_y:  # scrolled to the top meanwhile
            self.call_later(self.load_earlier)
        return True

    async def _draw_above(self, events: list[Event], start: int, end: int) -> list[Widget]:
        """Draw ``events[start:end]`` above what is drawn (from ``end`` on); returns the widgets it mounted."""
        live, self._retry = self._retry, None  # a run of retries going on now keeps its line
        replayed = SessionView.replaying(events)
        await self._rebuild(events[start:end], replayed)
        for event in events[end:]:  # calls started above the old top that finished below it, the run of retries
            if self._retry is not None:  # it left going on
                replayed.apply(event, 0.0)
                self.retried(replayed)
            if isinstance(event, ToolCallFinished) and event.id in self.tools and self.tools[event.id].result is None:
                await self.finish_tool(event)
        self._retry = live
        widgets = self._batch_done()
        first = next((c for c in self.children if not isinstance(c, PrunedMarker)), None)
        if widgets and first is not None:
            await self._keeping_place(first, self.mount_all(widgets, before=first))
        elif widgets:
            await self.mount_all(widgets)
        return widgets

    async def _rebuild(self, events: list[Event], view: SessionView | None = None) -> list[str]:
        """Build the widgets of past events into the batch (``_batch_done`` hands them over), each folded first
        into ``view`` (by default a fresh one); returns the text deltas of a message still being written at the end."""
        pending: list[str] = []
        self._batch, self._replaying = [], view if view is not None else SessionView.replaying(events)
        try:
            for event in events:
                self._replaying.apply(event, 0.0)
                if isinstance(event, TextDelta):
                    self.retried(self._replaying)  # its text is drawn whole, with its message
                    pending.append(event.text)
                    continue
                if isinstance(event, (AssistantMessage, TextReset)):
                    pending.clear()
                await self.apply(event)
        except BaseException:
            self._batch = None
            raise
        finally:
            self._replaying = None
        return pending

    def _batch_done(self) -> list[Widget]:
        batch, self._batch = self._batch or [], None
        return batch

    def watch_scroll_y(self, old: float, new: float) -> None:
        self.stop_watching_layouts()
        if self._paging:
            reveal_near(self, self._arranged, new, within=0)  # before the frame that shows it: only what it shows
        super().watch_scroll_y(old, new)
        if new <= 0 < old and self._drawn_from:
            self._paging = True  # and the next part is drawn once the view rests (``tend``), after the frame
        self._upward, self._scrolled_at = new < old, time.monotonic()
        if self._paging or self._replayed_any:
            self.tend()

    def changing(self) -> set[Widget]:
        """The entries that may still change their height: never hidden behind a gap (offscreen.py)."""
        running = [call for call in self.tools.values() if call.result is None]
        return {*running, *self.tasks.values(), *self._unsettled, *([self._retry] if self._retry else [])}

    def tend(self) -> None:
        """Once the view rests ``TEND_AFTER`` a scroll (after the frame that shows it, so no move waits for this): render
        ahead the lines the next move likely shows (ahead.py); and once scrolling up has drawn earlier parts, show the
        hidden history near the view and hide what is far from it (offscreen.py), and scrolling up near the top of what
        is drawn, draw the next part above it (so a page up after it need not wait for it)."""
        if self._tending is not None:
            self._tending.reset()  # not while the view is still moving: once it rests
        else:
            self._tending = self.set_timer(TEND_AFTER, self._tend)

    def _tend(self) -> None:
        """Last, lay out what shows as a scroll does (after the refresh of what this did): Textual repaints only what a
        scroll moved by comparing with the latest such layout, and after a whole layout (what drawing earlier parts,
        hiding or rendering ahead off screen leaves) there is none, so the next move repainted the whole screen (the
        prompt, the status bar, the footer): now that repaint happens here, while the view rests."""
        self._tending = None
        if self._kept is not None or self._unfilled is not None or self._unsettled:
            self.tend()  # drawing above, or the preview's first frame's rest: the layout is not final
            return
        if time.monotonic() - self._scrolled_at < TEND_AFTER / 2:  # a scroll came after the timer fired (its tick
            self.tend()  # queued, too late to reset): tended now, this would draw ahead and lay out in the move's frame
            return
        if self._paging:
            reveal_near(self, self._arranged, self.scroll_y)  # what the next moves likely show
            remove_revealed(self)
            hide_far(self, self._arranged, self.changing())
            if self._upward and self._drawn_from and self.scroll_y < AHEAD * self.scrollable_content_region.height:
                self.call_later(self.load_earlier)  # (after drawing ahead below: the next page shows that first)
        if self._replayed_any:  # (what a live session drew was shown as it came, so its lines are cached)
            draw_ahead(self, self._arranged)
        self._tended_at = time.monotonic()
        self._laying_out += 1  # once the gaps hide_far mounted are in (each mount's wait for them, queued first, asks
        self.call_next(self.call_after_refresh, self._lay_out_as_scrolled)  # for their layout), after that layout

    def _lay_out_as_scrolled(self) -> None:
        """The last step of ``_tend``: lay out what shows as a scroll lays it out. Asked right after the refresh of what
        tending did, a busy machine laid out the gaps it mounted after that, or in the same layout as the scroll, which
        a whole layout then stood for: the next move repainted the whole screen (its footer's keys included)."""
        self._laying_out -= 1
        if not self._laying_out:  # (a later pass's does it, after what that pass did)
            if self._scrolled_at < self._tended_at:  # else the view moved since, and the rest after that move tends
                self._refresh_scroll()  # it again (watch_scroll_y): now, this cost the move a frame more (under load)
            if not self._watching_layouts:
                self._watching_layouts = True
                self.screen.screen_layout_refresh_signal.subscribe(self, self._laid_out)

    def _laid_out(self, screen: object = None) -> None:
        """After a layout of the screen while the view rests: if it was a whole one, lay out as a scroll again. What
        tending mounted asks for more layouts after the one its mount asked for (a gap asks for its own once its task
        runs), and under load those came after the scroll's, which then was not the latest: Textual keeps the map of what
        shows, which the next move's frame compares with, only from a scroll's layout."""
        if self._watching_layouts and self.screen._compositor._visible_map is None:
            self._refresh_scroll()

    def stop_watching_layouts(self) -> None:
        """The view moves (its next rest lays it out), or the conversation goes on (its layouts are its own)."""
        if self._watching_layouts:
            self._watching_layouts = False
            self.screen.screen_layout_refresh_signal.unsubscribe(self)

    def on_resize(self) -> None:
        if any(gap.at_width != self.size.width for gap in self.query_children(Gap)):
            reveal_all(self)  # their rows at another width are not known

    async def load_earlier(self) -> None:
        """Draw the next part of a resumed session above what is shown, about a screenful (drawing it is what a page
        up at the top waits for), keeping the view where it is (``arrange``)."""
        end = self._drawn_from
        if not end or self._preview is not None or self._loading:
            return
        self._loading = True
        try:
            await self._load_earlier(end)
        finally:
            self._loading = False

    async def _load_earlier(self, end: int) -> None:
        start = self._drawn_from = tail_start(self._replayed[:end], self._earlier_limit, self.size.height, likely=True)
        await self._draw_above(self._replayed, start, end)
        self.call_after_refresh(keep_drawn)
        if self._paging:
            self.tend()  # the part before it too, while the view is still near the top
        if not self._drawn_from:
            self._replayed = []
            first = next((c for c in self.children if not isinstance(c, PrunedMarker)), None)
            gone = self.query(PrunedMarker).remove()  # its line too
            await (self._keeping_place(first, gone) if first is not None else gone)

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Lay out the entries; while entries drawn above what the view shows settle (``_keeping_place``), scroll by
        as much as they move it in the same layout, so no frame shows the view moved (a scroll after the frame did)."""
        arranged = super().arrange(size, optimal)
        if self._kept is not None and arranged is not self._arranged:
            entry, was = self._kept
            now = next((p.region.y for p in arranged.placements if p.widget is entry), None)
            if now is not None and was is not None and now != was:
                y = self.scroll_y + now - was
                self.set_reactive(VerticalScroll.scroll_y, y)
                self.set_reactive(VerticalScroll.scroll_target_y, y)
                self.vertical_scrollbar.set_reactive(ScrollBar.position, y)
            self._kept = (entry, was if now is None else now)
        self._arranged = arranged
        return arranged

    async def _keeping_place(self, entry: Widget, drawing: Awaitable[Any]) -> None:
        """Draw above ``entry`` (await ``drawing``) keeping it where the view shows it, whatever what is drawn moves
        it by until the frame after it is drawn (its answers' blocks are composed by then): ``arrange``."""
        if self._kept is None:
            placed = self._arranged.placements if self._arranged is not None else []
            self._kept = (entry, next((p.region.y for p in placed if p.widget is entry), None))
        await drawing
        self.call_after_refresh(self._release_place)

    def _release_place(self) -> None:
        self._kept = None
