"""Messages sent while the agent works, shown under the conversation: queued ones go together when the turn
ends; steered ones go into the running turn, read after the next tool call (the session's ``steering``).
The turn controller (ui/turns.py) holds them; this draws them."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from ..format import one_line


class QueuedMessages(Static):
    DEFAULT_CSS = """
    QueuedMessages {
        margin: 0 1; padding: 0 1; background: $primary 6%; border-left: thick $primary 50%; color: $text-muted;
        &.-empty { display: none; }
    }
    """

    def __init__(self) -> None:
        super().__init__(id="queued", classes="-empty")

    def show(self, queued: list[str], steered: list[str]) -> None:
        """The turn controller's (ui/turns.py) queued messages and the steered ones not read yet."""
        self.set_class(not queued and not steered, "-empty")
        lines = [Content.assemble(Content.styled("steering ", "bold $accent"), one_line(text, 200)) for text in steered]
        lines += [Content.assemble(Content.styled("queued ", "bold $primary"), one_line(text, 200)) for text in queued]
        hints = ["read after the current tool call"] if steered else []
        hints += ["sent when the agent is done · ctrl+s steers them in"] if queued else []
        hint = Content.styled(" · ".join([*hints, "esc takes them back"]), "italic")
        self.update(Content("\n").join([*lines, hint]))
