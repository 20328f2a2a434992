"""The user's status line (the ``statusLine`` setting, ui/status_line.py) under the prompt: hidden until its
command printed something."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from ...status_line import StatusLineRunner, facts

if TYPE_CHECKING:
    from ....core.door import SessionSurface


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; color: $foreground; text-wrap: nowrap; text-overflow: ellipsis;
                 &.-empty { display: none; } }
    """

    def __init__(self) -> None:
        super().__init__(id="status-line", classes="-empty", markup=False)
        self.runner: StatusLineRunner | None = None
        self.padding_columns = 0
        self.looked = False  # the setting was read (once, as line mode does): without a command nothing is done

    def changed(self, session: SessionSurface, busy: bool) -> None:
        """Something the line may show changed: its command runs again (debounced) with the session's facts."""
        if not self.looked:
            self.looked = True
            command = session.status_command()
            if command is not None:
                self.padding_columns = command.padding
                self.runner = StatusLineRunner(command, show=self.show_line, warn=self.warn)
        if self.runner is not None:
            self.runner.changed(facts(session, busy=busy))

    def show_line(self, line: str) -> None:
        self.set_class(not line, "-empty")
        self.update(Text(" " * self.padding_columns) + Text.from_ansi(line))

    def warn(self, text: str) -> None:
        self.notify(text, severity="warning", timeout=10)

    def on_unmount(self) -> None:
        if self.runner is not None:
            self.runner.close()
