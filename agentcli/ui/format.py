"""How every front end writes durations and token counts, so a number reads the same everywhere."""

from __future__ import annotations


def seconds(value: float) -> str:
    """0.04 → '0.0s', 7.2 → '7.2s', 12.4 → '12s', 125 → '2m 05s'."""
    if value < 10:
        return f"{value:.1f}s"
    if value < 60:
        return f"{value:.0f}s"
    minutes, rest = divmod(int(value), 60)
    return f"{minutes}m {rest:02d}s"


def tokens(n: int) -> str:
    """12345 → '12.3k'."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)
