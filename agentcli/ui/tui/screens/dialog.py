"""The frame every modal question shares: a box centred over the dimmed app. A screen subclasses ``Dialog``, gives
its box the ``dialog`` class, and styles only what differs (its width, height limit, border colour). Default CSS,
not a CSS_PATH: a screen's own stylesheet makes Textual restyle the whole app at its first push."""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

Answer = TypeVar("Answer")


class Dialog(ModalScreen[Answer]):
    DEFAULT_CSS = """
    Dialog {
        align: center middle;
        background: $background 60%;
    }

    Dialog .dialog {
        width: 90;
        max-width: 95%;
        height: auto;
        max-height: 100%;
        padding: 1 2;
        background: $surface;
        border: thick $primary;
    }
    """
