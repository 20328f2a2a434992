"""The conversation's plain entries: the user's message, a notice, a command's report, and the marker where
earlier messages are hidden (widgets/conversation.py draws them)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class UserEntry(Static):
    DEFAULT_CSS = """
    UserEntry {
        margin: 1 0 1 0; padding: 0 1; background: $primary 12%; border-left: thick $primary;
        color: $foreground;
    }
    """

    def __init__(self, text: str, label: str = "you") -> None:
        super().__init__(Content.assemble(Content.styled(f"{label} ", "bold $primary"), text.rstrip()))


class NoticeEntry(Static):
    DEFAULT_CSS = """
    NoticeEntry {
        margin: 0 0 1 0; padding: 0 1; color: $text-muted;
        &.-warning { color: $warning; }
        &.-error { color: $error; }
        &.-block { color: $foreground; background: $boost; padding: 1 2; }
    }
    """

    def __init__(self, text: str, level: str = "info", *, block: bool = False) -> None:
        classes = " ".join(f"-{word}" for word in level.split())  # "warning retry": -warning -retry
        super().__init__(Content(text), classes=classes + (" -block" if block else ""))


class ReportEntry(Static):
    """What a command reports (/cost, /agents, /help): drawn again to the width the conversation has."""

    DEFAULT_CSS = "ReportEntry { margin: 0 0 1 0; padding: 1 2; background: $boost; }"


class PrunedMarker(Static):
    DEFAULT_CSS = "PrunedMarker { color: $text-muted; text-style: italic; padding: 0 1; }"

    def __init__(self) -> None:
        super().__init__("⋯ earlier messages are hidden here; scroll up to see them (the session keeps them all)")
