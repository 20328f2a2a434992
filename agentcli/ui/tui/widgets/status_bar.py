"""The status bar: model, permission mode, tokens and cost, main context fill, tokens kept out by subagents."""

from __future__ import annotations

from textual.widgets import Static

from ...view import StatusFacts
from ..format import status_line


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1;
                text-wrap: nowrap; text-overflow: ellipsis; }
    """

    facts: StatusFacts | None = None

    def show(self, facts: StatusFacts) -> None:
        self.facts = facts
        self.update(status_line(facts, self.content_size.width or 1000))

    def on_resize(self) -> None:
        if self.facts is not None:
            self.show(self.facts)
