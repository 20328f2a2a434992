"""The peers for TUI startup: a bare Textual app with the same widgets count as agentcli's first screen
(16: a conversation, a hidden side panel, a prompt with its completion list, a status line, a footer
with four keys), and the smallest app a user would call usable (a header, an input and a footer).
``python -m bench.bare_app [--small]`` runs one; it draws READY once it is up."""

from __future__ import annotations

import sys

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Header, Input, OptionList, Static, TextArea

READY = "bare textual app ready: type below"


class BareApp(App[None]):
    CSS = """
    #side { display: none; width: 40; }
    #conversation { height: 1fr; }
    TextArea { height: 3; }
    OptionList { display: none; }
    """
    BINDINGS = [
        Binding("escape", "noop", "Interrupt"),
        Binding("ctrl+t", "noop", "Panel"),
        Binding("ctrl+o", "noop", "Transcript"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        with Horizontal():
            with VerticalScroll(id="conversation"):
                yield Static(READY)
            with Vertical(id="side"):
                yield Static("subagents")
                yield VerticalScroll()
        with Vertical():
            yield OptionList()
            yield TextArea(id="prompt")
        yield Static("model · 0 tokens", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_noop(self) -> None:
        pass


class SmallestApp(App[None]):
    """A header, an input and a footer: what any chat app has before anything else."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder=READY)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Input).focus()


if __name__ == "__main__":
    (SmallestApp if "--small" in sys.argv[1:] else BareApp)().run()
