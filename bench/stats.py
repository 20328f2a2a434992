"""Results: several runs of a number, summarised as median and min–max, and table rows."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Stat:
    """Several runs of one quantity."""

    values: list[float]
    unit: str = ""
    digits: int = 1

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def lo(self) -> float:
        return min(self.values)

    @property
    def hi(self) -> float:
        return max(self.values)

    def num(self, value: float) -> str:
        return f"{value:,.{self.digits}f}"

    def __str__(self) -> str:
        unit = f" {self.unit}" if self.unit and self.unit != "×" else self.unit
        if len(self.values) == 1 or self.lo == self.hi:
            return f"{self.num(self.median)}{unit}"
        return f"{self.num(self.median)}{unit} ({self.num(self.lo)}–{self.num(self.hi)})"


def paced(runs: int, budget: float, minimum: int = 3) -> Iterator[int]:
    """Run indexes 0..runs-1, stopping early (after ``minimum``) when the next run would overrun
    ``budget`` seconds: on a slow or busy machine a measure takes fewer runs, not forever."""
    started = time.monotonic()
    for i in range(runs):
        elapsed = time.monotonic() - started
        if i >= minimum and elapsed / i * (i + 1) > budget:
            return
        yield i


def ratios(ours: list[float], theirs: list[float]) -> Stat:
    """Per-run ratios of paired runs (run i of ours against run i of theirs)."""
    return Stat([a / b for a, b in zip(ours, theirs, strict=True) if b], "×", 2)


@dataclass
class Row:
    """One line of the results table."""

    group: str
    name: str
    ours: str
    peer: str = ""
    ratio: str = ""
    note: str = ""


@dataclass
class Section:
    """One measure's rows, plus notes on method shown under the table."""

    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def row(self, name: str, ours: object, peer: object = "", ratio: object = "", note: str = "") -> None:
        self.rows.append(Row(self.title, name, str(ours), str(peer), str(ratio), note))

    def compare(
        self,
        name: str,
        ours: list[float],
        peer_name: str,
        theirs: list[float],
        unit: str = "ms",
        digits: int = 1,
        note: str = "",
    ) -> Stat:
        """A row with our runs, the peer's paired runs, and the per-run ratio. Returns the ratio."""
        r = ratios(ours, theirs)
        runs = f"{len(ours)} runs"
        self.row(
            name,
            Stat(ours, unit, digits),
            f"{peer_name}: {Stat(theirs, unit, digits)}",
            r,
            f"{note}; {runs}" if note else runs,
        )
        return r

    def not_measured(self, name: str, reason: str) -> None:
        self.row(name, "not measured yet", note=reason)
