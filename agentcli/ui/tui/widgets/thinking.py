"""The model's extended thinking in a conversation: one dim line that expands to the whole text."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible, Static

from ...format import word_count


class ThinkingEntry(Collapsible):
    """``∴ thinking… 120 words`` while it streams, ``∴ thought · 120 words`` after; enter or a click expands."""

    DEFAULT_CSS = """
    ThinkingEntry {
        border-top: none; padding: 0; margin: 0 0 0 2; background: transparent;
        CollapsibleTitle { padding: 0; color: $text-muted; text-style: italic; width: 1fr; }
        Contents { padding: 0 0 1 2; color: $text-muted; }
    }
    """

    def __init__(self, text: str = "", *, done: bool = False) -> None:
        self.text = text
        self.done = done
        self._body = Static(Content(text), classes="thinking-text")
        super().__init__(self._body, title=self._label(), collapsed=True)  # type: ignore[arg-type]  # its title takes Content

    def _label(self) -> Content:
        words = word_count(self.text)
        state = f"thought · {words} words" if self.done else f"thinking… {words} words"
        return Content.styled(f"∴ {state}", "italic $text-muted")

    def add(self, piece: str) -> None:
        self.text += piece
        self.title = self._label()  # type: ignore[assignment]
        if not self.collapsed:
            self._body.update(Content(self.text))

    def finish(self) -> None:
        self.done = True
        self.title = self._label()  # type: ignore[assignment]
        self._body.update(Content(self.text))

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible is self:  # the body is brought up to date when shown, not on every piece
            self._body.update(Content(self.text))
