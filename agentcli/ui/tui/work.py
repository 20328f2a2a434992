"""What runs in workers: the engine on one user message (or /compact), and the SDK warm-up import.

Workers touch no widget: they post a ``TurnEnded`` message and the app's handler takes it from there.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Coroutine
from typing import Any

from ...core.door import LLMError, MissingCredentials, import_frozen, import_sdk
from .messages import TurnEnded


async def report(work: Coroutine[Any, Any, Any], kind: str, post: Callable[[TurnEnded], Any]) -> None:
    """Await the engine and post how it ended. Runs as the worker: it touches no widget."""
    try:
        result = await work
    except asyncio.CancelledError:
        post(TurnEnded("interrupted"))
        raise
    except MissingCredentials as exc:
        post(TurnEnded("no_key", str(exc)))
    except LLMError as exc:
        post(TurnEnded("error", str(exc)))
    except Exception as exc:  # a bug must not take the app down; say what happened
        post(TurnEnded("error", f"Unexpected error: {type(exc).__name__}: {exc}"))
    else:
        if kind == "compact":
            post(TurnEnded("done" if result else "nothing"))
        else:
            post(TurnEnded(getattr(result, "status", "done")))


def warm_up_import() -> Callable[[], None]:
    """The session is open: what imports the SDK in a worker thread. When the command line turned the collector
    off for startup, it stays off through the import, then what startup and the import made is frozen (never
    scanned again: ``import_frozen``) and the collector is on again; otherwise (tests) the import alone."""
    if gc.isenabled():
        return import_sdk
    return import_frozen
