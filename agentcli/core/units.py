"""How durations and token counts are written, for the model and for people alike.

One formatter, so a number reads the same in the footer the model gets (``[sa-1 · done · 7 turns ·
12.3k tokens · 41 s]``), on a task line, in the side panel and in ``sessions show``.
"""

from __future__ import annotations


def seconds(value: float) -> str:
    """0.04 → '0.0 s', 7.2 → '7.2 s', 41.3 → '41 s', 125 → '2 min 05 s'."""
    if value < 9.95:
        return f"{value:.1f} s"
    if value < 59.5:
        return f"{value:.0f} s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes} min {rest:02d} s"


def tokens(n: int) -> str:
    """12345 → '12.3k', 2_500_000 → '2.5M'."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def turns(n: int) -> str:
    """1 → '1 turn', 7 → '7 turns'."""
    return f"{n} turn{'' if n == 1 else 's'}"


def dollars(value: float) -> str:
    """0.5 → '$0.50', 0.0123 → '$0.0123': a budget or what was spent of it."""
    return f"${value:.2f}" if value >= 0.1 or value == 0 else f"${value:.4f}"


def quoted(text: str, cap: int) -> str:
    """``text`` on one line in double quotes, cut to ``cap`` characters with "…": a user's or a model's words
    named inside agentcli's own lines (a receipt, a denial), where a newline must not end them. Nothing is
    escaped, so a grep pattern's backslashes read as the model wrote them."""
    flat = " ".join(text.split())
    return f'"{flat if len(flat) <= cap else flat[: cap - 1] + "…"}"'
