"""The SDK's import paused between two modules while a headless run may be ending (``pause_import``).

A reply that calls no tool is often a run's last: ``-p`` then writes its session's last records and the answer
and exits, a few milliseconds of work on the main thread. The SDK, still importing in its thread when a server
answers at once, would take half of the interpreter from those steps (one thread runs at a time) and grow the
process the kernel then tears down, for a module the run never uses. Paused, it waits before its next module
(Python's ``import`` audit event, raised before the import takes any lock of that module) until it is wanted:
another request goes out (``request_going_out``), someone asks for the SDK (``sdk_module``), or another thread
imports a module not yet loaded (it may need one the paused import holds half-made, and would wait on it for
ever). ``PAUSE_LIMIT`` bounds any pause, so a run that goes on after all (a Stop hook that keeps it going,
stream-json's next prompt) has the SDK soon; an ``import`` of a module the paused thread is making, which
raises no event, waits that long at most.

The audit hook is added at the first pause: a hook is called for every audited event of every thread (about
30,000 in the SDK's import, 3% of its CPU) and cannot be removed.
"""

from __future__ import annotations

import sys
import threading

PAUSE_LIMIT = 0.2  # seconds a pause lasts at most
_going = threading.Event()  # cleared while the import is paused
_going.set()
_importer = [0]  # the ident of the thread whose SDK import may pause, while it imports it (else 0)
_hooked: list[bool] = []  # the audit hook is added (once a process)


def pause_import() -> None:
    """The run may end here (a reply called no tool): a pausable SDK import, if one is running, stops before its
    next module until it is wanted (the module's docstring says when)."""
    if not _importer[0]:
        return
    if not _hooked:
        _hooked.append(True)
        sys.addaudithook(_gate)
    _going.clear()


def resume_import() -> None:
    """The SDK is wanted: a paused import goes on."""
    _going.set()


def _gate(event: str, args: tuple[object, ...]) -> None:
    """The audit hook: while paused, the importing thread waits at its next new module, and any other thread's
    import of a new module ends the pause."""
    if event != "import" or _going.is_set():
        return
    if threading.get_ident() == _importer[0]:
        _going.wait(PAUSE_LIMIT)
    _going.set()


class Pausable:
    """The SDK's import in this block, in the thread that runs it, may pause (``pausable``: else this does
    nothing)."""

    def __init__(self, pausable: bool) -> None:
        self.pausable = pausable

    def __enter__(self) -> None:
        if self.pausable:
            _importer[0] = threading.get_ident()

    def __exit__(self, *exc_info: object) -> None:
        if self.pausable:
            _importer[0] = 0
            _going.set()
