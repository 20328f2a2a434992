"""What a stored record must hold: the one check every reader of a session file relies on.

An event's record must carry the fields of its event class (``events.py``) with the types
declared there; the store's own records (``session_started``, ``session_resumed``) are listed
below. Messages and content blocks must have the shape the
API takes, and no number may be NaN or Infinity (JSON has neither). A record that fails is
skipped by ``store.read_records`` with one warning, so the readers after it (list, show,
resume) can trust every field they read.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from functools import cache
from typing import Any

from .events import EVENT_TYPES, Usage

COMMON: dict[str, Any] = {"type": str, "ts": str, "agent_id": str, "parent_tool_use_id": str | None}
HEADER: dict[str, Any] = {"session_id": str, "cwd": str, "model": str, "pid": int, "forked_from": str | None}
STORE_RECORDS: dict[str, dict[str, Any]] = {
    "session_started": HEADER,
    "session_resumed": HEADER,
}
USAGE_FIELDS: dict[str, Any] = typing.get_type_hints(Usage)
MESSAGE_FIELDS = {"user_message": "content", "assistant_message": "content",  # checked block by block
                  "compacted": "messages", "history_cleared": "messages", "rewound": "messages"}
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


def record_problem(record: dict[str, Any]) -> str | None:
    """Why a parsed record cannot be used, as a clause ("'turn' must be an integer"); None when it can."""
    if not isinstance(record.get("type"), str):
        return "it has no record type"
    if not finite(record):
        return "it holds NaN or Infinity, which are not JSON numbers"
    for name, kind in (COMMON | fields_of(record["type"])).items():
        if isinstance(kind, Required):
            if name not in record:
                return f"'{name}' is missing"
            kind = kind.kind
        if name in record and not fits(record[name], kind):
            return f"'{name}' must be {describe(kind)}, not {json_name(record[name])}"
    field_name = MESSAGE_FIELDS.get(record["type"])
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


def blocks_problem(content: Any, where: str) -> str | None:
    """Why a list of content blocks is not one the API takes, by type; None when it is."""
    if not isinstance(content, list):
        return f"{where} must be a list of blocks, not {json_name(content)}"
    for number, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f"block {number} of {where} has no type"
        for name, kind in BLOCK_FIELDS.get(block["type"], {}).items():
            if name not in block and not is_optional(kind):
                return f"block {number} of {where} lacks '{name}'"
            if name in block and not fits(block[name], kind):
                return f"'{name}' of block {number} of {where} must be {describe(kind)}, not {json_name(block[name])}"
    return None



def is_optional(kind: Any) -> bool:
    return type(None) in typing.get_args(kind)


def fits(value: Any, kind: Any) -> bool:
    """Whether a JSON value has the type an annotation names (Usage is its JSON object)."""
    if kind is Any:
        return True
    if kind is type(None):
        return value is None
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        return any(fits(value, k) for k in typing.get_args(kind))
    if kind is Usage:
        return isinstance(value, dict) and all(fits(value[name], hint) for name, hint in USAGE_FIELDS.items()
                                               if name in value)
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is list or origin is tuple:  # a tuple is stored as a JSON array
        item = args[0] if args else Any
        return isinstance(value, list) and all(fits(v, item) for v in value)
    if origin is dict or dataclasses.is_dataclass(kind):  # a dataclass is stored as its JSON object
        return isinstance(value, dict)
    return not isinstance(kind, type) or isinstance(value, kind)  # a hint this check does not know: anything


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
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false", type(None): "null",
             Usage: "a usage object"}
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
