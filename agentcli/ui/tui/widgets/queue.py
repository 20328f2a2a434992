"""Messages typed while the agent works: shown under the conversation, sent together when the turn ends."""

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
        self.messages: list[str] = []

    def add(self, text: str) -> None:
        self.messages.append(text)
        self._show()

    def take(self) -> str:
        """All queued messages as one, and an empty queue."""
        text, self.messages = "\n\n".join(self.messages), []
        self._show()
        return text

    def take_each(self) -> list[str]:
        """The queued messages one by one, and an empty queue."""
        messages, self.messages = self.messages, []
        self._show()
        return messages

    def _show(self) -> None:
        self.set_class(not self.messages, "-empty")
        lines = [Content.assemble(Content.styled("queued ", "bold $primary"), one_line(text, 200))
                 for text in self.messages]
        hint = Content.styled("sent when the agent is done · esc takes them back", "italic")
        self.update(Content("\n").join([*lines, hint]))
