"""Blocking work started in a thread of its own, its outcome in a future (awaited with
``asyncio.wrap_future``). Only the standard library: the TUI uses it before the engine is imported."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def in_thread(work: Callable[[], T], name: str) -> Future[T]:
    """Start blocking ``work`` in a thread of its own now; its result, or its error, comes in the future."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # re-raised where the result is awaited
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future
