"""The typed event contract: every fact a front end shows is a field of an event, never parsed out of text."""

from __future__ import annotations

import json

import pytest

from agentcli.core.content import NOTE_OPEN, agentcli_note
from agentcli.core.engine.loop import CUT_OFF
from agentcli.core.events import (
    STATUSES,
    HistoryCleared,
    Notice,
    Retrying,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    UserMessage,
    event_from_dict,
)
from agentcli.ui.format import seconds
from agentcli.ui.plain.display import STATUS_MARKS
from agentcli.ui.tui.format import STATUS_ICONS, STATUS_STYLES
from tests import retries
from tests.conftest import Recorder
from tests.fakes.anthropic_server import error, offers_tool, text, tool_use


async def test_a_retry_is_a_typed_event_with_its_numbers(server, make_session):
    server.script(error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"}), text("Fine."))
    session, events = make_session(api_retries=4)
    await session.send("hi")
    [retrying] = [e for e in events.of(Retrying) if retries.counted(e.text)]  # tests/retries.py
    assert (retrying.retries, retrying.delay) == (4, 0) and events.numbered_in_order(4)
    assert "Overloaded" in retrying.error and "Retrying" not in retrying.error
    assert retrying.text.endswith(f"Retrying in 0 s ({retrying.attempt}/4).")
    assert not [n for n in events.of(Notice) if "Retrying" in n.text]  # no prose to parse back


async def test_tool_calls_carry_their_kind_and_summary_and_messages_their_origin(server, make_session):
    server.script(tool_use("read_file", {"path": "src/app/auth.py"}), text("Read it."))
    session, events = make_session()
    await session.send("Read auth")
    [started] = events.of(ToolCallStarted)
    assert (started.kind, started.summary) == ("read", "src/app/auth.py")
    assert [m.origin for m in events.of(UserMessage)] == ["user", "tool_results"]


async def test_a_reply_cut_in_a_tool_call_is_followed_by_an_engine_note(server, make_session):
    cut = tool_use("write_file", {"path": "a.txt", "content": "x"}, stop_reason="max_tokens")
    server.script(cut, cut, text("Smaller steps then."))
    session, events = make_session()
    result = await session.send("write it")
    assert result.status == "done" and result.text == "Smaller steps then."
    notes = events.of(UserMessage, origin="engine")
    assert [n.content[0]["text"] for n in notes] == [agentcli_note(CUT_OFF)["text"]]


async def test_the_footer_is_for_the_model_only(server, make_session):
    server.when(
        lambda b: offers_tool(b, "task"), tool_use("task", {"description": "Look", "prompt": "Look."}), text("Done.")
    )
    server.when(lambda b: not offers_tool(b, "task"), text("Found it."))
    session, events = make_session()
    await session.send("delegate")
    [finished] = events.of(SubagentFinished)
    assert finished.result == "Found it."
    [tool_result] = [e for e in events.of(ToolCallFinished) if e.name == "task"]
    assert tool_result.output.startswith("Found it.\n\n" + NOTE_OPEN + "Receipt for sa-1")  # the receipt and footer
    assert tool_result.output.splitlines()[-1].startswith("[sa-1 · done")  # for the model only
    assert finished.report is not None and finished.report.for_parent() == tool_result.output
    [started] = events.of(SubagentStarted)
    assert started.subagent_type == "general-purpose" and started.to_dict()["subagent_type"] == "general-purpose"


async def test_clear_is_an_event_of_the_session_file(server, make_session, resume):
    server.script(text("a"), text("b"))
    session, events = make_session()
    await session.send("before")
    session.clear()
    await session.send("after")
    session.close()
    assert len(events.of(HistoryCleared)) == 1
    reopened, _ = resume(session.id)
    kinds = [type(e).__name__ for e in reopened.restored_events if isinstance(e, (UserMessage, HistoryCleared))]
    assert kinds == ["UserMessage", "HistoryCleared", "UserMessage"]


async def test_a_session_file_written_before_the_typed_fields_still_opens(server, make_session, resume):
    """Today's files: no origin, no kind or summary, retries as notices; the reader fills in what it can."""
    server.script(tool_use("bash", {"command": "echo hi"}), text("said hi"), text("b"))
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("say hi")
    session.clear()
    await session.send("again")
    session.close()
    path = session.store.main_path
    old = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        for key in ("origin", "kind", "summary"):
            record.pop(key, None)
        old.append(json.dumps(record))
    old.append(
        json.dumps(
            {
                "type": "notice",
                "ts": "2026-01-01T00:00:00+00:00",
                "agent_id": "main",
                "parent_tool_use_id": None,
                "level": "warning",
                "text": "Overloaded. Retrying in 2 s (1/8).",
            }
        )
    )
    old.append(
        json.dumps(
            {
                "type": "subagent_started",
                "ts": "2026-01-01T00:00:00+00:00",
                "agent_id": "sa-9",
                "parent_tool_use_id": "toolu_x",
                "id": "sa-9",
                "subagent_type": "explore",
                "description": "d",
                "prompt": "p",
                "max_turns": 5,
            }
        )
    )
    path.write_text("\n".join(old) + "\n")
    reopened, _ = resume(session.id)
    events = reopened.restored_events
    assert [e.origin for e in events if isinstance(e, UserMessage)] == ["user", "tool_results", "user"]
    [call] = [e for e in events if isinstance(e, ToolCallStarted)]
    assert (call.kind, call.summary) == ("exec", "echo hi")
    assert sum(isinstance(e, HistoryCleared) for e in events) == 1
    assert [e.subagent_type for e in events if isinstance(e, SubagentStarted)] == ["explore"]
    assert [m["content"][0]["text"] for m in reopened.main.messages] == ["again", "b"]


def test_old_stream_json_subagent_records_read_back():
    event = event_from_dict(
        {"type": "subagent_started", "id": "sa-1", "subagent_type": "bash", "description": "d", "prompt": "p"}
    )
    assert isinstance(event, SubagentStarted) and event.subagent_type == "bash"


def test_every_front_end_draws_every_status_and_one_duration_format():
    assert set(STATUS_ICONS) == set(STATUS_STYLES) == set(STATUSES)
    assert set(STATUS_MARKS) == set(STATUSES) - {"queued", "running"}
    assert (seconds(0.3), seconds(0.04), seconds(12.4), seconds(125)) == ("0.3 s", "0.0 s", "12 s", "2 min 05 s")


async def test_a_subscriber_gets_the_opening_warnings_first_then_the_live_events(server, make_session):
    server.script(text("hello"))
    session, constructor_sink = make_session(notices=["The workspace asked for something."])
    late = Recorder()
    session.subscribe(late)
    assert [e.text for e in late.of(Notice)] == ["The workspace asked for something."]
    await session.send("hi")
    assert late.events[1:] == constructor_sink.events[1:]  # after the replay, both see the same events


def test_every_kind_of_event_is_in_the_union_that_renderers_match_on():
    """A renderer's ``match`` ends in ``assert_never``: an event kind left out of ``AnyEvent`` would slip
    past mypy there and fail at run time instead."""
    from typing import get_args

    from agentcli.core.events import EVENT_TYPES, AnyEvent, Event

    def subclasses(cls: type) -> set[type]:
        found: set[type] = set()
        direct: type
        for direct in cls.__subclasses__():
            found |= {direct, *subclasses(direct)}
        return found

    assert subclasses(Event) == set(get_args(AnyEvent))
    assert set(EVENT_TYPES.values()) == set(get_args(AnyEvent))  # and the store can read each back


def test_events_compare_hash_and_print_by_their_fields_as_dataclasses_do():
    """Event's one __eq__, __hash__ and __repr__ (not one generated per class) keep a dataclass's behaviour."""
    import asyncio
    import dataclasses

    from agentcli.core.events import ApprovalRequested, TextDelta, ThinkingDelta

    delta = TextDelta(text="hi", agent_id="c1")
    assert delta == TextDelta(text="hi", agent_id="c1") and hash(delta) == hash(TextDelta(text="hi", agent_id="c1"))
    assert delta != TextDelta(text="ho", agent_id="c1") and delta != ThinkingDelta(text="hi", agent_id="c1")
    assert repr(delta) == "TextDelta(agent_id='c1', parent_tool_use_id=None, text='hi')"
    loop = asyncio.new_event_loop()
    try:  # a field left out of comparing (compare=False) is left out here too
        first, second = (ApprovalRequested(tool="bash", input={}, future=loop.create_future()) for _ in range(2))
        assert first == second and first != ApprovalRequested(tool="grep", input={}, future=first.future)
    finally:
        loop.close()
    assert dataclasses.replace(delta, text="ho") == TextDelta(text="ho", agent_id="c1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        delta.text = "ho"  # type: ignore[misc]
