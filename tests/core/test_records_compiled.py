"""The record check is compiled once per record type (resume reads thousands of records): it must refuse
exactly what the check it replaced refused, field by field, for every record the engine writes."""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from agentcli.core.events import EVENT_TYPES, Usage
from agentcli.core.storage.records import (
    BLOCK_FIELDS,
    COMMON,
    HEADER,
    USAGE_FIELDS,
    Required,
    fields_of,
    fitter,
    record_problem,
)
from agentcli.core.storage.store import read_records

# JSON values of every shape, hostile ones included: a bool where a number goes, NaN, nested wrong items.
SAMPLES: list[Any] = [
    None,
    True,
    False,
    0,
    7,
    -3,
    1.5,
    "",
    "text",
    [],
    [1],
    ["a", "b"],
    [{}],
    [{"a": 1}],
    [None],
    {},
    {"input_tokens": 5},
    {"input_tokens": "5"},
    {"input_tokens": True},
    {"cost": None},
    {"cost": 0.5},
    {"cost": "free"},
    [[1]],
    [True],
]


def reference_fits(value: Any, kind: Any) -> bool:
    """The per-value walk over the type hint that the compiled check replaced, kept here as its specification."""
    if kind is Any:
        return True
    if kind is type(None):
        return value is None
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        return any(reference_fits(value, k) for k in typing.get_args(kind))
    if kind is Usage:
        return isinstance(value, dict) and all(
            reference_fits(value[name], hint) for name, hint in USAGE_FIELDS.items() if name in value
        )
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is list or origin is tuple:
        item = args[0] if args else Any
        return isinstance(value, list) and all(reference_fits(v, item) for v in value)
    if origin is dict or dataclasses.is_dataclass(kind) or typing.is_typeddict(kind):  # a JSON object
        return isinstance(value, dict)
    return not isinstance(kind, type) or isinstance(value, kind)


def every_kind() -> list[Any]:
    kinds = list(COMMON.values()) + list(HEADER.values()) + list(USAGE_FIELDS.values())
    kinds += [k for fields in BLOCK_FIELDS.values() for k in fields.values()]
    for record_type in EVENT_TYPES:
        kinds += [k.kind if isinstance(k, Required) else k for k in fields_of(record_type).values()]
    unique: list[Any] = []
    for kind in kinds:
        if not any(kind == seen for seen in unique):
            unique.append(kind)
    return unique


@pytest.mark.parametrize("kind", every_kind(), ids=repr)
def test_the_compiled_check_of_each_field_type_agrees_with_the_walk_over_its_hint(kind):
    check = fitter(kind)
    wrong = [value for value in SAMPLES if check(value) != reference_fits(value, kind)]
    assert wrong == []


@pytest.mark.parametrize("record_type", sorted(EVENT_TYPES))
def test_each_field_of_each_event_record_with_a_value_of_the_wrong_type_is_named(record_type):
    for name, kind in fields_of(record_type).items():
        kind = kind.kind if isinstance(kind, Required) else kind
        for value in SAMPLES:
            if reference_fits(value, kind):
                continue
            record = {"type": record_type, "agent_id": "main", name: value}
            problem = record_problem(record) or ""
            assert problem.startswith(f"'{name}' must be ") or problem.endswith("is missing"), (name, value, problem)


def test_a_required_field_of_any_type_must_still_be_there():
    record_type, name = next(
        (t, n) for t in sorted(EVENT_TYPES) for n, k in fields_of(t).items() if isinstance(k, Required)
    )
    assert record_problem({"type": record_type}) == f"'{name}' is missing"


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"type": "turn_started", "turn": 1, "max_turns": True}, "'max_turns' must be an integer, not true"),
        ({"type": "usage_updated", "usage": {"input_tokens": True}, "total": {}}, "'usage' must be a usage object"),
        ({"type": "usage_updated", "usage": {}, "total": {"cost": "free"}}, "'total' must be a usage object"),
        (
            {"type": "user_message", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [5]}]},
            "'content' of block 0 of content must be",
        ),
        (
            {"type": "assistant_message", "content": [{"type": "tool_use", "id": "t", "name": "grep"}]},
            "block 0 of content lacks 'input'",
        ),
        (
            {
                "type": "compacted",
                "messages_summarized": 1,
                "tokens_before": 1,
                "tokens_after": 1,
                "summary": "",
                "messages": ["not a message"],
            },
            "'messages' must be a list",
        ),
        ({"type": "notice", "level": "info", "text": "x", "nested": {"deep": [math.inf]}}, "NaN or Infinity"),
    ],
    ids=lambda x: json.dumps(x)[:50] if isinstance(x, dict) else "",
)
def test_hostile_records_are_still_refused_with_the_field_named(record, problem):
    assert problem in (record_problem(record) or "")


def test_a_damaged_file_keeps_its_good_records_and_names_each_bad_line(tmp_path: Path):
    good = {"type": "turn_started", "agent_id": "main", "parent_tool_use_id": None, "turn": 1, "max_turns": 3}
    lines = [good, {**good, "turn": "2"}, {**good, "parent_tool_use_id": 5}, {**good, "turn": 3}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    records, warnings = read_records(path)
    assert [r["turn"] for r in records] == [1, 3]
    assert warnings == [
        f"Skipped line 2 of {path}: 'turn' must be an integer, not '2'.",
        f"Skipped line 3 of {path}: 'parent_tool_use_id' must be a string or null, not 5.",
    ]
