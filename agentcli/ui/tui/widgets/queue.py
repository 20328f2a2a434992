"""Messages sent while the agent works, shown under the conversation: queued ones go together when the turn
ends; steered ones go into the running turn, read after the next tool call (the session's ``steering``)."""

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
        self.steered: list[str] = []  # sent into the running turn, not read yet

    def add(self, text: str) -> None:
        self.messages.append(text)
        self._show()

    def steer(self, text: str) -> None:
        self.steered.append(text)
        self._show()

    def read(self, count: int) -> None:
        """The main agent read the oldest ``count`` steered messages."""
        self.steered = self.steered[count:]
        self._show()

    def unread(self, texts: list[str]) -> None:
        """The turn ended before the agent read ``texts`` (the steered ones left): they go first in the queue."""
        self.messages, self.steered = [*texts, *self.messages], []
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
        self.set_class(not self.messages and not self.steered, "-empty")
        lines = [Content.assemble(Content.styled("steering ", "bold $accent"), one_line(text, 200))
                 for text in self.steered]
        lines += [Content.assemble(Content.styled("queued ", "bold $primary"), one_line(text, 200))
                  for text in self.messages]
        hints = ["read after the current tool call"] if self.steered else []
        hints += ["sent when the agent is done · ctrl+s steers them in"] if self.messages else []
        hint = Content.styled(" · ".join([*hints, "esc takes them back"]), "italic")
        self.update(Content("\n").join([*lines, hint]))
