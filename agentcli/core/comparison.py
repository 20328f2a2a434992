"""Best-of-N attempts side by side: one attempt's facts (``Attempt``), and the one table of them (``rows``) that the
main agent's tool result, the TUI, line mode and ``-p`` all show (``AttemptsCompared`` in events.py carries them).

A leaf of core's vocabulary: plain data and text, so every room and every front end can take it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .units import dollars, seconds, tokens
from .vocabulary import Status

CHECK_STATES = ("passed", "failed", "not run", "")  # "": no check was given


@dataclass(frozen=True)
class Attempt:
    """One attempt of a best-of-N errand, once it ended and its check ran in its worktree."""

    id: str  # the subagent's id, sa-3
    status: Status  # how the child ended
    model: str = ""  # the model it worked with
    diff: str = ""  # what it changed: "2 files changed (+5 −1): a.py +3 −1, …", or why nothing
    files: int = 0
    added: int = 0
    removed: int = 0
    check: str = ""  # one of CHECK_STATES
    check_output: str = ""  # the check's last lines, or why it did not run
    mark: str = ""  # its receipt's mark: "unverified", "no answer", or "" (backed by its calls)
    tool_calls: int = 0
    tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0

    @classmethod
    def from_dict(cls, data: Any) -> Attempt | None:
        """A stored attempt; None for a damaged one."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})
        except TypeError:
            return None

    def as_dict(self) -> dict[str, Any]:
        """The attempt as ``-p``'s json shows it."""
        return {
            "id": self.id,
            "status": self.status,
            "model": self.model,
            "diff": self.diff,
            "files": self.files,
            "added": self.added,
            "removed": self.removed,
            "check": self.check or None,
            "check_output": self.check_output,
            "receipt": self.mark or "verified",
            "tool_calls": self.tool_calls,
            "tokens": self.tokens,
            "cost_usd": self.cost,
            "seconds": self.seconds,
        }


NEXT_STEP = "/diff sa-N shows an attempt's changes, /merge sa-N takes it, /discard sa-N drops one."
HEADER = ("attempt", "status", "diff", "check", "receipt", "tokens", "cost", "time")


def rows(attempts: tuple[Attempt, ...] | list[Attempt]) -> list[tuple[str, ...]]:
    """The comparison as a table: ``HEADER``, then one row per attempt."""
    body = [
        (
            a.id + (f" ({a.model})" if a.model else ""),
            a.status,
            f"{a.files} file{'' if a.files == 1 else 's'} +{a.added} −{a.removed}" if a.files else "no changes",
            a.check or "—",
            a.mark or "verified",
            tokens(a.tokens),
            dollars(a.cost) if a.cost is not None else "—",
            seconds(a.seconds),
        )
        for a in attempts
    ]
    return [HEADER, *body]


def table_text(attempts: tuple[Attempt, ...] | list[Attempt]) -> str:
    """``rows`` as plain text in aligned columns (the tool result, line mode)."""
    table = rows(attempts)
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table)
