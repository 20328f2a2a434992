"""Dataclass methods compiled at their first call rather than when their class is defined.

Python 3.11 and 3.12 compile each method a dataclass generates (``__init__``, ``__repr__``, ``__eq__``, a frozen
one's ``__setattr__`` and ``__delattr__``, ...) with an ``exec`` of its own as the class is defined: defining the
113 dataclasses of agentcli and Textual before the TUI's first screen took about 41 ms of CPU (16 with this), and
that screen calls few of their methods. ``defer_dataclass_methods()`` (``agentcli``'s start, __main__.py) makes each
such method a stand-in that compiles the very function ``dataclasses`` would have, from the same source, on its
first call, then puts it in the class in its own place, so later calls cost what they did. ``__repr__`` (which
``dataclasses`` wraps against recursion) keeps its stand-in, one call deeper. A class without a docstring is
made as before: ``dataclasses`` writes one from its ``__init__``'s signature. Where ``dataclasses`` has no
``_create_fn`` (Python 3.13 compiles a class's methods in one ``exec``), nothing changes.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

_made = threading.local()  # the stand-ins made for the class being processed on this thread, by method name
_waiting: list[Callable[[], None]] = []  # compiles each stand-in made so far (see compile_waiting)


def defer_dataclass_methods() -> bool:
    """From now on, in this process, dataclass methods compile when first called; False where not possible."""
    create, process = getattr(dataclasses, "_create_fn", None), getattr(dataclasses, "_process_class", None)
    if create is None or process is None or getattr(process, "deferring", False):
        return False

    def process_class(cls: type, *args: Any) -> type:
        outer = getattr(_made, "stand_ins", None)
        stand_ins: dict[str, Any] | None = {} if cls.__dict__.get("__doc__") else None  # as dataclasses tells
        _made.stand_ins = stand_ins
        try:
            made: type = process(cls, *args)
            for name, stand_in in (stand_ins or {}).items():
                if made.__dict__.get(name) is stand_in:
                    vars(stand_in)["owner"] = made
            return made
        finally:
            _made.stand_ins = outer

    def create_fn(name: str, args: Any, body: Any, **kwargs: Any) -> Callable[..., Any]:
        stand_ins = getattr(_made, "stand_ins", None)
        if stand_ins is None:  # a class without a docstring, or dataclasses' own use outside a class
            return create(name, args, body, **kwargs)  # type: ignore[no-any-return]
        compiled: list[Callable[..., Any]] = []

        def compile_it() -> None:
            if not compiled:
                function = create(name, args, body, **kwargs)
                function.__qualname__ = stand_in.__qualname__
                compiled.append(function)
                owner = getattr(stand_in, "owner", None)
                if owner is not None and owner.__dict__.get(name) is stand_in:
                    setattr(owner, name, function)  # the class's own, as dataclasses would have left it

        def stand_in(*call_args: Any, **call_kwargs: Any) -> Any:
            if not compiled:
                compile_it()
            return compiled[0](*call_args, **call_kwargs)

        stand_in.__name__ = stand_in.__qualname__ = name
        stand_ins[name] = stand_in
        _waiting.append(compile_it)
        return stand_in

    process_class.deferring = True  # type: ignore[attr-defined]
    dataclasses._create_fn = create_fn  # type: ignore[attr-defined]
    dataclasses._process_class = process_class  # type: ignore[attr-defined]
    return True


def compile_waiting() -> int:
    """Compile now every method still waiting for its first call, as their classes would have: for a thread that
    has time while the main thread waits (``sdk_import.import_frozen``), so that the calls of a run's first tool
    call (its events, its lines shown, its permission check: about 20 methods, 2-3 ms in the main thread between
    the model's reply and the tool's result going out) find them compiled. Returns how many were waiting."""
    waiting = _waiting[:]
    del _waiting[: len(waiting)]
    for compile_it in waiting:
        compile_it()  # a method compiled meanwhile by its own first call is not compiled again
    return len(waiting)
