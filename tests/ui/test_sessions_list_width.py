"""`agentcli sessions list` on a terminal: every row fits its width, and the first prompt keeps at least 20
characters, the counts and the workspace giving way first."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.core.events import Usage
from agentcli.core.storage.store import SessionInfo
from agentcli.sessions_cli import MIN_PROMPT, list_lines

PROMPT = "find where the shopping cart is handled and explain how the totals are computed, step by step"


def sessions() -> list[SessionInfo]:
    return [
        SessionInfo(
            id=f"20261205-00{n}000-ab1{n}",
            path=Path(f"/s/{n}.jsonl"),
            cwd=f"/home/me/src/project-{n}",
            started="2026-12-05T00:10:00+00:00",
            first_prompt=PROMPT,
            turns=12,
            subagents=["sa-1"],
            usage=Usage(input_tokens=12_000, output_tokens=300),
        )
        for n in range(3)
    ]


@pytest.mark.parametrize(
    "width, everywhere", [(60, False), (80, False), (100, False), (160, False), (80, True), (100, True), (160, True)]
)
def test_rows_fit_the_terminal_and_keep_the_prompt_readable(width, everywhere):
    lines = list(list_lines(sessions(), everywhere, width))
    assert all(len(line) <= width for line in lines), "\n".join(lines)
    head, rows = lines[0], lines[1:]
    assert head.startswith("ID") and head.endswith("FIRST PROMPT")
    start = head.index("FIRST PROMPT")
    for row in rows:
        shown = row[start:]
        assert len(shown) >= MIN_PROMPT and PROMPT.startswith(shown.removesuffix("…")), row
        assert row.startswith("20261205-00") and "2026-12-05" in row  # the id and the start always stay


def test_the_counts_give_way_only_when_needed():
    wide = list(list_lines(sessions(), False, 160))
    assert wide[0].split()[:6] == ["ID", "STARTED", "TURNS", "AGENTS", "TOKENS", "FIRST"]
    assert wide[1].endswith(PROMPT) and "12.3k" in wide[1]
    assert list(list_lines(sessions(), False, 100))[1].endswith("…")
    narrow = list(list_lines(sessions(), False, 80))[0]
    assert "AGENTS" not in narrow and "TOKENS" in narrow and "TURNS" in narrow
    piped = list(list_lines(sessions(), True))  # not a terminal: whole, as before
    assert piped[1].endswith(PROMPT) and "/home/me/src/project-0" in piped[1]
