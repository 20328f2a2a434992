"""Importing the ``anthropic`` SDK ahead of the first reply, in a thread of its own (``start_sdk_import``):
the import is most of a headless run's start-up, and the first request does not wait for it."""

from __future__ import annotations

import gc
import importlib
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..system.lazy_dataclasses import compile_waiting
from .credentials import Credentials, base_url
from .sdk_warm import warm_first_post

# One event of each kind the API streams, as small as the API allows.
SAMPLE_EVENTS: tuple[dict[str, Any], ...] = (
    {
        "type": "message_start",
        "message": {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "m",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "t", "name": "t", "input": {}},
    },
    {"type": "content_block_start", "index": 2, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "thinking_delta", "thinking": ""}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "signature_delta", "signature": ""}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 0},
    },
    {"type": "message_stop"},
)


def import_sdk() -> None:
    """Import the SDK and build what parsing its first reply would build (the event models: about 7 ms on
    the first reply otherwise). For a thread started at launch; a failure is left for the first request,
    which repeats it and says what is wrong."""
    try:
        with IMPORTING:
            from anthropic._models import construct_type  # how the SDK's stream parses each event (pinned SDK)
            from anthropic.types import RawMessageStreamEvent

            for event in SAMPLE_EVENTS:
                construct_type(type_=RawMessageStreamEvent, value=event)
            sdk_platform()
    except Exception:
        pass


def sdk_module() -> Any:
    """The ``anthropic`` module, imported here, or waited for while the import thread imports it. Blocking."""
    with IMPORTING:
        return importlib.import_module("anthropic")


# Held by a thread while it imports the SDK or what the import thread imports before it: two threads importing
# them at once could each wait on a module the other was making, and Python then hands one of them a half-made
# module ("cannot import name ... from partially initialized module 'anthropic._base_client'").
IMPORTING = threading.RLock()


def sdk_platform() -> Any:
    """The SDK's name for this platform (its X-Stainless-OS header), for a client of the SDK's to know before its
    first request (``LLM.client``). Left to itself, that request asks for it in a thread of the event loop's pool
    (``platform.uname()`` may block on Windows): a thread started, a hop there and back, 0.6-1.9 ms on the path of
    the second model call of a run (a held grep's result). ``platform`` caches what it reads, and ``import_sdk``,
    in the import's own thread, has read it already (pinned SDK: ``anthropic._base_client``)."""
    from anthropic._base_client import get_platform

    return get_platform()


def import_frozen(*first: str | Callable[[], object], after_first_request: tuple[str, ...] | None = None) -> None:
    """Import ``first`` (module names; a function is called) and the SDK (``import_sdk``) with the collector off, then freeze what the process holds
    and turn the collector on: the import makes about 140,000 objects, none of them garbage, and left unfrozen
    they made every full collection after it scan them (about 300 ms on a loaded machine, in a keypress's frame).
    For a thread of its own; the caller may have turned the collector off before starting it.

    ``after_first_request``: wait, once ``first`` is imported, until the process's first model request goes out
    (``request_going_out``; at most ``HOLD_LIMIT``), then import these and the SDK. Python runs one thread at a
    time, so an import beside the main thread's preparation halves its pace: held, the preparation has the
    interpreter to itself and the import runs while the reply is awaited. The SDK's import hands the interpreter
    over every ``SWITCH_INTERVAL`` (not Python's 5 ms) to a thread that waits for it, so the main thread's reads of
    the reply and its last steps before the exit do not queue behind it. Held so, it then compiles the dataclass
    methods still waiting for their first call (``lazy_dataclasses.compile_waiting``), which the run's first tool
    call would otherwise compile between the model's reply and the tool's result going out, and posts once through a
    throwaway SDK client to an in-memory transport (``sdk_warm``): the SDK client's first request, often that tool's
    result, then costs what a later one does."""
    gc.disable()
    try:
        with IMPORTING:
            for step in first:
                if isinstance(step, str):
                    importlib.import_module(step)
                else:
                    step()
        if after_first_request is not None:
            FIRST_REQUEST.wait(HOLD_LIMIT)
            with IMPORTING:
                for name in after_first_request:
                    importlib.import_module(name)
        previous = sys.getswitchinterval()
        sys.setswitchinterval(min(previous, SWITCH_INTERVAL))
        try:
            import_sdk()
            if after_first_request is not None:  # -p: the main thread waits for the first reply meanwhile
                compile_waiting()
                warm_first_post(base_url(Credentials(api_key=None, base_url=None)), sdk_platform())
        finally:
            sys.setswitchinterval(previous)
    except Exception:  # the first request imports them again and says what is wrong
        pass
    finally:
        gc.freeze()
        gc.enable()


FIRST_REQUEST = threading.Event()  # set as the process's first model request goes out (``request_going_out``)
SWITCH_INTERVAL = 0.0005  # seconds the import thread holds the interpreter while another thread waits for it
HOLD_LIMIT = 5.0  # seconds a held import waits for the first request at most (a run that sends none soon)


def request_going_out() -> None:
    """A model request is about to be sent: an import held for the first one (``after_first_request``) goes on."""
    FIRST_REQUEST.set()


sdk_import: threading.Thread | None = None  # the thread start_sdk_import started, if any


def start_sdk_import(
    *first: str | Callable[[], object], after_first_request: tuple[str, ...] | None = None
) -> threading.Thread | None:
    """Run ``import_sdk`` in a thread of its own, once per process (None when the SDK is imported already).
    ``first``: modules to import (or functions to call) before it (what the early request needs: ``early_request``);
    ``after_first_request``: hold the rest until the first request goes out (``import_frozen``).

    Garbage collection waits until the import is done: the import and the work beside it make a few
    hundred thousand objects and none of them is garbage, so the collector's passes over them (about 14%
    of the import's CPU) are pure cost; they are then frozen, never to be scanned again.
    """
    global sdk_import
    if sdk_import is not None or "anthropic" in sys.modules:
        return None

    gc.disable()
    sdk_import = threading.Thread(
        target=import_frozen,
        args=first,
        kwargs={"after_first_request": after_first_request},
        name="sdk-import",
        daemon=True,
    )
    sdk_import.start()
    return sdk_import
