"""The one way tests wait: for a condition, with a generous deadline and a message saying what never happened.

A deadline here only guards against a hang; it is never a timing assertion. It is long (``DEADLINE``)
because a loaded 2-core machine can be slow by a factor of ten, and a test that passes waits only as long
as its condition takes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

DEADLINE = 60.0  # seconds; pytest-timeout (pyproject) ends a test that hangs past its whole budget
STEP = 0.01  # seconds between looks at the condition


def _gave_up(what: str, timeout: float, detail: Callable[[], str] | None) -> AssertionError:
    message = f"{what} never happened (waited {timeout:.0f} s)"
    if detail is not None:
        try:
            message += "\n" + detail()
        except Exception as exc:  # the detail is a help; it must not hide the real failure
            message += f"\n(could not describe the state: {exc!r})"
    return AssertionError(message)


def wait_until(
    condition: Callable[[], T], what: str, *, timeout: float = DEADLINE, detail: Callable[[], str] | None = None
) -> T:
    """Block until ``condition()`` is truthy and return its value; fail saying ``what`` never happened."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _gave_up(what, timeout, detail)
        time.sleep(STEP)


# The waits below take a timeout (ASYNC109) rather than leave it to asyncio.timeout, whose bare TimeoutError would
# not say what never happened.
async def until(
    condition: Callable[[], T],
    what: str,
    *,
    timeout: float = DEADLINE,  # noqa: ASYNC109
    detail: Callable[[], str] | None = None,
    step: Callable[[], Awaitable[Any]] | None = None,
) -> T:
    """Let the event loop run until ``condition()`` is truthy and return its value.

    ``step`` is how to let time pass between looks (default: a short sleep); a Pilot passes its
    ``pause`` so that the app processes its messages in between.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _gave_up(what, timeout, detail)
        await (step() if step is not None else asyncio.sleep(STEP))


async def within(awaitable: Awaitable[T], what: str, *, timeout: float = DEADLINE) -> T:  # noqa: ASYNC109
    """Await ``awaitable``; fail saying ``what`` never happened if it takes longer than the deadline."""
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError:
        raise AssertionError(f"{what} never happened (waited {timeout:.0f} s)") from None
