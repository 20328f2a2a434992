"""The working line under the conversation while the main agent works: spinner, time, tokens so far, how to stop.

It shows the output tokens of the turn's finished model calls, and estimates the one streaming now
from its text, so the number moves while the answer streams; both counts are the view model's. While a
model call waits for the server's reply to begin, it says so and for how long (``WAITING``), so a server
that accepted the connection and says nothing is not mistaken for a model that thinks.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from ....core.events import Event, ReplyStarted, Retrying, TurnFinished, TurnStarted, UsageUpdated
from ...format import seconds, tokens
from ...view import SessionView

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CHARS_PER_TOKEN = 4
WAITING = "waiting for the server's first byte"
WAIT_SHOWN_AFTER = 1.0  # seconds: a server that answers at once does not flash it


class WorkingLine(Static):
    DEFAULT_CSS = """
    WorkingLine { height: 1; padding: 0 2; color: $text-muted; &.-idle { display: none; } }
    """

    def __init__(self, clock: Callable[[], float], view: SessionView, *, animate: bool = True) -> None:
        super().__init__(id="working", classes="-idle")
        self.clock, self.view = clock, view
        self.animated = animate  # off in tests: no spinner frames, no time, so snapshots stay the same
        self.started = 0.0
        self.output_before = 0  # the main agent's output tokens when the turn started
        self.frame = 0
        self._timer: Timer | None = None

    @property
    def tokens_so_far(self) -> int:
        return self.view.main_usage.output_tokens - self.output_before + self.view.streamed // CHARS_PER_TOKEN

    def start(self) -> None:
        self.started, self.output_before, self.frame = self.clock(), self.view.main_usage.output_tokens, 0
        self.remove_class("-idle")
        if self.animated and self._timer is None:
            self._timer = self.set_interval(0.1, self.step)
        elif self._timer is not None:
            self._timer.resume()
        self.draw()

    def stop(self) -> None:
        self.add_class("-idle")
        if self._timer is not None:
            self._timer.pause()

    def apply(self, event: Event) -> None:
        """A main-agent event, folded into the view already: drawn on the next step, or now when not animated."""
        if isinstance(event, (UsageUpdated, TurnStarted, ReplyStarted, Retrying, TurnFinished)) and not self.animated:
            self.draw()

    def step(self) -> None:
        self.frame = (self.frame + 1) % len(FRAMES)
        self.draw()

    def waiting(self) -> str:
        """The hint while the model call waits for its reply to begin ("" when it does not, or not for long)."""
        since = self.view.awaiting_reply
        if since is None:
            return ""
        if not self.animated:  # no clock shown: the hint alone
            return WAITING
        waited = self.clock() - since
        return f"{WAITING} · {seconds(waited)}" if waited >= WAIT_SHOWN_AFTER else ""

    def draw(self) -> None:
        got = self.tokens_so_far
        if waiting := self.waiting():  # its own time, in place of the turn's: the line fits 80 columns
            facts = [waiting, *([f"↓ {tokens(got)} tokens"] if got else [])]
        else:
            facts = ([seconds(self.clock() - self.started)] if self.animated else []) + [f"↓ {tokens(got)} tokens"]
        facts.append("esc to interrupt")
        self.update(
            Content.assemble(
                Content.styled(FRAMES[self.frame] if self.animated else "●", "bold $warning"),
                Content.styled(" working", "bold"),
                " · " + " · ".join(facts),
            )
        )
