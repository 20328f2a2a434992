"""How much of a tool's output the model reads: the caps, the cut to head and tail, and bytes made text."""

from __future__ import annotations

import re

# Tool output longer than this is cut to head and tail (characters).
OUTPUT_CAP = 30_000


def cap_output(text: str, limit: int = OUTPUT_CAP) -> str:
    """Cut ``text`` to its head and tail, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    cut = len(text) - len(head) - len(tail)
    lines = text.count("\n", len(head), len(text) - len(tail))
    return f"{head}\n… [{cut:,} characters ({lines:,} lines) cut] …\n{tail}"


BASH_CAP = OUTPUT_CAP - 1_000  # bash's cap: room for the status lines, so the registry never cuts again
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def decode(data: bytes) -> str:
    """A command's output as text: UTF-8 (bad bytes replaced), terminal escapes left out."""
    return _ANSI.sub("", data.decode("utf-8", errors="replace"))
