"""The peer for TUI startup: a bare Textual app with the same widgets count as agentcli's first screen
(16: a conversation, a hidden side panel, a prompt with its completion list, a status line, a footer
with four keys). ``python -m bench.bare_app`` runs it; it draws READY once it is up."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, OptionList, Static, TextArea

READY = "bare textual app ready: type below"


class BareApp(App[None]):
    CSS = """
    #side { display: none; width: 40; }
    #conversation { height: 1fr; }
    TextArea { height: 3; }
    OptionList { display: none; }
    """
    BINDINGS = [Binding("escape", "noop", "Interrupt"), Binding("ctrl+t", "noop", "Panel"),
                Binding("ctrl+o", "noop", "Transcript"), Binding("ctrl+q", "quit", "Quit")]

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


if __name__ == "__main__":
    BareApp().run()
