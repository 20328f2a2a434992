"""The app's subscriber to the session: engine events onto the app's message queue, text deltas merged.

A model streams one ``TextDelta`` per token. Posting each as its own message makes the app lay out
and redraw the screen once per token, which falls behind any fast model. Consecutive deltas of one
agent are merged into one event per event-loop turn instead; any other event first flushes the
merged text, so the app sees the same events, in the same order, with the same text.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

from ...core.events import Event, TextDelta


class MergingSink:
    """Calls ``post`` with each event, merging consecutive deltas of one agent until the loop turns."""

    def __init__(self, post: Callable[[Event], object]) -> None:
        self.post = post
        self._first: TextDelta | None = None  # the first delta of the merged run
        self._texts: list[str] = []
        self._flush_scheduled = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            first = self._first
            if first is not None and (first.agent_id, first.parent_tool_use_id) == (
                event.agent_id,
                event.parent_tool_use_id,
            ):
                self._texts.append(event.text)
                return
            self.flush()
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not on an event loop: nothing would flush later
                self.post(event)
                return
            self._first, self._texts = event, [event.text]
            if not self._flush_scheduled:
                self._flush_scheduled = True
                loop.call_soon(self._scheduled_flush)
            return
        self.flush()
        self.post(event)

    def _scheduled_flush(self) -> None:
        self._flush_scheduled = False
        self.flush()

    def flush(self) -> None:
        """Post the merged text now, if any."""
        first, texts = self._first, self._texts
        if first is None:
            return
        self._first, self._texts = None, []
        self.post(first if len(texts) == 1 else dataclasses.replace(first, text="".join(texts)))
