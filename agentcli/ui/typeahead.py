"""What is typed while an interactive front end starts up keeps what it is.

In the terminal's own (cooked) mode, an Enter typed ahead arrives as a newline, ctrl+j, which both
front ends take for "add a line", and every key is echoed over the screen being drawn. So from the
moment the command line knows a front end will start until that front end is done, the terminal stays
uncooked: no line editing, no echo, no CR→NL translation (signals still work). Textual and
prompt-toolkit set their own raw mode on top and come back to this one; the user's mode is restored at
the end.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TextIO

try:
    import termios
except ImportError:  # not a POSIX system: nothing to keep
    termios = None  # type: ignore[assignment]


@contextlib.contextmanager
def typed_ahead_kept(stream: TextIO | None = None) -> Iterator[None]:
    if termios is None:
        yield
        return
    try:
        fd = (stream or sys.stdin).fileno()
        before = termios.tcgetattr(fd)
    except (AttributeError, OSError, ValueError, termios.error):  # not a terminal
        yield
        return
    uncooked = [*before[:6], list(before[6])]
    uncooked[0] &= ~termios.ICRNL  # iflag
    uncooked[3] &= ~(termios.ICANON | termios.ECHO)  # lflag
    uncooked[6][termios.VMIN], uncooked[6][termios.VTIME] = 1, 0
    with contextlib.suppress(termios.error):
        termios.tcsetattr(fd, termios.TCSANOW, uncooked)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, before)
