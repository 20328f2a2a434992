"""The record check every reader of a session file relies on, repair of repeated tool ids, and NaN in tool input."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from agentcli.core.content import Message
from agentcli.core.engine.history import agent_state, repair
from agentcli.core.storage.records import record_problem
from agentcli.core.storage.store import read_records
from agentcli.core.tools.base import check_input
from agentcli.core.tools.files import ReadFile
from agentcli.paths import legacy_project_slug, project_slug
from tests.fakes.anthropic_server import validate_request
from tests.narrow import of

GOOD = [
    {
        "type": "session_started",
        "ts": "2026-01-01T00:00:00+00:00",
        "agent_id": "main",
        "parent_tool_use_id": None,
        "session_id": "s",
        "cwd": "/w",
        "model": "m",
        "pid": 7,
    },
    {"type": "turn_started", "agent_id": "main", "turn": 2, "max_turns": 30},
    {
        "type": "usage_updated",
        "agent_id": "main",
        "usage": {"input_tokens": 5, "cost": None},
        "total": {"input_tokens": 9, "cost": 0.01},
        "model": "m",
    },
    {"type": "user_message", "agent_id": "main", "content": [{"type": "text", "text": "hi"}]},
    {
        "type": "subagent_started",
        "agent_id": "sa-1",
        "parent_tool_use_id": "toolu_1",
        "id": "sa-1",
        "subagent_type": "explore",
        "description": "d",
        "prompt": "p",
    },
    {"type": "history_cleared", "agent_id": "main", "messages": []},
    {"type": "a_record_of_a_later_version", "agent_id": "main", "anything": ["goes"]},
]

BAD = [
    ({"type": "turn_started", "agent_id": "main", "turn": "abc"}, "'turn' must be an integer, not 'abc'"),
    ({"type": "turn_started", "agent_id": "main", "turn": True}, "'turn' must be an integer, not true"),
    ({"type": "usage_updated", "agent_id": "main", "usage": "x", "total": {}}, "'usage' must be a usage object"),
    ({"type": "usage_updated", "agent_id": "main", "usage": {"input_tokens": "5"}, "total": {}}, "'usage'"),
    (
        {
            "type": "compacted",
            "messages_summarized": 1,
            "tokens_before": 1,
            "tokens_after": "x",
            "summary": "",
            "messages": [],
        },
        "'tokens_after' must be an integer",
    ),
    (
        {
            "type": "compacted",
            "messages_summarized": 1,
            "tokens_before": 1,
            "tokens_after": 1,
            "summary": "",
            "messages": [{"role": "system", "content": "x"}],
        },
        "message 0 has no role",
    ),
    ({"type": "tool_call_started", "id": None, "name": "grep", "input": {}}, "'id' must be a string, not null"),
    ({"type": "tool_call_started", "name": "grep", "input": {}}, "'id' is missing"),
    (
        {"type": "tool_call_finished", "id": "t", "name": "g", "output": 17, "is_error": False, "seconds": 1},
        "'output' must be a string, not 17",
    ),
    (
        {"type": "user_message", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]},
        "'is_error' of block 0 of content",
    ),
    ({"type": "assistant_message", "content": [{"type": "text", "text": 5}]}, "'text' of block 0 of content"),
    ({"type": "assistant_message", "content": "hello"}, "'content' must be a list, not 'hello'"),
    ({"type": "notice", "agent_id": 3, "level": "info", "text": "x"}, "'agent_id' must be a string"),
    ({"type": "usage_updated", "usage": {"input_tokens": math.nan}, "total": {}}, "NaN or Infinity"),
    ({"type": 5}, "no record type"),
]


@pytest.mark.parametrize("record", GOOD, ids=lambda r: r["type"])
def test_records_the_store_writes_pass(record):
    assert record_problem(record) is None


@pytest.mark.parametrize(("record", "problem"), BAD, ids=lambda x: json.dumps(x)[:40] if isinstance(x, dict) else "")
def test_a_record_with_a_wrong_type_says_which_field(record, problem):
    assert problem in (record_problem(record) or "")


def test_read_records_skips_each_bad_line_with_its_number_and_keeps_the_rest(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    lines = [
        json.dumps(GOOD[0]),
        json.dumps(BAD[0][0]),
        json.dumps(GOOD[1]),
        '{"type": "turn_started", "turn": NaN}',
        "[1, 2]",
        json.dumps(GOOD[3]),
    ]
    path.write_text("\n".join(lines) + "\n")
    records, warnings = read_records(path)
    assert records == [GOOD[0], GOOD[1], GOOD[3]]
    assert warnings == [
        f"Skipped line 2 of {path}: 'turn' must be an integer, not 'abc'.",
        f"Skipped line 4 of {path}: it holds NaN or Infinity, which are not JSON numbers.",
        f"Skipped line 5 of {path}: it is not a JSON object.",
    ]


def use(tool_id: str, text: str | None = None) -> dict[str, Any]:
    content = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "tool_use", "id": tool_id, "name": "grep", "input": {"pattern": "x"}}
    ]
    return {"role": "assistant", "content": content}


def result(*tool_ids: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in tool_ids]}


def valid(messages: list[Message]) -> str | None:
    tools = [{"name": "grep", "input_schema": {"type": "object"}}]
    return validate_request({"model": "m", "max_tokens": 10, "messages": messages, "tools": tools})


@pytest.mark.parametrize(
    "history",
    [
        # a tool call and its result written twice (a record appended again)
        [{"role": "user", "content": "hi"}, use("t1"), result("t1"), use("t1"), result("t1")],
        # after text, the same call again, then more work
        [
            {"role": "user", "content": "hi"},
            use("t1"),
            result("t1"),
            use("t1", "again"),
            result("t1"),
            use("t2"),
            result("t2"),
        ],
        # one message that names an id twice
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": use("t1")["content"] * 2},
            result("t1", "t1"),
        ],
    ],
    ids=["repeated message", "repeated then more", "twice in one message"],
)
def test_repair_keeps_each_tool_use_id_once(history):
    assert valid(history) is not None  # the API would refuse it as it is
    repaired = repair(history)
    assert valid(repaired) is None
    ids = [b["id"] for m in repaired for b in of(list, m["content"]) if b.get("type") == "tool_use"]
    assert len(ids) == len(set(ids)) and ids[0] == "t1"


def test_a_history_rebuilt_from_records_with_a_repeated_call_is_valid():
    records = [
        {"type": "user_message", "content": [{"type": "text", "text": "hi"}]},
        {"type": "assistant_message", "content": use("t1")["content"]},
        {"type": "user_message", "content": result("t1")["content"]},
    ] * 2
    assert valid(agent_state(records).messages) is None


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_tool_input_with_nan_or_infinity_is_refused_and_made_encodable(value):
    args = {"path": "README.md", "limit": value}
    problem = check_input(ReadFile(), args)
    assert problem == (
        "read_file: 'limit' held NaN or Infinity, which is not a number JSON can carry; "
        "call it again with finite numbers."
    )
    assert args == {"path": "README.md", "limit": None}  # the history holds this dict: it must encode
    json.dumps(args, allow_nan=False)


def test_workspace_folders_differ_for_paths_that_read_alike(tmp_path: Path):
    nested, dashed = tmp_path / "x" / "a" / "b", tmp_path / "x" / "a-b"
    assert legacy_project_slug(nested) == legacy_project_slug(dashed)
    assert project_slug(nested) != project_slug(dashed)
    assert re.fullmatch(re.escape(legacy_project_slug(nested)) + "-[0-9a-f]{8}", project_slug(nested))  # readable
    assert project_slug(nested) == project_slug(tmp_path / "x" / "a" / "." / "b")  # one folder per resolved path
    deep = tmp_path.joinpath(*["very-long-folder-name"] * 30)
    assert len(project_slug(deep)) <= 100 and project_slug(deep).split("-")[-2:-1] == ["name"]
