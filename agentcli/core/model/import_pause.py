"""The SDK's import paused between two modules while a reply is handled (``pause_import``).

With a server that answers at once, ``-p``'s reply comes while the SDK still imports in its thread (about a
second), and the run's last steps (the reply read, the session's last records written, the answer out) are a
few milliseconds of work on the main thread. Beside the import they had half of the interpreter (one thread
runs at a time), and the process the kernel tears down at the exit grew with it, for a module such a run never
uses. So from the moment a reply begins, the import waits before its next module (Python's ``import`` audit
event, raised before the import takes any lock of that module) until it is wanted: a request goes out
(``request_going_out``: later requests go out before the SDK is in too, ``early_request``), someone asks for the
SDK (``sdk_module``), or another thread imports a module not yet loaded (it may need one the paused import holds
half-made, and would wait on it for ever). ``PAUSE_LIMIT`` bounds any pause, so a run that goes on (a long
reply, a tool, a Stop hook) has the SDK soon after; an ``import`` of a module the paused thread is making, which
raises no event, waits that long at most. What the thread imports before the SDK (the view model, which the
main thread needs once the reply is in) never waits. Answer to exit, paired (40 runs each, load 3): 9.9 ms
against 11.2 ms with the pause switched off and 12.4 ms for the code before it.

The audit hook is added at the first pause: a hook is called for every audited event of every thread (about
30,000 in the SDK's import, 3% of its CPU) and cannot be removed.
"""

from __future__ import annotations

import sys
import threading

PAUSE_LIMIT = 0.2  # seconds a pause lasts at most
_going = threading.Event()  # cleared while the import is paused
_going.set()
_importer = [0]  # the ident of the thread that imports the SDK pausably, from its start to the SDK's end (else 0)
_at_sdk = [False]  # that thread imports the SDK now (before, it imports what it must not wait in: the view model)
_hooked: list[bool] = []  # the audit hook is added (once a process)


def pause_import() -> None:
    """A reply begins: a pausable SDK import, if one is under way, stops before its next module of the SDK until it
    is wanted (the module's docstring says when)."""
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
    if threading.get_ident() != _importer[0]:
        _going.set()
    elif _at_sdk[0]:
        _going.wait(PAUSE_LIMIT)
        _going.set()


class Pausable:
    """Made by the thread that imports the SDK as it starts (pauses asked for from then on hold the SDK's import;
    ``pausable``: else this does nothing), entered around the SDK's import, which waits where it is paused, and
    ``over`` when the thread is done, whether or not it got that far."""

    def __init__(self, pausable: bool) -> None:
        self.pausable = pausable
        if pausable:
            _importer[0] = threading.get_ident()

    def __enter__(self) -> None:
        if self.pausable:
            _at_sdk[0] = True

    def __exit__(self, *exc_info: object) -> None:
        if self.pausable:
            _at_sdk[0] = False

    def over(self) -> None:
        if self.pausable:
            _importer[0] = 0
            _going.set()
