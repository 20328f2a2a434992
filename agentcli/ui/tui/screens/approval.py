"""The approval modal: which agent wants to run which tool with what input, who waits after it, and the
user's answer (a subagent's call may be allowed for that subagent alone)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Input, Static

from ....core.events import (
    ALLOW_AGENT,
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    ALLOW_SESSION,
    DENY,
    MAIN,
    Approval,
    ApprovalRequested,
)
from ..format import input_view
from . import asking
from .dialog import Dialog

TELL_WHY = "tell_why"  # not an answer: the choice that asks for the reason of a "no"
CHOICES = (
    (ALLOW_ONCE, "Allow once", "y", "success"),
    (ALLOW_AGENT, "For this subagent", "c", "primary"),  # offered for a subagent's call that a rule can cover
    (ALLOW_SESSION, "For this session", "s", "primary"),
    (ALLOW_ALWAYS, "Always", "a", "default"),
    (DENY, "Deny", "n", "error"),
    (TELL_WHY, "No, and tell it why", "t", "error"),  # opens an input; enter denies with what was typed
)


def choices(request: ApprovalRequested) -> list[tuple[str, str, str, str]]:
    scoped = request.agent_id != MAIN and bool(request.rules)
    return [choice for choice in CHOICES if choice[0] != ALLOW_AGENT or scoped]


def queue_line(approvals: list[tuple[str, str]]) -> str:
    """Who waits after the question shown (the first of ``approvals``): "" when no one."""
    after = approvals[1:]
    if not after:
        return ""
    who = ", ".join(
        "the main agent" if agent == MAIN else f"{agent} ({errand})" if errand else agent for agent, errand in after
    )
    return f"{len(after)} more waiting after this: {who}"


def who_asks(request: ApprovalRequested) -> str:
    if request.agent_id == MAIN:
        return "the main agent"
    return f"subagent {request.agent_id}" + (f" ({request.description})" if request.description else "")


class ApprovalScreen(Dialog[str | Approval]):
    """Resolves to one of ALLOW_ONCE, ALLOW_AGENT, ALLOW_SESSION, ALLOW_ALWAYS or DENY, or to
    ``Approval(DENY, reason=…)`` when the user said why."""

    DEFAULT_CSS = """
    #approval {
        width: 84;
        max-height: 80%;
        border: thick $warning;
    }

    #approval-title {
        margin-bottom: 1;
    }

    #approval-reason, #approval-scope {
        color: $text-muted;
        margin-bottom: 1;
    }

    #approval-scope {
        margin-top: 1;
        margin-bottom: 0;
    }

    #approval-agent {
        color: $text-muted;
        margin-bottom: 1;
    }

    #approval-input {
        height: auto;
        max-height: 20;
        padding: 0 1;
        background: $boost;
    }

    #approval-answers {
        dock: bottom;
        height: auto;
    }

    #approval-queue {
        color: $warning;
        margin-top: 1;
    }

    .approval-row {
        height: auto;
        margin-top: 1;
    }

    .approval-row Button {
        margin-right: 2;
    }

    #approval-why {
        margin-top: 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(key, f"answer('{answer}')", label, show=False) for answer, label, key, _ in CHOICES),
        Binding("escape", f"answer('{DENY}')", "Deny", show=False),
    ]

    def __init__(self, request: ApprovalRequested, approvals: list[tuple[str, str]] | None = None) -> None:
        super().__init__()
        self.request = request
        self.approvals = approvals or []

    def compose(self) -> ComposeResult:
        with Vertical(id="approval", classes="dialog"):
            yield Static(
                Content.assemble(
                    Content.styled("Approve ", "bold"), Content.styled(self.request.tool, "bold $warning"), "?"
                ),
                id="approval-title",
            )
            yield Static(
                Content.assemble("Asked by ", Content.styled(who_asks(self.request), "bold")), id="approval-agent"
            )
            reason = getattr(self.request, "reason", "")
            if reason:
                yield Static(Content(f"Why: {reason}."), id="approval-reason")
            with VerticalScroll(id="approval-input"):
                yield Static(
                    input_view(self.request.preview, self.request.input, max_lines=400, diff=self.request.diff)
                )
            # The answers keep the box's bottom: a long diff above them is cut (it scrolls), never the buttons.
            with Vertical(id="approval-answers"):
                rules = getattr(self.request, "rules", None)
                if rules is not None:
                    scope = (
                        f"For the session or always, this allows {', '.join(rules)}."
                        if rules
                        else "No rule can cover this call: each one needs its own yes."
                    )
                    yield Static(Content(scope), id="approval-scope")
                queue = Static(queue_line(self.approvals), id="approval-queue")
                queue.display = bool(queue_line(self.approvals))
                yield queue
                for row, says_no in (("approval-buttons", False), ("approval-deny", True)):  # yes on one row, no below
                    with Horizontal(id=row, classes="approval-row"):
                        for answer, label, key, variant in choices(self.request):
                            if (answer in (DENY, TELL_WHY)) == says_no:
                                yield Button(
                                    Content.assemble(label, " ", Content.styled(key, "bold underline")),
                                    id=answer,
                                    compact=True,
                                    variant=variant,  # type: ignore[arg-type]
                                )
                why = Input(
                    placeholder="Why not? The model reads it. enter: deny with it · esc: deny", id="approval-why"
                )
                why.display = False
                yield why

    def on_mount(self) -> None:
        self.query_one(f"#{ALLOW_ONCE}", Button).focus()
        asking.close_when_withdrawn(self, self.request.future, DENY)  # the turn was interrupted

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id or DENY)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer" and self.query_one("#approval-why", Input).display:
            return parameters[0] == DENY  # the keys type the reason; esc still denies
        return action != "answer" or parameters[0] in {choice[0] for choice in choices(self.request)} | {DENY}

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        reason = event.value.strip()
        self.dismiss(Approval(DENY, reason=reason) if reason else DENY)

    def show_queue(self, approvals: list[tuple[str, str]]) -> None:
        """The inbox changed while this question is shown: say who waits after it now."""
        self.approvals = approvals
        queue = self.query_one("#approval-queue", Static)
        queue.update(queue_line(approvals))
        queue.display = bool(queue_line(approvals))

    def action_answer(self, answer: str) -> None:
        if answer == TELL_WHY:
            why = self.query_one("#approval-why", Input)
            why.display = True
            why.focus()
            return
        self.dismiss(answer)


def ask(app: App[Any], request: ApprovalRequested) -> None:
    """Show the question the engine asks now. The engine asks one at a time (``Permissions`` keeps
    the queue), so the next comes only once this one is answered here or withdrawn there."""
    view = getattr(app, "view", None)
    asking.push(app, ApprovalScreen(request, list(view.approvals) if view is not None else []), request.future, DENY)


def inbox_changed(app: App[Any], approvals: list[tuple[str, str]]) -> None:
    """Keep the "more waiting" line of every shown question current."""
    for screen in app.screen_stack:
        if isinstance(screen, ApprovalScreen) and screen.is_mounted:
            screen.show_queue(approvals)
