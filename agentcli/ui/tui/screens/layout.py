"""The app's screens lay out once where Textual laid out twice.

In Textual 8.2.8, a whole layout of a screen was followed by a second one, or rearranged the screen a second time in
its own frame, for two reasons this screen removes:

- **Virtual sizes.** After a whole layout, the screen gives each widget its new size and virtual size, and the
  virtual size is a reactive that asks for a layout. Every widget laid out anew (each block of a part of the
  history drawn above) so asked for another whole layout, which changed nothing. A scroll's layout sets it without
  asking (``set_reactive``); here a whole layout does too. A scrollbar shown or hidden still asks for its own.
  One layout is not enough for a view that follows its end (``anchor()``: the conversation as it grows): Textual
  places its end by the height it had before the layout, so a view whose height changed in it (the prompt grew by
  a pasted or recalled text, a queued message's box came) is laid out again, as before, and no other.
- **The map of every widget.** ``Compositor.reflow`` builds it, yet leaves it marked stale after a scroll's layout
  had marked it so, and the first widget asked for its region (the screen asks each resized one, in the same
  layout) arranged the whole screen again to rebuild it.

With a long history drawn, each was about 12-35 ms of whole layout in the rest after a page up drew the next part,
which on a busy machine ran into the next page's frame (bench/session_view.py).
"""

from __future__ import annotations

from typing import Any, TypeVar

from textual.geometry import Size
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget

ResultType = TypeVar("ResultType")
VIRTUAL_SIZE: Reactive[Size] = Widget.virtual_size  # the descriptor (on the class)


def keep_full_map(compositor: Any) -> None:
    """Have ``compositor`` keep as current the map of every widget its whole layout (``reflow``) builds."""
    reflow = compositor.reflow

    def reflow_keeping_map(parent: Widget, size: Size) -> Any:
        result = reflow(parent, size)
        compositor._full_map_invalidated = False  # the map it just built is the whole one
        return result

    compositor.reflow = reflow_keeping_map


class OneLayoutScreen(Screen[ResultType]):
    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        keep_full_map(self._compositor)

    def _refresh_layout(self, size: Size | None = None, scroll: bool = False) -> None:
        whole = not scroll or bool(self._layout_widgets)  # (a scroll's layout changes no view's height)
        following = {w: w.container_size.height for w in self._compositor.widgets if w.is_anchored} if whole else {}
        VIRTUAL_SIZE._layout = False  # for the sizes it hands out (it runs to its end in the app's thread)
        try:
            super()._refresh_layout(size, scroll)
        finally:
            VIRTUAL_SIZE._layout = True
        for view in self._compositor.widgets if whole else ():
            if view.is_anchored and following.get(view) != view.container_size.height:
                view.refresh(layout=True)  # its end was placed by its former height

    def _compositor_refresh(self) -> None:
        VIRTUAL_SIZE._layout = True  # (the end of a layout, then painting: what a widget sets as it is painted asks
        super()._compositor_refresh()  # for its layout as ever)
