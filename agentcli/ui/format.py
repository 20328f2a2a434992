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


def bar(value: int, full: int, width: int) -> str:
    """``value`` out of ``full`` as ``width`` cells, filled from the left: '███░░░░░'."""
    filled = min(width, round(width * value / full)) if full > 0 else 0
    return "█" * filled + "░" * (width - filled)


def context_bars(used: int, alone: int, window: int, width: int = 20) -> list[str]:
    """The main context as it is, with subagents, and as it would weigh had it done their work itself."""
    def line(label: str, value: int) -> str:
        share = f" ({100 * value / window:.0f}%)" if window else ""
        return f"{label} {bar(value, window, width)} {tokens(value)}{share}"
    return [line("with subagents   ", used), line("without subagents", alone)]
