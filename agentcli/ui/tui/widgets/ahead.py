"""A long conversation's next screens drawn ahead while the view rests, so the move that shows them only composites.

The first time an entry shows, Textual renders its lines (an answer's Markdown blocks, a tool call's bar and text) in
the frame of the move that shows it, and keeps them in each widget's line cache until the widget changes: the
frame of a page up or a jump to the top drew about a screenful afresh. Once the view rests, the screen above it
(the next page up) and the first screen of what is drawn (a jump to the top) are rendered the same way, through
each widget's own ``render_lines``, so the frame that shows them takes their lines from the cache. Nothing looks
different: the lines are the ones that frame would have rendered, and a widget that changes meanwhile renders
again, as it would have.
"""

from __future__ import annotations

from textual.geometry import Region
from textual.layout import DockArrangeResult
from textual.widget import Widget

from .offscreen import Gap

SCREENS_ABOVE = 1  # screens above the view rendered ahead: the next page up


def draw_ahead(history: Widget, arranged: DockArrangeResult | None) -> None:
    """Render the lines of the entries of ``history`` (laid out as ``arranged``) a screen above its view and in its
    first screen, those not rendered yet."""
    if arranged is None or not history.size.height:
        return
    height = history.size.height
    y = round(history.scroll_y)
    bands = [(max(0, y - SCREENS_ABOVE * height), y), (0, height)]
    for placed in arranged.placements:
        region = placed.region
        if isinstance(placed.widget, Gap) or not any(
            region.y < bottom and region.bottom > top for top, bottom in bands
        ):
            continue
        _render(placed.widget)


def _render(widget: Widget) -> None:
    """Render ``widget``'s lines and its shown children's, at the size the layout gave them; first, what a widget
    would do the first time it is painted (its ``ready_ahead``: a code block is coloured then, answer.py)."""
    if widget.display and widget.is_mounted and (size := widget.outer_size):
        if (ready := getattr(widget, "ready_ahead", None)) is not None:
            ready()
        widget.render_lines(Region(0, 0, size.width, size.height))
        for child in widget.children:
            _render(child)
