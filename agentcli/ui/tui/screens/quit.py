"""Asked before quitting while subagents still run: y quits (their transcripts are kept as interrupted); and, with
best-of-N attempts nobody merged or discarded, whether to discard them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

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
            yield Static(
                Content.assemble(
                    self.question,
                    "\n\n",
                    Content.styled("y", "bold"),
                    " quits · ",
                    Content.styled("n", "bold"),
                    " or ",
                    Content.styled("esc", "bold"),
                    " stays",
                )
            )

    def action_answer(self, quit_: bool) -> None:
        self.dismiss(quit_)


class DiscardScreen(QuitScreen):
    """Dismissed with True to discard the attempts and quit, False to keep them and quit, None to stay."""

    BINDINGS = [
        Binding("y", "answer(True)", "Discard"),
        Binding("n", "answer(False)", "Keep"),
        Binding("escape", "answer(None)", "Stay"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="quit"):
            yield Static(
                Content.assemble(
                    self.question,
                    "\n\n",
                    Content.styled("y", "bold"),
                    " discards and quits · ",
                    Content.styled("n", "bold"),
                    " keeps them and quits · ",
                    Content.styled("esc", "bold"),
                    " stays",
                )
            )

    def action_answer(self, quit_: bool | None) -> None:  # a third answer: stay (None)
        self.dismiss(quit_)


def ask_to_quit(
    app: App[int], question: str, attempts: str = "", discard: Callable[[], Awaitable[object]] | None = None
) -> None:
    """Quit; with a ``question`` (subagents still run), only once the user says yes; with ``attempts`` (the question
    about best-of-N attempts left), after asking it: y runs ``discard`` first."""
    if isinstance(app.screen, QuitScreen):
        return

    async def then(discarding: bool | None) -> None:
        if discarding is None:
            return
        if discarding and discard is not None:
            await discard()
        app.exit(0)

    def leave(quit_: bool | None = True) -> None:
        if not quit_:
            return
        if attempts:
            app.push_screen(DiscardScreen(attempts), then)
        else:
            app.exit(0)

    if question:
        app.push_screen(QuitScreen(question), leave)
    else:
        leave()
