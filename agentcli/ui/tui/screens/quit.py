"""Asked before quitting while subagents still run: y quits (their transcripts are kept as interrupted)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class QuitScreen(ModalScreen[bool]):
    """Dismissed with True to quit, False to stay."""

    DEFAULT_CSS = """
    QuitScreen { align: center middle; background: $background 60%; }
    #quit { width: 70; max-width: 95%; height: auto; padding: 1 2; background: $surface; border: thick $warning; }
    """
    BINDINGS = [Binding("y", "answer(True)", "Quit"), Binding("n,escape", "answer(False)", "Stay")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="quit"):
            yield Static(Content.assemble(self.question, "\n\n", Content.styled("y", "bold"), " quits · ",
                                          Content.styled("n", "bold"), " or ", Content.styled("esc", "bold"),
                                          " stays"))

    def action_answer(self, quit_: bool) -> None:
        self.dismiss(quit_)


def ask_to_quit(app: App[int], question: str) -> None:
    """Quit; with a ``question`` (subagents still run), only once the user says yes."""
    if not question:
        app.exit(0)
    elif not isinstance(app.screen, QuitScreen):
        app.push_screen(QuitScreen(question), lambda quit_: app.exit(0) if quit_ else None)
