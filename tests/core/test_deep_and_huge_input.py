"""Input no parser should choke on: JSON nested past any stack, half a UTF-16 character, one 20 MB word.

Each case is read or written through the real store and session; a traceback, a hang (the pytest timeout
is the guard, no time is asserted) or a lost record fails here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.core.events import UserMessage
from agentcli.core.storage.records import MAX_DEPTH, TOO_DEEP, record_problem
from agentcli.core.storage.store import SessionStore, mend_tail, read_records
from tests.fakes.anthropic_server import last_user_text, text

DEEP = "[" * 100_000 + "]" * 100_000  # the JSON decoder's own recursion gives up on this


def nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def message(content: object) -> dict[str, Any]:
    return {"type": "user_message", "agent_id": "main", "content": content}


def test_records_nested_past_the_bound_are_refused_in_one_clause():
    block = {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"pattern": nested(900)}}
    assert record_problem({"type": "assistant_message", "agent_id": "main", "content": [block]}) == TOO_DEEP
    shallow = {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"pattern": nested(MAX_DEPTH - 10)}}
    assert record_problem({"type": "assistant_message", "agent_id": "main", "content": [shallow]}) is None


def test_a_line_too_deep_to_parse_is_skipped_with_one_warning_and_the_rest_read(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    good = json.dumps(message([{"type": "text", "text": "hello"}]))
    path.write_text(
        f"{good}\n"
        + '{"type": "user_message", "agent_id": "main", "content": '
        + DEEP
        + "}\n"
        + json.dumps(message([{"type": "text", "text": nested(500)}]))
        + f"\n{good}\n"
    )
    records, warnings = read_records(path)
    assert len(records) == 2
    assert warnings == [f"Skipped line 2 of {path}: {TOO_DEEP}.", f"Skipped line 3 of {path}: {TOO_DEEP}."]


def test_a_deep_last_line_without_its_newline_is_kept_for_the_reader_to_report(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(message([{"type": "text", "text": "hi"}])) + "\n" + DEEP)
    assert mend_tail(path) is None
    records, warnings = read_records(path)
    assert len(records) == 1 and warnings == [f"Skipped line 2 of {path}: {TOO_DEEP}."]


def test_a_lone_surrogate_is_stored_and_read_back(tmp_path: Path):
    store = SessionStore(tmp_path, "s")
    content = [{"type": "text", "text": "half a character: \ud800 and a whole one: é"}]
    store.write(UserMessage(content=content, agent_id="main", parent_tool_use_id=None))
    store.close()
    data = store.main_path.read_bytes()
    data.decode("utf-8")  # valid UTF-8 on disk
    records, warnings = read_records(store.main_path)
    assert warnings == [] and records[-1]["content"] == content


async def test_a_prompt_of_one_20_mb_word_goes_through(server, make_session, repo):
    (repo / "shot.png").write_bytes(b"not really")  # a name that looks like an image is in the workspace too
    server.script(text("That is a long word."))
    session, _ = make_session()
    word = "w" * 20_000_000 + "shot.png"
    result = await session.send(word)
    assert result.text == "That is a long word."
    assert last_user_text(server.requests[-1]) == word
