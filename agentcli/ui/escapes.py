"""Terminal control sequences in text that strangers wrote, made visible instead of obeyed.

File contents, tool output and even the model's answers can hold escape sequences: a
clipboard write (OSC 52), a window title (OSC 0), a screen clear (``ESC[2J``), a hidden link
(OSC 8). Printed raw, the terminal would act on them. Every front end passes such text through
``visible`` (or an event through ``visible_event``) before it reaches the screen, so ``ESC``
shows as ``\\x1b`` and the rest of the sequence as the plain characters it is.

Newlines and tabs stay; a carriage return stays only as part of a CRLF line ending.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

from ..core.events import SubagentReport

# C0 controls but tab and newline, DEL, and the C1 controls (U+0080-U+009F; U+009B is a one-character CSI).
_CONTROL = re.compile(r"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_NAMED = {"\r": "\\r", "\x1b": "\\x1b", "\x07": "\\a", "\x08": "\\b"}

T = TypeVar("T")


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or f"\\x{ord(char):02x}"


def visible(text: str) -> str:
    """``text`` with every control character that a terminal would act on written out visibly."""
    return _CONTROL.sub(_shown, text) if _CONTROL.search(text) else text


def visible_data(value: T) -> T:
    """``value`` (strings, lists, tuples, dicts of them) with ``visible`` applied to every string in it; the
    same object when nothing in it changes (a resumed session passes thousands of clean records)."""
    if isinstance(value, str):
        return visible(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        pairs = [(visible_data(k), visible_data(v)) for k, v in value.items()]
        if all(shown is k and seen is v for (shown, seen), (k, v) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)  # type: ignore[return-value]
    if isinstance(value, (list, tuple)):
        items = [visible_data(v) for v in value]
        if all(shown is v for shown, v in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)  # type: ignore[return-value]
    return value


def visible_event(event: T) -> T:
    """An engine event with its text fields made visible; the same object when there was nothing to change.

    Only what is shown changes: other fields (futures, numbers) are carried over as they are.
    """
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(event):  # type: ignore[arg-type]
        value = getattr(event, f.name)
        if isinstance(value, (str, dict, list, tuple)):
            shown = visible_data(value)
            if shown is not value:
                changes[f.name] = shown
        elif isinstance(value, SubagentReport):  # a child's report: its answer, paths and commands
            report = visible_event(value)
            if report is not value:
                changes[f.name] = report
    return dataclasses.replace(event, **changes) if changes else event  # type: ignore[type-var]


def json_line(text: str) -> str:
    """A JSON document as ``json.dumps(..., ensure_ascii=False)`` wrote it, with C1 controls escaped too.

    ``json`` escapes C0 controls always, but leaves U+0080-U+009F as raw characters when
    ``ensure_ascii`` is off; inside a JSON string ``\\u009b`` means the same and is inert.
    """
    return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)
