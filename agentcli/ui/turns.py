"""The main agent's turns as a front end drives them: whether one runs, the messages queued for the next, the ones
steered into the running one, the ctrl+c that arms quitting, and the background results waiting to be read.

One controller for the TUI and line mode, with no UI library: each front end turns its keys into these calls
and draws what the controller holds (the TUI's queue under the conversation; line mode keeps no queue of its own,
since what is typed during a turn waits as the next prompt's type-ahead). Who runs the work is the front end's:
a Textual worker or an asyncio task, anything that can be cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class Cancellable(Protocol):
    def cancel(self) -> object: ...


class Mailbox(Protocol):
    """The session's ``steering``: what reaches the running turn after its next tool results."""

    def add(self, text: str) -> str: ...  # "" when taken, else why not

    def take(self) -> list[str]: ...  # what the turn did not read, and an empty mailbox


W = TypeVar("W", bound=Cancellable)

INTERRUPTED = "interrupted"  # how a turn cancelled by the user ended (esc, ctrl+c, a signal)
HALTED = (INTERRUPTED, "no_key")  # endings after which nothing queued is sent by itself


class Turns(Generic[W]):
    """The state of the main agent's turns in one front end."""

    def __init__(self, steer_on_enter: bool, changed: Callable[[], object] = lambda: None) -> None:
        self.steer_on_enter = steer_on_enter  # enter steers a running turn and the other key queues, not the reverse
        self.changed = changed  # called when the queued or steered messages change, to draw them
        self.mailbox: Mailbox | None = None  # the session's steering, once a session is open
        self.work: W | None = None  # the running turn (a user message, /compact, /review, results read)
        self.busy = False
        self.queued: list[str] = []  # sent while busy: they go, together, as the next prompt
        self.steered: list[str] = []  # sent into the running turn, not read yet
        self.quit_armed = False  # a first ctrl+c on an empty input: the next one quits
        self.results_due = False  # a child finished: its result is read in a turn of its own once idle

    # -- a turn starts and ends --

    def started(self, work: W) -> None:
        self.work, self.busy = work, True

    def ended(self, status: str) -> str:
        """The running turn ended with ``status`` (done, capped, error, no_key, interrupted, ...): what it did not
        read of the steered messages goes first in the queue. Returns the next prompt, taken from the queue, or ""
        when nothing is to be sent now (nothing queued, or the user interrupted: the queue waits for them)."""
        self.work, self.busy = None, False
        left = self.mailbox.take() if self.mailbox is not None else []
        if left or self.steered:
            self.queued, self.steered = [*left, *self.queued], []
            self.changed()
        self.results_due = status != INTERRUPTED  # after esc, results wait for the next child or message
        return "" if status in HALTED else self.take()

    def interrupt(self) -> None:
        """Cancel the running turn (its end comes through ``ended``)."""
        if self.busy and self.work is not None:
            self.work.cancel()

    def take_back(self) -> str:
        """What the user sent that the agent has not read (steered, then queued), as one text for the input: on
        an interrupt nothing typed is lost."""
        if self.steered and self.mailbox is not None:
            self.queued, self.steered = [*self.mailbox.take(), *self.queued], []
        return self.take()

    # -- messages sent while a turn runs --

    def steers(self, other_way: bool) -> bool:
        """Whether the key sends into the running turn: enter queues and the other key (ctrl+s) steers, or the
        reverse with the steer_on_enter setting."""
        return other_way != self.steer_on_enter

    def steer(self, text: str) -> bool:
        """Send ``text`` into the running turn; False when it cannot go there (empty, a /command, which is
        expanded only when sent as a prompt, or refused by the mailbox)."""
        if not text or text.startswith("/") or self.mailbox is None or self.mailbox.add(text):
            return False
        self.steered.append(text)
        self.changed()
        return True

    def while_busy(self, text: str, other_way: bool) -> None:
        """A message sent while the agent works: queued for the turn's end, or steered into the turn. The steering
        key on an empty input steers the queued messages in; what cannot be steered stays queued."""
        if not self.steers(other_way):
            if text:
                self.queue(text)
            return
        for said in [text] if text else self.take_each():
            if not self.steer(said):
                self.queue(said)

    def read(self, count: int) -> None:
        """The agent read the oldest ``count`` steered messages (a SteerDelivered event)."""
        self.steered = self.steered[count:]
        self.changed()

    # -- the queue --

    def queue(self, text: str) -> None:
        self.queued.append(text)
        self.changed()

    def take(self) -> str:
        """All queued messages as one, and an empty queue."""
        return "\n\n".join(self.take_each())

    def take_each(self) -> list[str]:
        """The queued messages one by one, and an empty queue."""
        queued, self.queued = self.queued, []
        if queued:
            self.changed()
        return queued

    # -- ctrl+c, and background results --

    def arm_quit(self) -> bool:
        """ctrl+c with nothing to stop or clear: True when it was armed already (quit now), else it is armed."""
        armed, self.quit_armed = self.quit_armed, True
        return armed

    def disarm(self) -> None:
        self.quit_armed = False

    def child_finished(self) -> None:
        self.results_due = True

    def read_results_now(self, waiting: bool) -> bool:
        """Whether to start a turn that reads the background results now: one is ``waiting``, a child finished
        since the last interrupt, and no turn runs. True takes the due."""
        if not (waiting and self.results_due and not self.busy):
            return False
        self.results_due = False
        return True
