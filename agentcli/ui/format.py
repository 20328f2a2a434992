"""How every front end writes durations and token counts: the engine's own formatter, so a number
reads the same on the screen as in the footer the model gets; and what was spent."""

from __future__ import annotations

from typing import Any

from ..core.content import sources
from ..core.events import Usage
from ..core.units import seconds, tokens, turns

__all__ = ["seconds", "tokens", "turns"]


UNKNOWN_COST = "cost unknown for this model"  # a model agentcli has no price for


def money(usage: Usage, cell: bool = False) -> str:
    """What was spent; ``cell``: in a table's cost column, whose unknown the report's note explains once."""
    if usage.cost is None:  # no price: nothing spent yet costs nothing all the same
        return ("unknown" if cell else UNKNOWN_COST) if usage.total_tokens else f"${0:.4f}"
    return f"${usage.cost:.4f}"


def flat(text: str) -> str:
    """``text`` on one line: each run of white space (newlines too) becomes one space."""
    return " ".join(text.split())


def word_count(text: str) -> int:
    return len(text.split())


def bar(value: int, full: int, width: int) -> str:
    """``value`` out of ``full`` as ``width`` cells, filled from the left: '███░░░░░'."""
    filled = min(width, round(width * value / full)) if full > 0 else 0
    return "█" * filled + "░" * (width - filled)


# What the subagents' own contexts held (``core.events.kept_out``), and the two bars it makes: every
# front end (status bar, panel, /cost, line mode) says them with these words.
KEPT_OUT = "kept out of main context"
WITH, WITHOUT = "with subagents", "without subagents"


def context_bars(used: int, alone: int, window: int, width: int = 20) -> list[str]:
    """The main context as it is, with subagents, and as it would weigh had it done their work itself."""

    def line(label: str, value: int) -> str:
        share = f" ({100 * value / window:.0f}%)" if window else ""
        return f"{label} {bar(value, window, width)} {tokens(value)}{share}"

    return [line(f"{WITH:<{len(WITHOUT)}}", used), line(WITHOUT, alone)]


def sources_text(content: Any) -> str:
    """The pages a message's web searches cite or found, as every front end lists them under it ("" for none)."""
    found = sources(content)
    return (
        "Sources:\n" + "\n".join(f"{n}. {flat(title)} — {url}" for n, (title, url) in enumerate(found, 1))
        if found
        else ""
    )
