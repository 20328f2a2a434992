"""Line mode's approval questions: the engine asks one at a time, and the user answers with a key while the turn
runs (y/c/s/a/n, esc for no), or with "t" types the reason for a no, which the model reads."""

from __future__ import annotations

import asyncio

from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

from ...core.events import ALLOW_AGENT, ALLOW_ALWAYS, ALLOW_ONCE, ALLOW_SESSION, DENY, MAIN, Approval, ApprovalRequested
from .display import Display
from .prompt import typed_text

APPROVAL_KEYS = {"y": ALLOW_ONCE, "c": ALLOW_AGENT, "s": ALLOW_SESSION, "a": ALLOW_ALWAYS, "n": DENY, "t": "why"}


class Questions:
    """The approval question now (the engine asks one at a time), and the reason being typed for a no."""

    def __init__(self, display: Display) -> None:
        self.display = display
        self.question: ApprovalRequested | None = None
        self.answered = asyncio.Event()  # the question got its answer, or was withdrawn
        self.why: list[KeyPress] | None = None  # "t" at a question: the keys of the reason for a "no"

    def asked(self, event: ApprovalRequested) -> bool:
        """Take ``event`` as the question now; False when it was settled already (nothing to ask)."""
        if event.future is None or event.future.done():
            return False
        self.question = event
        event.future.add_done_callback(lambda _: self.settled(event))
        return True

    async def answer_all(self) -> None:
        """Ask the questions of background children as a turn would, until each has its answer; on esc,
        the ones left are denied."""
        try:
            while self.question is not None:
                self.display.ask(self.question)
                self.answered.clear()
                await self.answered.wait()
        finally:
            if self.question is not None:
                self.answer(DENY)

    def answer(self, choice: str | Approval) -> None:
        event, self.question, self.why = self.question, None, None
        self.answered.set()
        if event is not None and event.future is not None and not event.future.done():
            event.future.set_result(choice)
            self.display.answered(event, choice)
        self.display.ask(None)

    def settled(self, event: ApprovalRequested) -> None:
        """A question was answered, or the engine withdrew it (its call was cancelled): take it down."""
        if self.question is event:
            self.question, self.why = None, None
            self.answered.set()
            self.display.ask(None)

    def turn_ended(self) -> None:
        """A background child's question outlives the turn; the others' were withdrawn with their calls."""
        if self.question is not None and (self.question.future is None or self.question.future.done()):
            self.question = None

    def on_key(self, key: KeyPress) -> None:
        """A key while the question is up: an answer, or a key of the reason for a no."""
        assert self.question is not None
        if self.why is not None:
            self.type_why(key)
            return
        choice = DENY if key.key == Keys.Escape else APPROVAL_KEYS.get(key.data.lower())
        if choice == ALLOW_AGENT and (self.question.agent_id == MAIN or not self.question.rules):
            choice = None  # "this subagent" is offered for a subagent's call a rule can cover only
        if choice == "why":
            self.why = []
            self.display.ask_why("")
        elif choice is not None:
            self.answer(choice)

    def type_why(self, key: KeyPress) -> None:
        """A key of the reason for a "no": enter denies with it (the model reads it), esc without it."""
        assert self.why is not None
        if key.key in (Keys.ControlM, Keys.ControlJ, Keys.Escape):
            reason = typed_text(self.why).strip() if key.key != Keys.Escape else ""
            self.answer(Approval(DENY, reason=reason) if reason else DENY)
        else:
            self.why.append(key)
            self.display.ask_why(typed_text(self.why))
