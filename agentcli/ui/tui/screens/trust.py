"""The workspace trust question, asked before the app opens: what the workspace's files ask for, and yes or no.

It runs as its own small app ahead of the main one, so that the session the main app opens is
built from settled settings: nothing a file widens is in effect while the question is open.
"""

from __future__ import annotations

import sys

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from ....trust import NEW, Request
from ..theme import AGENTCLI_THEME
from .dialog import Dialog


def request_view(request: Request) -> Content:
    """Each file in bold, then what it asks for, one item a line."""
    lines = [
        Content.styled(line, "bold")
        if not line.startswith(" ")
        else Content.styled(line, "bold $warning")
        if line.endswith(NEW)
        else Content(line)
        for line in request.lines(mark_new=True)
    ]
    return Content("\n").join(lines)


class TrustScreen(Dialog[bool | None]):
    """Resolves to True (trust), False (do not trust) or None (no answer now: esc)."""

    DEFAULT_CSS = """
    #trust {
        border: thick $warning;
    }

    #trust-why, #trust-scope {
        margin: 1 0 0 0;
        color: $text-muted;
    }

    #trust-asks {
        height: auto;
        max-height: 20;
        margin: 1 0 0 0;
        padding: 0 1;
        background: $panel;
    }

    #trust-buttons {
        height: auto;
        margin: 1 0 0 0;
    }

    #trust-buttons Button {
        margin: 0 2 0 0;
    }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Trust", show=False),
        Binding("n", "answer(False)", "Don't", show=False),
        Binding("escape", "answer(None)", "Not now", show=False),
    ]

    def __init__(self, request: Request) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical(id="trust", classes="dialog"):
            yield Static(
                Content.assemble(Content.styled("Trust this workspace? ", "bold $warning"), str(self.request.root)),
                id="trust-title",
            )
            yield Static(
                "Files in this workspace ask for more than agentcli allows by default. Anyone who "
                "wrote this repository wrote them; trust it only if you trust them.",
                id="trust-why",
            )
            with VerticalScroll(id="trust-asks"):
                yield Static(request_view(self.request))
            yield Static(
                "No: agentcli runs with these parts ignored (what narrows permissions still applies). "
                "The answer is remembered until these files change.",
                id="trust-scope",
            )
            with Horizontal(id="trust-buttons"):
                yield Button("Trust (y)", id="trust-yes", variant="warning")
                yield Button("Don't trust (n)", id="trust-no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#trust-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust-yes")

    def action_answer(self, answer: bool | None) -> None:
        self.dismiss(answer)


class TrustApp(App[bool | None]):
    """Only the question; returns the answer. ctrl+q quits agentcli instead (``quit_asked``)."""

    def __init__(self, request: Request) -> None:
        super().__init__()
        self.request = request
        self.quit_asked = False

    async def action_quit(self) -> None:
        self.quit_asked = True
        self.exit()

    def on_mount(self) -> None:
        self.register_theme(AGENTCLI_THEME)
        self.theme = "agentcli"
        self.push_screen(TrustScreen(self.request), callback=self.exit)


def ask_in_tui(request: Request) -> bool | None:
    """Asks on the terminal; without one there is no one to ask, so None."""
    if not (sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    app = TrustApp(request)
    answer = app.run()
    if app.quit_asked:
        raise KeyboardInterrupt
    return answer
