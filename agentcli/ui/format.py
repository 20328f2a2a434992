"""How every front end writes durations and token counts: the engine's own formatter, so a number
reads the same on the screen as in the footer the model gets."""

from __future__ import annotations

from ..core.units import seconds, tokens

__all__ = ["seconds", "tokens"]


def flat(text: str) -> str:
    """``text`` on one line: each run of white space (newlines too) becomes one space."""
    return " ".join(text.split())


def word_count(text: str) -> int:
    return len(text.split())
