"""A program on a real terminal (a pty), and what a user would see of it, as pyte (a VT100 emulator) draws it
from what the program wrote: the screen and the lines scrolled off it, without what was drawn and then erased. The emulator answers the
program's cursor-position queries as a terminal does (prompt-toolkit asks one at each prompt)."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
from pathlib import Path

import pyte

from tests.waiting import wait_until


class AnsweringScreen(pyte.HistoryScreen):
    """pyte's screen, which writes its answers to the program's queries back to the terminal (pyte's hook for it)."""

    def __init__(self, leader: int, columns: int, rows: int) -> None:
        super().__init__(columns, rows, history=10_000)
        self.leader = leader

    def write_process_input(self, data: str) -> None:
        os.write(self.leader, data.encode())


def as_a_foreground_command() -> None:
    """A ``preexec_fn``: SIGINT and SIGQUIT at their defaults, as a shell gives them to its foreground command. A
    test run started in the background of a script (`make test &`) ignores both, and so does every child it starts;
    Python keeps an ignored SIGINT ignored, so a test's SIGINT (a user's ctrl+c) would never arrive."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


class Terminal:
    def __init__(self, argv: list[str], *, cwd: Path, env: dict[str, str], columns: int = 120, rows: int = 40) -> None:
        import pty

        self.leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.screen = AnsweringScreen(self.leader, columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**env, "TERM": "xterm"},
            stdin=follower,
            stdout=follower,
            stderr=follower,
            start_new_session=True,
            preexec_fn=as_a_foreground_command,
        )
        os.close(follower)

    def drain(self) -> None:
        """Read what the program wrote so far onto the screen."""
        while select.select([self.leader], [], [], 0)[0]:
            try:
                data = os.read(self.leader, 65536)
            except OSError:
                return
            if not data:
                return
            self.stream.feed(data)

    @property
    def text(self) -> str:
        """The lines scrolled off the screen, then the screen's."""
        self.drain()
        columns = self.screen.columns
        gone = ["".join(line[x].data for x in range(columns)) for line in self.screen.history.top]
        return "\n".join(line.rstrip() for line in [*gone, *self.screen.display])

    def shows(self, wanted: str) -> bool:
        assert self.proc.poll() is None, f"the program ended (exit {self.proc.returncode}):\n{self.text}"
        return wanted in self.text

    def wait_for(self, wanted: str) -> None:
        wait_until(lambda: self.shows(wanted), f"{wanted!r} on the screen", detail=lambda: self.text)

    def type(self, keys: str) -> None:
        os.write(self.leader, keys.encode())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self.leader)
