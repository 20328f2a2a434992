"""What runs in workers: the engine on one user message (or /compact), and the SDK warm-up import.

Workers touch no widget: they post a ``TurnEnded`` message and the app's handler takes it from there.
"""

from __future__ import annotations

import asyncio
import functools
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


def warm_up_import(resumed: bool = False) -> Callable[[], None]:
    """The session is open: what imports the SDK in a worker thread. When the command line turned the collector
    off for startup, it stays off through the import, then what startup and the import made is frozen (never
    scanned again: ``import_frozen``) and the collector is on again; otherwise (tests) the import alone.

    ``resumed``: the session drew past events, so one full collection comes first. Its first screens leave
    cyclic garbage the freeze would keep for good: the first frame's answers drawn as text, swapped for their
    Markdown entries (early_answer.py), and the node Textual makes for each component style each time a widget
    is styled (css/stylesheet.py ``_process_component_classes``), about 15,000 objects and 2 MiB of a 500-turn
    session's RSS; the import reuses the memory they held. A new session leaves about 3,000 (0.6 MiB), not
    worth a pass over all of startup's objects in the moments its first word is typed."""
    if gc.isenabled():
        return import_sdk
    return functools.partial(import_frozen, gc.collect) if resumed else import_frozen
