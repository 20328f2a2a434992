"""Sessions: records on disk, listing, resume into a valid history, torn lines, two resumers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.core.content import Message
from agentcli.core.door import SessionError
from agentcli.core.engine.history import INTERRUPTED_RESULT, agent_state, repair, replay_events, subagent_record
from agentcli.core.events import (
    Notice,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from agentcli.core.storage.store import find_session, list_sessions, project_dir, read_records
from tests.fakes.anthropic_server import last_user_text, offers_tool, reply, text, tool_use, tool_use_block
from tests.narrow import of


def is_main(body):
    return offers_tool(body, "task")


def is_child(body):
    return not offers_tool(body, "task")


def two_children(server):
    """The main agent starts two subagents in one message; each greps, then answers."""
    server.when(
        is_main,
        reply(
            tool_use_block("task", {"description": "Find auth", "prompt": "Find handle_auth."}),
            tool_use_block("task", {"description": "Find views", "prompt": "Find index."}),
        ),
        text("Auth is in auth.py, the index view in views.py."),
    )
    server.when(
        lambda b: is_child(b) and "handle_auth" in json.dumps(b["messages"][0]),
        tool_use("grep", {"pattern": "def handle_auth"}),
        text("handle_auth: src/app/auth.py:9"),
    )
    server.when(
        lambda b: is_child(b) and "index" in json.dumps(b["messages"][0]),
        tool_use("grep", {"pattern": "def index"}),
        text("index: src/app/views.py:4"),
    )


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_every_record_has_type_time_agent_and_parent(server, make_session, repo):
    two_children(server)
    session, _ = make_session()
    await session.send("Use subagents to find auth and the index view")
    session.close()
    main = session.store.main_path
    records = lines_of(main)
    first = records[0]
    assert first["type"] == "session_started" and first["session_id"] == session.id
    assert first["cwd"] == str(repo.resolve()) and first["model"] == session.main.model
    children = sorted(session.store.subagent_dir.glob("*.jsonl"))
    assert [p.name for p in children] == ["sa-1.jsonl", "sa-2.jsonl"]
    for path in [main, *children]:
        for record in lines_of(path):
            assert {"type", "ts", "agent_id", "parent_tool_use_id"} <= record.keys()
    task_ids = {r["id"] for r in records if r["type"] == "tool_call_started"}
    for path in children:
        assert all(r["agent_id"] == path.stem and r["parent_tool_use_id"] in task_ids for r in lines_of(path))
    assert not any(r["type"] == "text_delta" for r in records)


async def test_resume_restores_history_usage_turns_and_children(server, make_session, resume):
    two_children(server)
    session, _ = make_session()
    await session.send("Use subagents to find auth and the index view")
    session.close()

    restored, events = resume(session.id)
    assert restored.id == session.id
    assert restored.main.messages == session.main.messages
    assert (restored.main.turns, restored.main.usage) == (session.main.turns, session.main.usage)
    assert restored.usage == session.usage and restored.context_used() == session.context_used()
    assert list(restored.subagents.records) == ["sa-1", "sa-2"]
    for child_id, before in session.subagents.records.items():
        after = restored.subagents.records[child_id]
        for field in (
            "type",
            "description",
            "prompt",
            "tool_use_id",
            "status",
            "result",
            "turns",
            "usage",
            "max_turns",
            "tool_output_chars",
        ):
            assert getattr(after, field) == getattr(before, field), field
        assert after.seconds == pytest.approx(before.seconds, abs=0.01)
        assert after.report.footer.startswith(f"[{child_id} · done · 2 turns · ")
        # The transcript a panel opens: the same events, with each message's text as one delta.
        live = [type(e).__name__ for e in before.events if not isinstance(e, TextDelta)]
        assert [type(e).__name__ for e in after.events if not isinstance(e, TextDelta)] == live
        assert [e.name for e in after.events if isinstance(e, ToolCallStarted)] == ["grep"]
        assert "".join(e.text for e in after.events if isinstance(e, TextDelta)) == after.result
    assert sorted(e.id for e in restored.restored_events if isinstance(e, SubagentFinished)) == ["sa-1", "sa-2"]
    assert not events.of(Notice)

    # New work goes on in the same files, and the next child is sa-3.
    server.when(
        is_main,
        tool_use("task", {"description": "Find README", "prompt": "Find the README title."}),
        text("The README says Demo app."),
    )
    server.when(is_child, tool_use("grep", {"pattern": "Demo"}), text("README.md:1"))
    count = len(server.requests)
    await restored.send("And the README?")
    first_new = server.requests[count]
    assert without_cache(first_new["messages"][:-1]) == session.main.messages
    assert last_user_text(first_new) == "And the README?"
    assert list(restored.subagents.records) == ["sa-1", "sa-2", "sa-3"]
    assert (restored.store.subagent_dir / "sa-3.jsonl").exists()
    assert restored.main.turns == session.main.turns + 2
    restored.close()
    assert len(list_sessions(restored.workspace.root)) == 1
    server.assert_no_rejections()


def without_cache(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]} for m in messages
    ]


async def test_a_crashed_child_is_interrupted_and_its_task_call_gets_an_error_result(server, make_session, resume):
    two_children(server)
    session, _ = make_session()
    await session.send("Use subagents to find auth and the index view")
    session.close()
    # Cut the files back to the moment sa-2 had run its grep: the main agent still waits on both task calls.
    main, child = session.store.main_path, session.store.subagent_dir / "sa-2.jsonl"
    records = lines_of(main)
    cut = next(i for i, r in enumerate(records) if r["type"] == "subagent_finished" and r["id"] == "sa-2")
    main.write_text("".join(json.dumps(r) + "\n" for r in records[:cut]))
    child_records = lines_of(child)
    cut = next(i for i, r in enumerate(child_records) if r["type"] == "tool_call_finished") + 1
    child.write_text("".join(json.dumps(r) + "\n" for r in child_records[:cut]))

    restored, events = resume(session.id)
    sa2 = restored.subagents.records["sa-2"]
    assert sa2.status == "interrupted" and sa2.turns == 1 and sa2.usage.output_tokens > 0
    assert "Interrupted" in sa2.result and isinstance(sa2.events[-1], SubagentFinished)
    assert restored.subagents.records["sa-1"].status == "done"
    # The interruption is now on disk in both files, so the next reader agrees.
    assert lines_of(child)[-1]["status"] == "interrupted" and lines_of(main)[-1]["status"] == "interrupted"
    # The main history ends with the task calls answered: sa-1 would have been too, but its result was lost.
    last = restored.main.messages[-1]
    assert last["role"] == "user" and all(b["is_error"] and b["content"] == INTERRUPTED_RESULT for b in last["content"])
    server.script(text("Both searches were interrupted; I can run them again."))
    await restored.send("What happened?")
    server.assert_no_rejections()
    sent = server.requests[-1]["messages"]
    assert sent[-1]["content"][-1]["text"] == "What happened?"
    assert [b["type"] for b in sent[-1]["content"]] == ["tool_result", "tool_result", "text"]


async def test_torn_last_line_is_skipped_with_a_warning(server, make_session, resume):
    server.script(text("First answer."))
    session, _ = make_session()
    await session.send("hello")
    session.close()
    main = session.store.main_path
    with main.open("a") as f:
        f.write('{"ts": "2025-01-01T00:00:00+00:00", "type": "assistant_message", "agent_id": "main", "cont')
    records, warnings = read_records(main)
    assert len(warnings) == 1 and "torn last line" in warnings[0]
    assert len(records) == len(main.read_text().splitlines()) - 1

    restored, events = resume(session.id)
    [notice] = events.of(Notice)
    assert notice.level == "warning" and "torn last line" in notice.text
    assert restored.main.messages == session.main.messages
    server.script(text("Second answer."))
    await restored.send("again")
    restored.close()
    server.assert_no_rejections()
    assert all(json.loads(line) for line in main.read_text().splitlines())  # the torn tail was cut


async def test_a_second_resumer_forks_into_a_new_session(server, make_session, resume):
    server.script(text("First answer."))
    session, _ = make_session()
    await session.send("hello")
    session.close()

    first, first_events = resume(session.id)
    second, second_events = resume(session.id[:10])  # a unique prefix will do
    assert first.id == session.id and second.id != session.id
    [notice] = second_events.of(Notice)
    assert session.id in notice.text and second.id in notice.text and "another agentcli" in notice.text
    assert not first_events.of(Notice)
    assert second.main.messages == first.main.messages == session.main.messages

    server.script(text("From the first."), text("From the second."))
    await first.send("PROMPT-ONE")
    await second.send("PROMPT-TWO")
    first.close()
    second.close()
    original, fork = lines_of(first.store.main_path), lines_of(second.store.main_path)
    assert "PROMPT-TWO" not in json.dumps(original) and "PROMPT-ONE" not in json.dumps(fork)
    assert "PROMPT-ONE" in json.dumps(original) and "PROMPT-TWO" in json.dumps(fork)
    assert fork[0]["type"] == "session_started" and fork[0]["forked_from"] == session.id
    assert [s.id for s in list_sessions(first.workspace.root)] == [second.id, first.id]
    # Once the first one closed, the session can be resumed in place again.
    third, third_events = resume(session.id)
    assert third.id == session.id and not third_events.of(Notice)
    server.assert_no_rejections()


async def test_continue_opens_the_latest_session_and_clear_is_remembered(server, make_session, resume):
    server.script(text("a"), text("cleared"), text("b"))
    older, _ = make_session()
    await older.send("older session")
    older.close()
    newer, _ = make_session()
    await newer.send("newer session")
    newer.clear()
    await newer.send("after clear")
    newer.close()
    continued, _ = resume(continue_=True)
    assert continued.id == newer.id
    assert continued.main.messages == newer.main.messages
    assert [m["content"][0]["text"] for m in continued.main.messages] == ["after clear", "b"]


def test_unknown_and_ambiguous_ids_are_one_sentence(repo, resume, make_session):
    with pytest.raises(SessionError, match="No session to continue"):
        resume(continue_=True)
    with pytest.raises(SessionError, match="No session 'nope' in this workspace"):
        resume("nope")
    project = project_dir(repo)
    project.mkdir(parents=True)
    for name in ("20250101-100000-aaaa", "20250101-100000-aaab"):
        (project / f"{name}.jsonl").write_text('{"type": "session_started"}\n')
    with pytest.raises(SessionError, match="matches 2 sessions"):
        find_session(repo, "20250101-1000")
    assert find_session(repo, "20250101-100000-aaab").stem == "20250101-100000-aaab"


async def test_list_shows_first_prompt_turns_children_and_tokens(server, make_session):
    two_children(server)
    session, _ = make_session()
    await session.send("Use subagents to find auth and the index view")
    session.close()
    [info] = list_sessions(session.workspace.root)
    assert info.id == session.id and info.first_prompt == "Use subagents to find auth and the index view"
    assert info.turns == 2 and info.subagents == ["sa-1", "sa-2"]
    assert info.usage.total_tokens == session.usage.total_tokens
    assert info.cwd == str(session.workspace.root) and info.started
    assert list_sessions(None)[0].id == session.id
    opened_only, _ = make_session()
    opened_only.close()
    assert len(list_sessions(session.workspace.root)) == 1  # a session with no prompt leaves no file


# ---- the pure repairs ----


def test_repair_answers_dangling_tool_uses_and_drops_what_the_api_would_refuse():
    use = {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"pattern": "x"}}
    messages: list[Message] = [
        {"role": "assistant", "content": [{"type": "text", "text": "orphan first"}]},
        {"role": "user", "content": [{"type": "text", "text": "find x"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "looking"}, use]},
        {"role": "user", "content": [{"type": "text", "text": "hurry"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "  "}]},  # partial: nothing usable
    ]
    fixed = repair(messages)
    assert [m["role"] for m in fixed] == ["user", "assistant", "user"]
    assert fixed[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True, "content": INTERRUPTED_RESULT},
        {"type": "text", "text": "hurry"},
    ]
    assert repair(fixed) == fixed
    stray: list[Message] = [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}, {"type": "text", "text": "hi"}],
        }
    ]
    assert repair(stray) == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    last = repair(
        [{"role": "user", "content": [{"type": "text", "text": "q"}]}, {"role": "assistant", "content": [use]}]
    )[-1]
    assert of(list, last["content"])[0]["tool_use_id"] == "toolu_1"


def test_rebuild_merges_user_messages_and_starts_again_after_compaction():
    def rec(kind, **fields):
        return {"type": kind, "agent_id": "main", **fields}

    records = [
        rec("user_message", content=[{"type": "text", "text": "one"}]),
        rec("turn_started", turn=1),
        rec("usage_updated", usage=Usage(10, 2).to_dict(), total=Usage(10, 2).to_dict(), model="m"),
        rec("assistant_message", content=[{"type": "text", "text": "1"}]),
        rec("user_message", content=[{"type": "text", "text": "two"}]),
        rec("user_message", content=[{"type": "text", "text": "more"}]),
        {"type": "subagent_started", "agent_id": "sa-1", "id": "sa-1"},
    ]
    state = agent_state(records)
    assert state.messages == [
        {"role": "user", "content": [{"type": "text", "text": "one"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "1"}]},
        {"role": "user", "content": [{"type": "text", "text": "two"}, {"type": "text", "text": "more"}]},
    ]
    assert (state.turns, state.usage, state.model) == (1, Usage(10, 2), "m")
    summary = [{"role": "user", "content": [{"type": "text", "text": "summary"}]}]
    state = agent_state(
        records
        + [
            rec("compacted", messages=summary, tokens_after=5),
            rec("assistant_message", content=[{"type": "text", "text": "ok"}]),
        ]
    )
    assert state.messages == summary + [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    assert state.last_usage.input_tokens == 5


def test_a_child_without_a_start_record_is_skipped_and_one_without_a_finish_is_interrupted():
    assert subagent_record([{"type": "turn_started", "agent_id": "sa-1"}], "sa-1") is None
    started = {
        "type": "subagent_started",
        "agent_id": "sa-1",
        "parent_tool_use_id": "toolu_9",
        "id": "sa-1",
        "subagent_type": "explore",
        "description": "d",
        "prompt": "p",
        "ts": "2025-01-01T00:00:00+00:00",
    }
    said = {
        "type": "assistant_message",
        "agent_id": "sa-1",
        "content": [{"type": "text", "text": "found it"}],
        "ts": "2025-01-01T00:00:04+00:00",
    }
    record = subagent_record([started, said], "sa-1")
    assert record is not None
    assert (record.status, record.type, record.tool_use_id, record.seconds) == ("interrupted", "explore", "toolu_9", 4)
    assert record.result.startswith("found it") and isinstance(record.events[0], SubagentStarted)


def test_a_resumed_tool_output_is_one_string_for_the_history_and_the_replayed_events(tmp_path):
    # the file stores a call's output twice (its tool_call_finished record and the tool result the model read):
    # parsed, it was two strings held for as long as the session runs
    def rec(type_, **fields):
        return json.dumps({"type": type_, "agent_id": "main", **fields})

    output = "src/cache.py:1:def expire(entry):\n" * 20
    lines = [
        rec("user_message", content=[{"type": "text", "text": "find it"}], origin="user"),
        rec("assistant_message", content=[tool_use_block("grep", {"pattern": "def"}, "toolu_1")]),
        rec(
            "tool_call_started",
            id="toolu_1",
            name="grep",
            input={"pattern": "def"},
            summary="def",
            preview=None,
            kind="search",
        ),
        rec("tool_call_finished", id="toolu_1", name="grep", output=output, is_error=False, seconds=0.1),
        rec("user_message", content=[{"type": "tool_result", "tool_use_id": "toolu_1", "content": output}]),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    records, _ = read_records(path)
    (result,) = of(list, agent_state(records).messages[-1]["content"])
    held = result["content"]
    events = replay_events(records)
    (started,) = [e for e in events if isinstance(e, ToolCallStarted)]
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.output == output and finished.output is held
    # and the short fields each line repeats (agent, tool name, call id) are one string each, not one per line
    assert (started.id, started.name, started.agent_id) == ("toolu_1", "grep", "main")
    assert started.id is finished.id and started.name is finished.name and started.agent_id is finished.agent_id
