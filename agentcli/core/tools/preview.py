"""What an approval shows of a file change: only the changed lines with some context, or a new file's
head and tail; capped, so a question about a huge file stays readable.

The lines are a unified diff without its two file headers: ``@@ -12,4 +12,5 @@`` opens a hunk, then
lines start with ``-`` (removed), ``+`` (added) or a space (kept). A line starting with ``…`` says
what was left out. Every front end renders these lines; none computes a diff of its own.
"""

from __future__ import annotations

import difflib

CONTEXT = 3  # unchanged lines shown around each change
MAX_LINES = 60  # lines of a diff shown; the rest is counted
NEW_HEAD, NEW_TAIL = 20, 10  # lines shown from the start and the end of a new file
MAX_CHARS = 400  # characters of one line shown


def file_diff(before: str | None, after: str) -> tuple[str, ...]:
    """The change from ``before`` (None: there is no file yet) to ``after``, as diff lines."""
    new = after.splitlines()
    if before is None:
        if not new:
            return ("… a new, empty file",)
        body = [f"+{line}" for line in new]
        if len(new) > NEW_HEAD + NEW_TAIL + 1:
            hidden = len(new) - NEW_HEAD - NEW_TAIL
            body = body[:NEW_HEAD] + [f"… {hidden} more lines"] + body[-NEW_TAIL:]
        return tuple(_cut(line) for line in [f"@@ -0,0 +1,{len(new)} @@", *body])
    lines = list(difflib.unified_diff(before.splitlines(), new, lineterm="", n=CONTEXT))[2:]  # no ---/+++
    if not lines:
        return ("… no change: the new content is the file's content",)
    if len(lines) > MAX_LINES:
        rest = lines[MAX_LINES:]
        changed = sum(1 for line in rest if line.startswith(("+", "-")))
        lines = lines[:MAX_LINES] + [f"… {len(rest)} more lines of the diff ({changed} changed)"]
    return tuple(_cut(line) for line in lines)


def _cut(line: str) -> str:
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 1] + "…"
