"""How a headless run ends the process: at once, once its answer is out and its session closed."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable
from typing import NoReturn


def leave(code: int) -> NoReturn:
    """End the process now that a headless run has printed its answer and closed its session.

    The interpreter's own teardown of every loaded module takes hundreds of milliseconds and
    nobody waits for it. What must happen still does: the exit hooks (they kill process groups
    still running, such as background shells) and flushing standard output and error.
    """
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:  # the reader went away with the last words unread
            code = code or 141
        except (OSError, ValueError):
            pass
    os._exit(code)


async def leaving_after(main: Awaitable[int]) -> int:
    """``main``, then the process's end (``leave``) with its code, from inside the event loop: ``asyncio.run``'s
    teardown would first join the default executor's threads from a thread it starts (3-70 ms on a busy
    machine, beside the SDK import) for a process about to end; what must happen still does (``leave``)."""
    leave(await main)
