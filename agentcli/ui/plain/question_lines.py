"""How line mode draws the approval questions and the type-ahead line: a question printed for good with the keys to answer
it live under it, the answer given, the reason for a "no" as it is typed. A part of ``Display`` (display.py);
app.py asks and reads the keys."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text

from ...core.events import MAIN, Approval, ApprovalRequested
from ..calls import RICH_STYLES, approval_lines
from .screen import Painter, Screen

ANSWERS = {
    "allow_once": ("✓", "green", "allowed once"),
    "allow_session": ("✓", "green", "allowed for this session"),
    "allow_agent": ("✓", "green", "allowed for this subagent"),
    "allow_always": ("✓", "green", "always allowed"),
    "deny": ("✗", "red", "denied"),
}
APPROVAL_KEYS_HINT = "[y]es once · [s]ession · [a]lways · [n]o · no, [t]ell it why"
CHILD_KEYS_HINT = "[y]es once · [c] this subagent · [s]ession · [a]lways · [n]o · no, [t]ell it why"  # a rule covers


class QuestionLines:
    """Display's part that draws the approval questions, their answers and what is typed ahead."""

    screen: Screen
    painter: Painter
    question: list[Text]  # the live line under an approval question
    asked: ApprovalRequested | None  # the question printed last
    typeahead: str

    if TYPE_CHECKING:  # Display's

        def emit(self, *lines: str) -> None: ...
        def line(self, *texts: Text | str) -> None: ...
        def refresh(self) -> None: ...
        def summary(self, name: str, args: dict[str, Any]) -> str: ...

    def ask(self, event: ApprovalRequested | None) -> None:
        """Show an approval question (None: no question). What is approved is printed for good, wrapped,
        however long; on a terminal only the keys to answer with stay live under it."""
        scoped = event is not None and event.agent_id != MAIN and bool(event.rules)
        keys = Text(f"  {CHILD_KEYS_HINT if scoped else APPROVAL_KEYS_HINT}", style="yellow")
        if event is not None and event is not self.asked:
            self.emit(*(line for text in self._question(event) for line in self.painter.lines(text)))
            if not self.screen.live:
                self.line(keys)
        self.asked = event
        self.question = [] if event is None else [keys]
        self.refresh()

    def _question(self, event: ApprovalRequested) -> list[RenderableType]:
        lines: list[RenderableType] = [
            Text("? ", style="bold yellow") + Text(who(event), style="bold") + Text(f" wants to run {event.tool}")
        ]
        lines += [
            Padding(Text(text, style=RICH_STYLES[kind]), (0, 0, 0, 4), expand=False)  # wrapped: indented
            for kind, text in approval_lines(event.preview, event.input, event.diff)
        ]
        reason = getattr(event, "reason", "")
        if reason:
            lines.append(Text(f"  Why: {reason}.", style="dim"))
        rules = getattr(event, "rules", None)
        if rules:
            lines.append(Text(f"  [s]ession and [a]lways allow {', '.join(rules)}", style="dim"))
        elif rules is not None:
            lines.append(Text("  No rule can cover this call: each one needs its own yes.", style="dim"))
        return lines

    def answered(self, event: ApprovalRequested, answer: str | Approval) -> None:
        choice, why = (answer.answer, answer.reason) if isinstance(answer, Approval) else (answer, "")
        mark, style, words = ANSWERS.get(choice, ("·", "", choice))
        self.question = []
        summary = self.summary(event.tool, event.input)
        self.line(
            Text(f"  {mark} {words}: ", style=style)
            + Text(f"{event.tool} {summary}".strip())
            + Text(f" ({event.agent_id})", style="dim")
            + Text(f" — {why}" if why else "")
        )

    def ask_why(self, typed: str) -> None:
        """The reason for a "no" as it is typed, under the question."""
        self.question = [
            Text("  Why not? The model reads it (enter: deny with it, esc: deny): ", style="yellow") + Text(typed)
        ]
        self.refresh()

    def set_typeahead(self, text: str) -> None:
        self.typeahead = text
        self.refresh()


def who(event: ApprovalRequested) -> str:
    if event.agent_id == MAIN:
        return "main agent"
    return f"{event.agent_id} ({event.description})" if event.description else event.agent_id
