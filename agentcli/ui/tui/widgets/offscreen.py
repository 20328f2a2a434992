"""A long conversation's history far off screen, stood in for by one blank ``Gap`` of its height per run of entries.

Each page or load of a scroll view lays out and composites every child it displays, with all their blocks (an
answer's Markdown, a tool call's lines), so with the whole history drawn a page cost more the more was drawn. Entries
more than ``HIDE_BEYOND`` screens from the view are hidden (``display: none``: layout and the compositor skip them)
and a gap as tall as the rows they took stands in for them, so the scrollbar and every row on screen stay where they
were. A scroll shows the entries of the gaps it brings into view before the frame is drawn (the same rows, so nothing
moves); once the view rests, those of the gaps within ``SHOW_WITHIN`` screens too, and the gaps go. Every entry shown
joins the next layout, so a move's frame shows only what it must: showing four screens there cost a jump 40-100 ms once
a few trips to the top and back had left gaps at both ends. The entries keep their state meanwhile (an expanded call, a
composed answer). Entries that may still change (a streaming answer, a running call or task, the focused one) are
never hidden: a gap's height is only right while what it stands for keeps its height. Nor is the first screen of
what is drawn: it is rendered ahead for a jump to the top (ahead.py), and hidden it was skipped there and rendered
afresh in that jump's frame. Nor is the last screen: a jump back to the end then shows no hidden entry, and needs no
whole layout (15-20 ms of CPU once trips to the top had hidden it; about 5 ms with it kept).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.geometry import Size
from textual.layout import DockArrangeResult, WidgetPlacement
from textual.widget import Widget

from .entries import PrunedMarker

HIDE_BEYOND = 5  # screens from the view: entries this far away are hidden behind a gap
SHOW_WITHIN = 3  # screens: a gap this near is shown again (less than HIDE_BEYOND, so paging to and fro hides nothing)
FEWEST = 4  # entries worth a gap (each stands for at most a screenful)


class Gap(Widget):
    """Blank rows in place of ``entries`` (hidden), as many as they took at ``width``."""

    DEFAULT_CSS = "Gap { height: auto; } Gap.-top { margin-top: 1; } Gap.-bottom { margin-bottom: 1; }"
    BLANK = True  # its rows are blank strips, not its styles rendered around an empty text

    def __init__(self, entries: list[Widget], rows: int, width: int) -> None:
        super().__init__()
        self.entries, self.rows, self.at_width = entries, rows, width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.rows

    def render(self) -> str:
        return ""

    def reveal(self) -> None:
        """Show its entries again, and take no rows from now on (in the same layout). It is removed later
        (``remove_revealed``): a removal asks for a layout of its own, a second one in a move's frame.

        Not by setting ``display``: that asks each widget's region to repaint it, and after a scroll's layout the first
        such question builds the map of every widget on the screen (about 10 ms in a move's frame). The entries are as
        they were hidden (never one that may change, at this width: ``on_resize``), so their lines need no repaint."""
        for entry in self.entries:
            if entry.parent is not None:
                _lay_out_as(entry, "block")
        _lay_out_as(self, "none")
        self.entries = []


def _lay_out_as(widget: Widget, display: str) -> None:
    """Give ``widget`` the ``display`` rule, with a layout and no repaint (``Gap.reveal``)."""
    if widget.styles.set_rule("display", display):
        widget.refresh(repaint=False, layout=True)


def reveal_near(
    history: Widget, arranged: DockArrangeResult | None, scroll_y: float, within: float = SHOW_WITHIN
) -> None:
    """Show the entries of each gap of ``history`` (laid out as ``arranged``) that shows at ``scroll_y``, or is
    ``within`` screens of it."""
    if arranged is None:
        return
    height = view_rows(history)
    top, bottom = scroll_y - within * height, scroll_y + height + within * height
    for placed in arranged.placements:
        if isinstance(placed.widget, Gap) and placed.region.bottom > top and placed.region.y < bottom:
            placed.widget.reveal()


def remove_revealed(history: Widget) -> None:
    """Remove the gaps whose entries show again (``Gap.reveal``)."""
    if revealed := [gap for gap in history.query_children(Gap) if not gap.entries]:
        history.remove_children(revealed)


def view_rows(history: Widget) -> int:
    """The rows ``history``'s view shows, from its latest layout: its ``scrollable_content_region`` asks the screen for
    its region, and after a scroll (which lays out only what shows) that builds the map of every widget on the
    screen, the whole history's included: a few milliseconds in the frame of a jump back to the end."""
    return history.container_size.height - history.scrollbar_size_horizontal


def reveal_all(history: Widget, among: Iterable[Widget] | None = None) -> None:
    """Show every hidden entry (among ``among``'s gaps), as before the gaps: the width changed, or some of them go."""
    gaps = list(history.query_children(Gap)) if among is None else [w for w in among if isinstance(w, Gap)]
    for gap in gaps:
        gap.reveal()
    if gaps:
        history.remove_children(gaps)


def hide_far(history: Widget, arranged: DockArrangeResult | None, changing: set[Widget]) -> None:
    """Hide the runs of entries of ``history`` (laid out as ``arranged``: after a frame) far from its view behind a gap
    each; never those ``changing``."""
    if arranged is None or not history.size.height:
        return
    height = history.scrollable_content_region.height
    top, bottom = history.scroll_y - HIDE_BEYOND * height, history.scroll_y + height + HIDE_BEYOND * height
    placements = list(arranged.placements)
    runs: list[tuple[int, int]] = []
    start: int | None = None
    top_entry = next((i for i, p in enumerate(placements) if not isinstance(p.widget, PrunedMarker)), 0)
    last_screen = arranged.total_region.bottom - height
    for index, placed in enumerate([*placements, None]):
        far = (
            placed is not None
            and index > top_entry  # never a gap at the top: the layout gives the first entry its margin, not a gap
            and placed.region.y >= height  # nor in the first screen, drawn ahead for a jump to the top (ahead.py)
            and placed.region.bottom <= last_screen  # nor in the last: a jump back to the end shows it as it is
            and (placed.region.bottom < top or placed.region.y > bottom)
            and not isinstance(placed.widget, (Gap, PrunedMarker))
            and placed.widget.parent is history
            and placed.widget not in changing
            and not placed.widget.has_focus_within
        )
        if far and start is None:
            start = index
        elif not far and start is not None:
            if index - start >= FEWEST:
                runs.append((start, index))
            start = None
    for first, end in runs:  # a gap at most a screenful tall, so coming back near it shows about a screenful
        while first < end:
            last = first + 1
            while last < end and placements[last].region.bottom - placements[first].region.y <= height:
                last += 1
            if last - first >= FEWEST and {placements[first].margin.top, placements[last - 1].margin.bottom} <= {0, 1}:
                _hide(history, placements[first:last])
            first = last


def _hide(history: Widget, run: list[WidgetPlacement]) -> None:
    """Hide the entries of ``run`` behind one gap as tall as they are from the first one's top to the last one's bottom,
    with the first one's top margin and the last one's bottom margin (0 or 1: the gap's classes), which the layout
    collapses with the margins next to the gap, entry or gap, as it did with the entries': the rows around it stay as
    they were whichever of its neighbours are hidden or shown meanwhile."""
    entries = [placed.widget for placed in run]
    gap = Gap(entries, run[-1].region.bottom - run[0].region.y, history.size.width)
    gap.set_class(run[0].margin.top == 1, "-top").set_class(run[-1].margin.bottom == 1, "-bottom")
    history.mount(gap, before=entries[0])  # in the DOM at once
    for entry in entries:
        entry.display = False
