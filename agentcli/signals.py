"""SIGTERM and SIGHUP end agentcli the way an interrupt does, in every front end.

Without a handler Python dies at once, leaving tool processes running and the session file
without its last records. With one, the front end cancels the running turn (the bash tool
then stops what its call started, and the loop writes a result for every cancelled call),
closes the session (which stops background shells), and exits with 128 + the signal number.

SIGHUP mostly means the terminal is gone: from then on, every read or write on it fails (EIO),
and a front end that tries to draw or print its goodbye would end with the wrong status, or hang.
So on SIGHUP the standard streams that were a terminal are pointed at /dev/null first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def exit_code(signum: int) -> int:
    """The conventional exit status of a process ended by ``signum`` (143 for SIGTERM, 129 for SIGHUP)."""
    return 128 + signum


@contextlib.contextmanager
def exit_signals(handler: Callable[[int], None]) -> Iterator[None]:
    """Call ``handler(signum)`` on the running loop when SIGTERM or SIGHUP arrives, while inside."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    terminals = [fd for fd in (0, 1, 2) if _isatty(fd)]  # asked now: a hung-up terminal no longer says

    def on_signal(signum: int) -> None:
        if signum == signal.SIGHUP:
            _let_go(terminals)
        handler(signum)

    for signum in EXIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
    try:
        yield
    finally:
        for number in installed:
            loop.remove_signal_handler(number)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _let_go(fds: list[int]) -> None:
    """Point ``fds`` (the terminal's) at /dev/null: reads end, writes vanish, nothing fails with EIO."""
    if not fds:
        return
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in fds:
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)


async def run_until_signal(app: Any) -> Any:
    """Run a Textual app; SIGTERM and SIGHUP quit it as /exit does, with their exit status as its result."""

    def on_signal(signum: int) -> None:
        if signum == signal.SIGHUP:
            _unblock_writer(app)
        app.exit(exit_code(signum))

    with exit_signals(on_signal):
        return await app.run_async()


def _unblock_writer(app: Any) -> None:
    """Keep a Textual app able to quit after its terminal hung up.

    Textual writes to the terminal from a thread through a short queue. A write that failed with
    EIO ended that thread, so the queue fills and the app blocks for ever in its next write or in
    shutting down. Once the thread has ended, this empties its queue instead (the pinned Textual's
    driver keeps the thread in ``_writer_thread``).
    """
    writer = getattr(getattr(app, "_driver", None), "_writer_thread", None)
    queue = getattr(writer, "_queue", None)
    if writer is None or queue is None:
        return

    def drain() -> None:
        writer.join()  # it ends on EIO, or on the stop sentinel: either way nobody else reads the queue
        while True:
            queue.get()

    threading.Thread(target=drain, name="agentcli-hangup", daemon=True).start()
