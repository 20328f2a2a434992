"""An answer of the model, drawn as Markdown. Its own module: markdown-it and pygments load with it,
on the first answer, not at startup (``conversation.py`` imports it where an answer is drawn)."""

from __future__ import annotations

from textual.widgets import Markdown


class AssistantEntry(Markdown):
    DEFAULT_CSS = """
    AssistantEntry { margin: 0 0 1 0; padding: 0 1 0 1; background: transparent; }
    """
