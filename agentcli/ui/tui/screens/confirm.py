"""A yes-or-no question before something that cannot be undone, such as /discard."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    """Dismissed with True for y, False for n or esc."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; background: $background 60%; }
    #confirm { width: 70; max-width: 95%; height: auto; max-height: 90%; overflow-y: auto; padding: 1 2;
               background: $surface; border: thick $warning; }
    """
    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str, yes: str, no: str = "keeps it") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(
                Content.assemble(
                    self.question,
                    "\n\n",
                    Content.styled("y", "bold"),
                    f" {self.yes} · ",
                    Content.styled("n", "bold"),
                    " or ",
                    Content.styled("esc", "bold"),
                    f" {self.no}",
                )
            )

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
