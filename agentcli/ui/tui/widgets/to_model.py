"""A long note agentcli sends the model (a review's merge request with its findings, a hook's long output): one
dim line that expands to the whole text, as a tool call's result does, instead of a screenful in the conversation."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible, Static

from ...transcript import TO_MODEL

SHORT = 4  # lines of a note shown whole; a longer one is folded
TITLE = 100  # characters of its first line in the folded title


def is_long(text: str) -> bool:
    return len(text.strip().splitlines()) > SHORT


class ToModelEntry(Collapsible):
    """``agentcli → model: (N lines) <its first line>`` on one line, folded; enter or a click shows the whole note."""

    DEFAULT_CSS = """
    ToModelEntry {
        border-top: none; padding: 0 1; margin: 0 0 1 0; background: transparent;
        CollapsibleTitle { padding: 0; color: $text-muted; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
        Contents { padding: 0 0 0 2; color: $text-muted; }
    }
    """

    def __init__(self, text: str) -> None:
        lines = text.strip().splitlines()
        first = " ".join(lines[0].split()) if lines else ""
        first = first if len(first) <= TITLE else first[: TITLE - 1].rstrip() + "…"
        self.text = text.strip()
        super().__init__(Static(Content(self.text)), title=f"{TO_MODEL} ({len(lines)} lines) {first}", collapsed=True)
