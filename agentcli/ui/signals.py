"""SIGTERM and SIGHUP end agentcli the way an interrupt does, in every front end.

Without a handler Python dies at once, leaving tool processes running and the session file
without its last records. With one, the front end cancels the running turn (the bash tool
then stops what its call started, and the loop writes a result for every cancelled call),
closes the session (which stops background shells), and exits with 128 + the signal number.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any, Callable, Iterator

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def exit_code(signum: int) -> int:
    """The conventional exit status of a process ended by ``signum`` (143 for SIGTERM, 129 for SIGHUP)."""
    return 128 + signum


@contextlib.contextmanager
def exit_signals(handler: Callable[[int], None]) -> Iterator[None]:
    """Call ``handler(signum)`` on the running loop when SIGTERM or SIGHUP arrives, while inside."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    for signum in EXIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop.add_signal_handler(signum, handler, signum)
            installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


async def run_until_signal(app: Any) -> Any:
    """Run a Textual app; SIGTERM and SIGHUP quit it as /exit does, with their exit status as its result."""
    with exit_signals(lambda signum: app.exit(exit_code(signum))):
        return await app.run_async()
