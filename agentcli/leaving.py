"""How the process ends: a headless run at once, once its answer is out and its session closed (``leave``); and
output that can no longer be written, with one sentence and nothing left to fail again at exit."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable
from typing import IO, NoReturn


def cannot_write(where: str, exc: OSError) -> str:
    """The sentence for a write to ``where`` that failed (a full disk, an I/O error)."""
    return f"agentcli: cannot write to {where} ({exc.strerror or exc}); stopped."


def discard_unwritten(stream: IO[str]) -> None:
    """What is still buffered for ``stream`` (whose reader went away, or which cannot be written) goes nowhere at
    exit instead of failing again: its descriptor now points at /dev/null. A stream with no descriptor is left."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)


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
