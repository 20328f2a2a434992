"""What a stored record must hold: the one check every reader of a session file relies on.

An event's record must carry the fields of its event class (``events.py``) with the types
declared there; the store's own records (``session_started``, ``session_resumed``) are listed
below. Messages and content blocks must have the shape the
API takes, no number may be NaN or Infinity (JSON has neither), and nothing may be nested
deeper than ``MAX_DEPTH`` (the readers after this one walk records recursively). A record that
fails is skipped by ``store.read_records`` with one warning, so the readers after it (list, show,
resume) can trust every field they read.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..events import EVENT_TYPES, Usage

COMMON: dict[str, Any] = {"type": str, "ts": str, "agent_id": str, "parent_tool_use_id": str | None}
HEADER: dict[str, Any] = {"session_id": str, "cwd": str, "model": str, "pid": int, "forked_from": str | None}
STORE_RECORDS: dict[str, dict[str, Any]] = {"session_started": HEADER, "session_resumed": HEADER}
USAGE_FIELDS: dict[str, Any] = typing.get_type_hints(Usage)
MAX_DEPTH = 128  # objects and lists within each other: a record's own take about six, a tool's input the rest
TOO_DEEP = f"it is nested more than {MAX_DEPTH} levels deep"
MESSAGE_FIELDS = {
    "user_message": "content",
    "assistant_message": "content",  # checked block by block
    "compacted": "messages",
    "history_cleared": "messages",
    "rewound": "messages",
}
BLOCK_FIELDS: dict[str, dict[str, Any]] = {
    "text": {"text": str},
    "tool_use": {"id": str, "name": str, "input": dict[str, Any]},
    "tool_result": {"tool_use_id": str, "is_error": bool | None, "content": str | list[dict[str, Any]] | None},
}


class Required:
    """Marks a field a record must have (an event field without a default)."""

    def __init__(self, kind: Any) -> None:
        self.kind = kind


@cache
def fields_of(record_type: str) -> dict[str, Any]:
    """The fields a record of this type may carry, and their types; {} for types this reader does not know."""
    if record_type in STORE_RECORDS:
        return STORE_RECORDS[record_type]
    cls = EVENT_TYPES.get(record_type)
    if cls is None:
        return {}
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation only a type checker can resolve: check presence, not types
        hints = {}
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("transient") or f.name in COMMON:
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        kind = hints.get(f.name, Any)
        out[f.name] = Required(kind) if required else kind
    return out


Fits = Callable[[Any], bool]  # whether a JSON value has the type an annotation names


@dataclass(frozen=True)
class Check:
    """One field a record (or block) may carry: its type, whether it must be there, and its compiled test."""

    name: str
    kind: Any
    required: bool
    fits: Fits


@cache
def checks_of(record_type: str) -> tuple[Check, ...]:
    """The checks of a record type: the common fields, then its own (fields_of), compiled once per type."""
    out = []
    for name, kind in (COMMON | fields_of(record_type)).items():
        required = isinstance(kind, Required)
        kind = kind.kind if required else kind
        out.append(Check(name, kind, required, fitter(kind)))
    return tuple(c for c in out if c.required or c.kind is not Any)


@cache
def block_checks(block_type: str) -> tuple[Check, ...]:
    return tuple(
        Check(name, kind, not is_optional(kind), fitter(kind))
        for name, kind in BLOCK_FIELDS.get(block_type, {}).items()
    )


def record_problem(record: dict[str, Any]) -> str | None:
    """Why a parsed record cannot be used, as a clause ("'turn' must be an integer"); None when it can.

    Resume reads thousands of records, so each type's checks are compiled once (``checks_of``)."""
    record_type = record.get("type")
    if not isinstance(record_type, str):
        return "it has no record type"
    problem = values_problem(record)
    if problem:
        return problem
    problem = fields_problem(record, checks_of(record_type), "")
    if problem:
        return problem
    field_name = MESSAGE_FIELDS.get(record_type)
    if field_name == "content":
        return blocks_problem(record.get("content"), "content")
    if field_name == "messages":
        for number, message in enumerate(record.get("messages") or []):
            if message.get("role") not in ("user", "assistant"):
                return f"message {number} has no role 'user' or 'assistant'"
            content = message.get("content")
            problem = None if isinstance(content, str) else blocks_problem(content, f"message {number}")
            if problem:
                return problem
    return None


