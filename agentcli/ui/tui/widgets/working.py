"""The working line under the conversation while the main agent works: spinner, time, tokens so far, how to stop.

It counts the output tokens of the turn's finished model calls, and estimates the one streaming now
from its text, so the number moves while the answer streams.
"""

from __future__ import annotations

from typing import Callable

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from ....core.events import Event, TextDelta, TextReset, UsageUpdated
from ...format import seconds, tokens

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CHARS_PER_TOKEN = 4


class WorkingLine(Static):
    DEFAULT_CSS = """
    WorkingLine { height: 1; padding: 0 2; color: $text-muted; &.-idle { display: none; } }
    """

    def __init__(self, clock: Callable[[], float], *, animate: bool = True) -> None:
        super().__init__(id="working", classes="-idle")
        self.clock = clock
        self.animate = animate  # off in tests: no spinner frames, no time, so snapshots stay the same
        self.started = 0.0
        self.output_tokens = 0  # of the turn's finished calls
        self.streamed_chars = 0  # of the call streaming now
        self.frame = 0
        self._timer: Timer | None = None

    @property
    def tokens_so_far(self) -> int:
        return self.output_tokens + self.streamed_chars // CHARS_PER_TOKEN

    def start(self) -> None:
        self.started, self.output_tokens, self.streamed_chars, self.frame = self.clock(), 0, 0, 0
        self.remove_class("-idle")
        if self.animate and self._timer is None:
            self._timer = self.set_interval(0.1, self.step)
        elif self._timer is not None:
            self._timer.resume()
        self.draw()

    def stop(self) -> None:
        self.add_class("-idle")
        if self._timer is not None:
            self._timer.pause()

    def apply(self, event: Event) -> None:
        """A main-agent event: count what it adds (drawn on the next step, or now when not animated)."""
        if isinstance(event, TextDelta):
            self.streamed_chars += len(event.text)
        elif isinstance(event, TextReset):
            self.streamed_chars = 0
        elif isinstance(event, UsageUpdated):
            self.output_tokens += event.usage.output_tokens
            self.streamed_chars = 0
            if not self.animate:
                self.draw()

    def step(self) -> None:
        self.frame = (self.frame + 1) % len(FRAMES)
        self.draw()

    def draw(self) -> None:
        facts = [] if not self.animate else [seconds(self.clock() - self.started)]
        facts += [f"↓ {tokens(self.tokens_so_far)} tokens", "esc to interrupt"]
        self.update(Content.assemble(Content.styled(FRAMES[self.frame] if self.animate else "●", "bold $warning"),
                                     Content.styled(" working", "bold"), " · " + " · ".join(facts)))
