"""An assistant message as it streams: settled lines are printed for good, the last few stay live.

Rendering the whole text again on each update keeps Markdown right (a list, a code fence)
while it grows. Only the last ``tail`` lines can still change, so only those are redrawn;
when the message ends, everything left is printed once. Nothing is printed twice.
"""

from __future__ import annotations

from typing import Callable

from rich.markdown import Heading, Markdown

from .screen import Painter

MARKDOWN_TAIL = 6  # lines of rendered Markdown that may still change while text arrives
CODE_THEME = "monokai"


class LeftHeading(Heading):
    LEVEL_ALIGN = {**Heading.LEVEL_ALIGN, "h1": "left"}


class TerminalMarkdown(Markdown):
    """rich's Markdown with every heading flush left, as in a scrolling terminal."""

    elements = {**Markdown.elements, "heading_open": LeftHeading}


def markdown_renderer(painter: Painter) -> Callable[[str, bool], list[str]]:
    def render(text: str, final: bool) -> list[str]:
        return painter.lines(TerminalMarkdown(text, code_theme=CODE_THEME, hyperlinks=False))
    return render


def plain_renderer(text: str, final: bool) -> list[str]:
    """Raw text by lines; while streaming, the last line is the unfinished one."""
    return text.rstrip("\n").split("\n") if final else text.split("\n")


class TextStream:
    def __init__(self, render: Callable[[str, bool], list[str]], tail: int) -> None:
        self.render = render
        self.tail = tail
        self.text = ""
        self.printed = 0  # rendered lines already printed for good

    def add(self, delta: str) -> None:
        self.text += delta

    def step(self, final: bool = False) -> tuple[list[str], list[str]]:
        """The lines to print for good now, and the live tail."""
        lines = self.render(self.text, final) if self.text.strip() else []
        settled = len(lines) if final else max(self.printed, len(lines) - self.tail)
        new = lines[self.printed:settled]
        self.printed = max(self.printed, settled)
        return new, lines[settled:]
