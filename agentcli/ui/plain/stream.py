"""An assistant message as it streams: settled lines are printed for good, the last few stay live.

Rendering the text again on each update keeps Markdown right (a list, a code fence) while it
grows. Only the last ``tail`` lines can still change, so only those are redrawn; when the
message ends, everything left is printed once. Nothing is printed twice.

To keep each render cheap, a long message is cut into segments at top-level block boundaries
(a blank line outside code fences and lists) once everything before the cut is printed; only
the current segment is rendered again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from rich.markdown import Heading, Markdown

from ..markdown_rules import literal_underscores
from .screen import Painter, visible

MARKDOWN_TAIL = 6  # lines of rendered Markdown that may still change while text arrives
SEGMENT_AFTER = 1500  # characters of the current segment before we try to cut it
CODE_THEME = "monokai"
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_CONTINUES = re.compile(r"^(\s|[-*+] |\d+[.)] )")  # indented, or a list item: may belong to the block above

Render = Callable[[str, bool], list[str]]


class LeftHeading(Heading):
    LEVEL_ALIGN = {**Heading.LEVEL_ALIGN, "h1": "left"}


class TerminalMarkdown(Markdown):
    """rich's Markdown with every heading flush left, as in a scrolling terminal, and its underscores as text
    (``markdown_rules``): rich builds its parser inside ``__init__``, so the text is parsed here instead."""

    elements = {**Markdown.elements, "heading_open": LeftHeading}

    def __init__(self, markup: str, **options: Any) -> None:
        super().__init__("", **options)
        self.markup, self.parsed = markup, terminal_parser().parse(markup)


@cache
def terminal_parser() -> MarkdownIt:
    """rich's own parser (commonmark, strikethrough, tables), with underscores as text."""
    return MarkdownIt().enable("strikethrough").enable("table").use(literal_underscores)


def markdown_renderer(painter: Painter) -> Render:
    def render(text: str, final: bool) -> list[str]:
        return painter.lines(TerminalMarkdown(text, code_theme=CODE_THEME, hyperlinks=False))

    return render


def plain_renderer(text: str, final: bool) -> list[str]:
    """Raw text by lines; while streaming, the last line is the unfinished one."""
    return text.rstrip("\n").split("\n") if final else text.split("\n")


def block_starts(text: str) -> list[int]:
    """Offsets of complete lines that start a top-level Markdown block of their own."""
    starts, in_fence, after_blank, offset = [], False, False, 0
    for line in text.splitlines(keepends=True):
        if after_blank and not in_fence and line.strip() and line.endswith("\n") and not _CONTINUES.match(line):
            starts.append(offset)
        if _FENCE.match(line):
            in_fence = not in_fence
        after_blank, offset = not line.strip(), offset + len(line)
    return starts


class TextStream:
    def __init__(self, render: Render, tail: int, segments: bool = False) -> None:
        self.render = render
        self.tail = tail
        self.segments = segments
        self.text = ""
        self.base = 0  # where the current segment starts in ``text``
        self.printed = 0  # lines of the current segment already printed for good
        self.shown = False  # some of it was printed for good (a retry that withdraws it says so)
        self._blocks_seen = 0  # block starts in the segment when we last tried to cut it

    def add(self, delta: str) -> None:
        self.text += delta

    def step(self, final: bool = False) -> tuple[list[str], list[str]]:
        """The lines to print for good now, and the live tail."""
        segment = self.text[self.base :]
        lines = self.render(segment, final) if segment.strip() else []
        settled = len(lines) if final else max(self.printed, len(lines) - self.tail)
        new = lines[self.printed : settled]
        self.printed = max(self.printed, settled)
        self.shown = self.shown or bool(new)
        if self.segments and not final and len(segment) > SEGMENT_AFTER:
            self._cut(segment, lines)
        return new, lines[settled:]

    def _cut(self, segment: str, lines: list[str]) -> None:
        """Start a new segment at the latest block whose lines before it are all printed."""
        starts = block_starts(segment)
        if len(starts) == self._blocks_seen:
            return  # nothing new to cut at since the last try
        self._blocks_seen = len(starts)
        for start in reversed(starts[-3:]):
            head = self.render(segment[:start], True)
            if lines[: len(head)] != head:
                continue  # the block does not render the same on its own; keep it whole
            skip = len(head)
            while skip < len(lines) and not visible(lines[skip]):
                skip += 1
            if skip <= self.printed:
                self.base += start
                self.printed -= skip
                self._blocks_seen = 0
                return
