"""The demo's reviewers, for ``/review`` in ``agentcli --demo``: each reads the first changed file, and the
tests reviewer reports the first added line as untested, so the demo shows a review's checked finding.

A reviewer is a child whose brief asks for a ``findings`` block (core/engine/review.py writes it). Standard
library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Blocks = list[dict[str, Any]]
ASKED = "fenced block tagged `findings`"  # in every reviewer's brief
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def is_reviewer(brief: str) -> bool:
    return ASKED in brief


def first_added(diff: str) -> tuple[str, int] | None:
    """The path and new line number of the diff's first added line."""
    path, line = "", 0
    for row in diff.splitlines():
        if row.startswith("+++ "):
            path = row[4:].removeprefix("b/").strip()
        elif match := _HUNK.match(row):
            line = int(match.group(1))
        elif path and line:
            if row.startswith("+"):
                return path, line
            if not row.startswith("-"):
                line += 1
    return None


def step(
    brief: str,
    system: str,
    read: bool,
    tool_use: Callable[[str, dict[str, Any]], dict[str, Any]],
    text: Callable[[str], dict[str, Any]],
) -> Blocks:
    """One reviewer's next reply: read the changed file, then the findings (the tests reviewer's one)."""
    added = first_added(brief)
    if added is not None and not read:
        return [text(f"Reading {added[0]} around the change."), tool_use("read_file", {"path": added[0]})]
    found = []
    if added is not None and "Your concern:\ntests" in system:
        found.append(
            {
                "severity": "low",
                "location": f"{added[0]}:{added[1]}",
                "problem": "No test covers the changed line.",
                "fix": "Add a test that exercises it.",
            }
        )
    return [text("Reviewed the change.\n\n```findings\n" + json.dumps(found) + "\n```")]
