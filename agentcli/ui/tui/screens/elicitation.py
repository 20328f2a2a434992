"""An MCP server's question to the user (elicitation): its message, one field for each value its schema
asks for (a text box for strings and numbers, a switch for yes-or-no, a choice for an enum), and the
user's answer: accept with the values, decline, or cancel."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from ....core.events import ElicitationRequested
from . import asking


class ElicitationScreen(ModalScreen[dict[str, Any] | str]):
    """Resolves to the answer's values (accept), "decline" or "cancel" (esc)."""

    DEFAULT_CSS = """
    ElicitationScreen { align: center middle; background: $background 60%; }
    #elicitation { width: 84; max-width: 95%; height: auto; max-height: 80%; padding: 1 2; background: $surface;
                   border: thick $warning; }
    #elicitation-fields { height: auto; max-height: 20; }
    #elicitation-fields Label { margin-top: 1; }
    #elicitation-error { color: $error; }
    #elicitation-buttons { height: auto; margin-top: 1; }
    #elicitation-buttons Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "answer('cancel')", "Cancel", show=False)]

    def __init__(self, request: ElicitationRequested) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="elicitation"):
            yield Static(
                Content.assemble("The MCP server ", Content.styled(request.server, "bold $warning"), " asks:"),
                id="elicitation-title",
            )
            yield Static(Content(request.message), id="elicitation-message")
            if request.url:
                yield Static(Content(f"Open {request.url} to answer."), id="elicitation-url")
            with VerticalScroll(id="elicitation-fields"):
                for name, kind, title, required, choices in request.fields:
                    yield Label(Content.assemble(title, Content.styled(" *", "bold") if required else ""))
                    if choices:
                        yield Select(
                            [(c, c) for c in choices],
                            id=f"field-{name}",
                            allow_blank=not required,
                            value=choices[0] if required else Select.BLANK,
                        )
                    elif kind == "boolean":
                        yield Switch(id=f"field-{name}")
                    else:
                        yield Input(
                            id=f"field-{name}",
                            type="integer" if kind == "integer" else "number" if kind == "number" else "text",
                        )
            yield Static("", id="elicitation-error")
            with Horizontal(id="elicitation-buttons"):
                yield Button("Accept", id="accept", variant="success", compact=True)
                yield Button("Decline", id="decline", variant="error", compact=True)
                yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        first = self.query("#elicitation-fields Input, #elicitation-fields Select, #elicitation-fields Switch")
        (first.first() if first else self.query_one("#accept", Button)).focus()
        asking.close_when_withdrawn(self, self.request.future, "cancel")  # the call was cancelled

    def typed(self) -> dict[str, str]:
        """What the user gave each field, as text (``bridge.elicitation_answer`` reads it)."""
        found: dict[str, str] = {}
        for name, kind, _, _, choices in self.request.fields:
            if choices:
                value = self.query_one(f"#field-{name}", Select).value
                found[name] = "" if value is Select.BLANK else str(value)
            elif kind == "boolean":
                found[name] = "yes" if self.query_one(f"#field-{name}", Switch).value else "no"
            else:
                found[name] = self.query_one(f"#field-{name}", Input).value
        return found

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_answer("accept")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id or "cancel")

    def action_answer(self, answer: str) -> None:
        if answer != "accept":
            self.dismiss(answer)
            return
        try:
            from ....core.door import elicitation_answer  # the engine loads after the first paint

            values = elicitation_answer(self.request.fields, self.typed())
        except ValueError as exc:  # one sentence; the user corrects it
            self.query_one("#elicitation-error", Static).update(Content(str(exc)))
            return
        self.dismiss(values)


def ask(app: App[Any], request: ElicitationRequested) -> None:
    """Show a server's question; the answer resolves its future."""
    asking.push(app, ElicitationScreen(request), request.future, "cancel")
