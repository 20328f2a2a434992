"""The terminal as line mode draws it: lines that scroll away for good, and a few live lines at the bottom.

Everything line mode prints goes through ``Screen``. Permanent lines are written above the
live region; the live region (a streaming answer's last lines, running tools, an approval
question) is erased and redrawn in one write, inside a synchronized update, so it never
flickers. Without a terminal there is no live region: only permanent lines are written.

``Painter`` turns rich renderables into those lines: with ANSI styles when color is on,
as plain text otherwise.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterator
from typing import TextIO

from rich.console import Console, RenderableType
from rich.text import Text

SYNC_START, SYNC_END = "\x1b[?2026h", "\x1b[?2026l"  # terminals without mode 2026 ignore these


def terminal_size(out: TextIO) -> tuple[int, int]:
    try:
        size = os.get_terminal_size(out.fileno())
        return size.columns, size.lines
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return 100, 40


class Screen:
    def __init__(self, out: TextIO, *, live: bool, size: Callable[[], tuple[int, int]]) -> None:
        self.out = out
        self.live = live
        self.size = size
        self._live: list[str] = []
        self._rows = 0  # rows the live region takes on screen now

    @property
    def width(self) -> int:
        """Columns to render at: one less than the terminal, so no line ever wraps by itself."""
        return max(20, self.size()[0] - 1)

    def print(self, *lines: str, live: list[str] | None = None) -> None:
        """Write lines for good, above the live region (replaced by ``live`` when given)."""
        erase = self._erase()
        if live is not None:
            self._live = list(live)
        self._write(erase + "".join(f"{line}\n" for line in lines) + self._draw())

    def set_live(self, lines: list[str]) -> None:
        """Replace the live region; each line must fit the width."""
        if not self.live or (lines == self._live and (self._rows or not lines)):
            return
        self._live = list(lines)
        self._write(self._erase() + self._draw())

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No live region while a prompt of prompt-toolkit's draws on the terminal (a server's question in a
        turn): it is erased now and drawn again after. Redrawn under the prompt, it erased what the prompt
        drew and moved the cursor the prompt counts on, so the question's answers never showed."""
        live, self.live = self.live, False
        if live and self._rows:
            self.out.write(self._erase())
            self.out.flush()
        try:
            yield
        finally:
            self.live = live

    def _erase(self) -> str:
        if not self._rows:
            return ""
        rows, self._rows = self._rows, 0
        return f"\r\x1b[{rows}A\x1b[J"

    def _draw(self) -> str:
        if not self.live or not self._live:
            return ""
        lines = self._live[-max(1, self.size()[1] - 2) :]  # never taller than the terminal
        self._rows = len(lines)
        return "".join(f"{line}\n" for line in lines)

    def signal(self, text: str) -> None:
        """Write a terminal notification (ui/notify.py) as it is, on a terminal only."""
        if self.live:
            self.out.write(text)
            self.out.flush()

    def _write(self, text: str) -> None:
        if not text:
            return
        if self.live:
            text = SYNC_START + text + SYNC_END
        self.out.write(text)
        self.out.flush()


class Painter:
    """Renders rich renderables to lines of text at the screen's width."""

    def __init__(self, color_system: str | None, width: Callable[[], int]) -> None:
        self.color = color_system is not None
        self.width = width
        self.console = Console(
            file=io.StringIO(),
            force_terminal=self.color,
            color_system=color_system,  # type: ignore[arg-type]
            no_color=not self.color,
            highlight=False,
            emoji=False,
            markup=False,
            width=80,
            legacy_windows=False,
        )

    def lines(self, renderable: RenderableType) -> list[str]:
        """All lines of ``renderable``, wrapped at the width, without empty lines at either end."""
        self.console.width = self.width()
        with self.console.capture() as capture:
            self.console.print(renderable)
        lines = capture.get().split("\n")
        while lines and not visible(lines[-1]):
            lines.pop()
        start = 0
        while start < len(lines) and not visible(lines[start]):
            start += 1
        return lines[start:]

    def line(self, text: Text | str) -> str:
        """One line, cut with an ellipsis when too wide."""
        text = Text(text) if isinstance(text, str) else text.copy()
        if "\n" in text.plain:
            text = Text(" ").join(text.split("\n"))
        text.truncate(self.width(), overflow="ellipsis")
        found = self.lines(text)
        return found[0] if found else ""


def visible(line: str) -> bool:
    """False for a line with nothing in it; spaces count (a code block's padding has a background)."""
    return bool(Text.from_ansi(line).plain)
