"""Keys typed while a front end starts: on a real terminal (a pty), Enter stays Enter and nothing echoes."""

from __future__ import annotations

import os
import pty
import termios

from agentcli.ui.typeahead import typed_ahead_kept


class Terminal:
    def __init__(self) -> None:
        self.leader, self.follower = pty.openpty()

    def fileno(self) -> int:  # the front end's standard input
        return self.follower

    def close(self) -> None:
        os.close(self.leader)
        os.close(self.follower)


def test_enter_typed_ahead_arrives_as_enter_unechoed_and_the_mode_comes_back():
    terminal = Terminal()
    try:
        cooked = termios.tcgetattr(terminal.follower)
        assert cooked[3] & termios.ICANON and cooked[0] & termios.ICRNL  # a fresh terminal is cooked
        with typed_ahead_kept(terminal):  # type: ignore[arg-type]
            os.write(terminal.leader, b"hi\r")
            assert os.read(terminal.follower, 100) == b"hi\r"  # cooked, it would be b"hi\n": ctrl+j
            os.set_blocking(terminal.leader, False)
            try:
                echoed = os.read(terminal.leader, 100)
            except BlockingIOError:
                echoed = b""
            assert echoed == b""  # cooked, "hi" would be drawn over the starting screen
        assert termios.tcgetattr(terminal.follower) == cooked
    finally:
        terminal.close()


def test_without_a_terminal_it_stands_aside(tmp_path):
    with open(tmp_path / "piped", "w+") as piped, typed_ahead_kept(piped):  # a file has no terminal mode:
        piped.write("still usable")  # termios refuses it, and the front end runs as before
