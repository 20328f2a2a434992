"""Dataclass methods compiled at their first call rather than when their class is defined.

Python 3.11 and 3.12 compile each method a dataclass generates (``__init__``, ``__repr__``, ``__eq__``, a frozen
one's ``__setattr__`` and ``__delattr__``, ...) with an ``exec`` of its own as the class is defined: defining the
113 dataclasses of agentcli and Textual before the TUI's first screen took about 41 ms of CPU (16 with this), and
that screen calls few of their methods. ``defer_dataclass_methods()`` (``agentcli``'s start, __main__.py) makes each
such method a stand-in that compiles the very function ``dataclasses`` would have, from the same source, on its
first call, then puts it in the class in its own place, so later calls cost what they did. ``__repr__`` (which
``dataclasses`` wraps against recursion) keeps its stand-in, one call deeper. A class without a docstring gets the
one ``dataclasses`` writes from its ``__init__``'s signature when it is first read (``_WrittenDoc``: that signature
needs the compiled ``__init__``, and reading it at once compiled all the class's methods as it was defined). Where
``dataclasses`` has no ``_create_fn`` (Python 3.13 compiles a class's methods in one ``exec``), nothing changes.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
from collections.abc import Callable
from typing import Any

_made = threading.local()  # the stand-ins made for the class being processed on this thread, by method name
_waiting: list[Callable[[], None]] = []  # compiles each stand-in made so far (see compile_waiting)


class _WrittenDoc:
    """The docstring ``dataclasses`` writes for a class without one (its name and its ``__init__``'s signature),
    written when first read: the class's ``__doc__`` until then (a class reads ``__doc__`` through ``__get__``)."""

    owner: type | None = None  # the class, once made (until then, dataclasses asks whether it has one: yes)

    def __get__(self, instance: object, cls: type | None = None) -> str:
        owner = self.owner
        if owner is None:
            return "(written when first read)"
        init = owner.__dict__.get("__init__")
        compile_init = vars(init).get("compile") if callable(init) and hasattr(init, "__dict__") else None
        if compile_init is not None:
            compile_init()  # the signature is the compiled __init__'s
        try:
            signature = str(inspect.signature(owner)).replace(" -> None", "")
        except (TypeError, ValueError):  # as dataclasses: no signature, no failure
            signature = ""
        text = owner.__name__ + signature
        if owner.__dict__.get("__doc__") is self:
            owner.__doc__ = text
        return text


def defer_dataclass_methods() -> bool:
    """From now on, in this process, dataclass methods compile when first called; False where not possible."""
    create, process = getattr(dataclasses, "_create_fn", None), getattr(dataclasses, "_process_class", None)
    if create is None or process is None or getattr(process, "deferring", False):
        return False

    def process_class(cls: type, *args: Any) -> type:
        outer = getattr(_made, "stand_ins", None)
        stand_ins: dict[str, Any] = {}
        _made.stand_ins = stand_ins
        written: _WrittenDoc | None = None if cls.__dict__.get("__doc__") else _WrittenDoc()
        if written is not None:
            cls.__doc__ = written  # type: ignore[assignment]  # dataclasses sees one, and writes none
        try:
            made: type = process(cls, *args)
            for name, stand_in in stand_ins.items():
                if made.__dict__.get(name) is stand_in:
                    vars(stand_in)["owner"] = made
            doc = made.__dict__.get("__doc__")
            if isinstance(doc, _WrittenDoc):  # ours, still: the class it belongs to
                doc.owner = made
            return made
        except BaseException:
            if written is not None:
                cls.__doc__ = None  # as it was: no class was made
            raise
        finally:
            _made.stand_ins = outer

    def create_fn(name: str, args: Any, body: Any, **kwargs: Any) -> Callable[..., Any]:
        stand_ins = getattr(_made, "stand_ins", None)
        if stand_ins is None:  # dataclasses' own use outside a class
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
        vars(stand_in)["compile"] = compile_it
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