def fields_problem(value: dict[str, Any], checks: tuple[Check, ...], where: str) -> str | None:
    """The first field of ``value`` that is missing or of the wrong type, as a clause; ``where`` names a block."""
    for check in checks:
        if check.name not in value:
            if check.required:
                return f"{where} lacks '{check.name}'" if where else f"'{check.name}' is missing"
        elif not check.fits(value[check.name]):
            at = f"'{check.name}'" + (f" of {where}" if where else "")
            return f"{at} must be {describe(check.kind)}, not {json_name(value[check.name])}"
    return None


def blocks_problem(content: Any, where: str) -> str | None:
    """Why a list of content blocks is not one the API takes, by type; None when it is."""
    if not isinstance(content, list):
        return f"{where} must be a list of blocks, not {json_name(content)}"
    for number, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f"block {number} of {where} has no type"
        problem = fields_problem(block, block_checks(block["type"]), f"block {number} of {where}")
        if problem:
            return problem
    return None


def is_optional(kind: Any) -> bool:
    return type(None) in typing.get_args(kind)


def fitter(kind: Any) -> Fits:
    """The test of whether a JSON value has the type ``kind`` names, built once: a bool is no int, a tuple and
    a dataclass are stored as a JSON array and object, and a hint this check does not know takes anything."""
    if kind is Any:
        return anything
    simple = isinstance_types(kind)
    if simple is not None:
        return lambda value: isinstance(value, simple)
    if is_union(kind):
        parts = tuple(fitter(k) for k in typing.get_args(kind))
        return lambda value: any(part(value) for part in parts)
    if kind is Usage:
        usage = tuple((name, fitter(hint)) for name, hint in USAGE_FIELDS.items())
        return lambda value: isinstance(value, dict) and all(ok(value[name]) for name, ok in usage if name in value)
    if kind is int:
        return lambda value: isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return lambda value: isinstance(value, (int, float)) and not isinstance(value, bool)
    if typing.get_origin(kind) in (list, tuple):  # a list of items isinstance alone cannot test
        item = fitter(typing.get_args(kind)[0])
        return lambda value: isinstance(value, list) and all(item(v) for v in value)
    return anything  # Any, or a hint this check does not know


def isinstance_types(kind: Any) -> tuple[type, ...] | None:
    """The types ``isinstance`` alone tests ``kind`` by (a union of such kinds too); None when it cannot."""
    if is_union(kind):
        parts = [isinstance_types(k) for k in typing.get_args(kind)]
        return None if any(p is None for p in parts) else tuple(t for p in parts for t in p or ())
    if kind is Any or kind in (int, float, Usage):  # a bool is no number; a usage object has typed fields
        return None
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is list or origin is tuple:  # a tuple is stored as a JSON array
        return (list,) if not args or args[0] is Any else None
    if origin is dict or dataclasses.is_dataclass(kind) or typing.is_typeddict(kind):  # stored as a JSON object
        return (dict,)
    return (kind,) if isinstance(kind, type) and origin is None else None


def is_union(kind: Any) -> bool:
    return isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union


def anything(value: Any) -> bool:
    return True


def values_problem(record: dict[str, Any]) -> str | None:
    """A number that is NaN or Infinity, or nesting past MAX_DEPTH, as a clause; None for neither.
    One level at a time, without recursion, so that no depth of nesting can exhaust the stack."""
    level: list[Any] = [record]
    for _ in range(MAX_DEPTH):
        inner: list[Any] = []
        for container in level:
            for value in container.values() if isinstance(container, dict) else container:
                if isinstance(value, (dict, list)):
                    inner.append(value)
                elif isinstance(value, float) and not math.isfinite(value):
                    return "it holds NaN or Infinity, which are not JSON numbers"
        if not inner:
            return None
        level = inner
    return TOO_DEEP


def finite(value: Any) -> bool:
    """Whether no number anywhere in ``value`` is NaN or Infinity."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    return True


def finite_copy(value: Any) -> Any:
    """``value`` with each NaN or Infinity replaced by null, for writing as JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_copy(v) for v in value]
    return value


def describe(kind: Any) -> str:
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        return " or ".join(describe(k) for k in typing.get_args(kind))
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        type(None): "null",
        Usage: "a usage object",
    }
    if kind in names:
        return names[kind]
    origin = typing.get_origin(kind)
    return "a list" if origin in (list, tuple) else "an object" if origin is dict else str(kind)


def json_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "a string" if len(value) > 20 else repr(value)
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__
