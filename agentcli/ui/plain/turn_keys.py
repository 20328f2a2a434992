"""Line mode's keys while a turn runs: the app reads them itself, the terminal in raw mode (no prompt is up).
ctrl+c or esc interrupts the turn, an approval's keys answer it (questions.py), the steering key sends what is typed
into the turn (ui/turns.py), and anything else is kept as type-ahead for the next prompt."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import get_typeahead
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

from ...core.events import DENY
from ..turns import Turns
from .display import Display
from .prompt import typed_text
from .questions import Questions


class TurnKeys:
    def __init__(
        self,
        input: Input | None,
        turns: Turns[asyncio.Future[Any]],
        questions: Questions,
        display: Display,
        handle_sigint: bool,
    ) -> None:
        self.input = input  # None: no keyboard (piped input)
        self.turns = turns
        self.questions = questions
        self.display = display
        self.handle_sigint = handle_sigint
        self.typed: list[KeyPress] = []  # keys typed while a turn ran, replayed into the next prompt
        self.watching = False  # the keys are read now (without a keyboard, a question is denied)

    @contextlib.contextmanager
    def watched(self) -> Iterator[None]:
        if self.input is None:  # no keyboard: approvals are denied, SIGINT still interrupts
            yield
            return
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(self.input.raw_mode())
                stack.enter_context(self.input.attach(self._keys_ready))
                self.watching = True
            except (EOFError, OSError, NotImplementedError):
                pass
            self.on_keys(get_typeahead(self.input))
            try:
                yield
            finally:
                self.watching = False

    @contextlib.contextmanager
    def set_aside(self) -> Iterator[None]:
        """While prompts of their own read the keys (a server's question in a turn, a prompt a field): the turn's
        reader is off until the last one ends, so keys typed between two of them wait for the next, instead of
        becoming type-ahead for the next message (prompt-toolkit puts back the reader it found when a prompt ends)."""
        if self.input is None or not self.watching:
            yield
            return
        with self.input.detach():
            yield

    def _keys_ready(self) -> None:
        assert self.input is not None
        self.on_keys(self.input.read_keys() + self.input.flush_keys())
        if self.input.closed:
            self.watching = False
            if self.questions.question is not None:
                self.questions.answer(DENY)

    def on_keys(self, keys: list[KeyPress]) -> None:
        """Keys read in one go. An escape with another key right behind it is meta+key (alt+enter
        sends both at once), so it is type-ahead; an escape on its own is the esc key."""
        for n, key in enumerate(keys):
            self.on_key(key, meta=key.key == Keys.Escape and n + 1 < len(keys))

    def on_key(self, key: KeyPress, meta: bool = False) -> None:
        if key.key == Keys.ControlC or (key.key == Keys.Escape and not meta and self.questions.question is None):
            self.turns.interrupt()
        elif self.questions.question is not None:
            self.questions.on_key(key)
        elif key.key == Keys.ControlS or (
            key.key == Keys.ControlM
            and self.turns.steer_on_enter
            and not (self.typed and self.typed[-1].key == Keys.Escape)
        ):
            self.steer_key(key)
        else:
            self.typed.append(key)
            self.display.set_typeahead(typed_text(self.typed))

    def steer_key(self, key: KeyPress) -> None:
        """ctrl+s while a turn runs: what is typed goes into the running turn, read after the next tool call
        (a /command waits for the prompt); with steer_on_enter, enter does that and ctrl+s types ahead an
        enter, sent at the next prompt."""
        text = typed_text(self.typed).strip()
        if self.turns.steers(key.key == Keys.ControlS) and self.turns.steer(text):
            self.typed = []
            self.display.steering.append(text)
            self.display.set_typeahead("")
        elif self.turns.steer_on_enter:  # not steered: an enter typed ahead
            self.typed.append(KeyPress(Keys.ControlM, "\r"))
            self.display.set_typeahead(typed_text(self.typed))

    @contextlib.contextmanager
    def sigint(self, interrupt: Callable[[], object] | None = None) -> Iterator[None]:
        """A SIGINT (e.g. kill -INT, or ctrl+c while no key is read) interrupts the turn too, or ``interrupt``'s
        work, not the program."""
        loop = asyncio.get_running_loop()
        installed = False
        if self.handle_sigint:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signal.SIGINT, interrupt or self.turns.interrupt)
                installed = True
        try:
            yield
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGINT)
