"""The view model: a session's subagents and status-bar facts, built from engine events alone (no Textual, no prompt-toolkit)."""

from __future__ import annotations

from agentcli.core.engine.subagent_record import SubagentRecord
from agentcli.core.events import (
    Event,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    Usage,
    UsageUpdated,
)
from agentcli.core.tools import ToolRegistry, default_tools
from agentcli.core.vocabulary import ToolKind
from agentcli.ui.format import seconds
from agentcli.ui.view import SessionView, Subagent
from tests.origin import Origin

A: Origin = {"agent_id": "sa-1", "parent_tool_use_id": "toolu_1"}


def events() -> list[Event]:
    return [
        TurnStarted(turn=1, max_turns=30, **A),
        UsageUpdated(usage=Usage(100, 10), total=Usage(100, 10), **A),
        ToolCallStarted(
            id="c1",
            name="edit_file",
            kind="edit",
            input={"path": "src/a.py", "old_string": "x", "new_string": "y"},
            **A,
        ),
        ToolCallFinished(id="c1", name="edit_file", output="ok", is_error=False, seconds=0.1, **A),
        ToolCallStarted(id="c2", name="write_file", kind="edit", input={"path": "src/b.py", "content": "z"}, **A),
        ToolCallFinished(id="c2", name="write_file", output="refused", is_error=True, seconds=0.1, **A),
        TurnStarted(turn=2, max_turns=30, **A),
        UsageUpdated(usage=Usage(200, 20), total=Usage(300, 30), **A),
        SubagentFinished(
            id="sa-1", status="done", result="Changed a.py.", turns=2, usage=Usage(300, 30), seconds=4.0, **A
        ),
    ]


def test_state_follows_the_events_of_one_subagent():
    started = SubagentStarted(
        id="sa-1", subagent_type="general-purpose", description="Fix a", prompt="Fix a.py", max_turns=30, **A
    )
    state = Subagent.started_by(started, now=10.0)
    assert (state.status, state.tool_use_id) == ("queued", "toolu_1")  # a tuple: mypy keeps no "queued" for below
    for event in events():
        state.apply(event, now=12.0)
        if isinstance(event, TurnStarted):
            assert state.status == "running"
    assert (state.status, state.turn, state.tokens, state.result) == ("done", 2, 330, "Changed a.py.")
    assert state.files_changed == ["src/a.py"]  # the refused write changed nothing
    assert [t.status for t in state.recent_tools()] == ["ok", "error"]
    assert state.elapsed(now=99.0) == 4.0


def test_state_of_a_restored_record_keeps_its_final_facts():
    record = SubagentRecord(
        id="sa-1",
        type="general-purpose",
        description="Fix a",
        prompt="Fix a.py",
        tool_use_id="toolu_1",
        max_turns=30,
        status="interrupted",
        result="Partial.",
        turns=2,
        usage=Usage(300, 30),
        seconds=4.0,
        events=events()[:-1],
    )
    state = Subagent.from_record(record)
    assert (state.status, state.result, state.turn, state.tokens) == ("interrupted", "Partial.", 2, 330)
    assert state.files_changed == ["src/a.py"] and len(state.events) == 8


def test_formatting_helpers():
    tools = ToolRegistry(default_tools())
    assert tools.summary("read_file", {"path": "src/app.py", "limit": 5}) == "src/app.py"
    assert tools.summary("bash", {"command": "make test\nmore"}) == "make test"
    assert tools.summary("mystery", {"n": 1, "what": "this"}) == "this"
    assert (seconds(0.04), seconds(12.4), seconds(125)) == ("0.0 s", "12 s", "2 min 05 s")


def test_changed_files_come_from_the_tool_kind_not_its_name():
    agent = Subagent(id="sa-1", type="general-purpose", description="d")
    calls: list[tuple[str, str, ToolKind, str]] = [
        ("c1", "apply_patch", "edit", "src/new.py"),
        ("c2", "read_file", "read", "src/read.py"),
        ("c3", "edit_file", "edit", "src/new.py"),
    ]
    for call_id, name, kind, path in calls:
        agent.apply(ToolCallStarted(id=call_id, name=name, kind=kind, input={"path": path}, **A), 0.0)
        agent.apply(ToolCallFinished(id=call_id, name=name, output="ok", is_error=False, seconds=0.1, **A), 0.0)
        assert agent.latest_call == name  # no summary given
    assert agent.files_changed == ["src/new.py"]  # an edit-kind tool of any name counts, once per path


def test_session_view_routes_events_and_sums_the_status_bar_facts():
    view = SessionView()
    main_usage = Usage(input_tokens=1000, output_tokens=50, cache_read_tokens=500)
    view.apply(UsageUpdated(usage=main_usage, total=main_usage, model="claude-x"), now=1.0)
    started = SubagentStarted(
        id="sa-1", subagent_type="general-purpose", description="Fix a", prompt="p", max_turns=30, **A
    )
    agent = view.apply(started, now=10.0)
    assert agent is not None and agent.status == "queued" and view.for_call("toolu_1") is agent
    assert view.running == [agent]
    for event in events():
        assert view.apply(event, now=12.0) is agent
    assert view.for_call("toolu_other") is None and view.running == []
    assert (view.model, view.context_used) == ("claude-x", 1500)
    assert view.usage.total_tokens == 1550 + 330  # the main agent's total and the child's final usage
    assert view.tokens_kept_out == 200  # what its own context held at its latest call, never in main's
    assert agent.elapsed(now=99.0) == 4.0 and agent.finished


def test_an_event_of_an_unknown_subagent_is_ignored():
    view = SessionView()
    assert view.apply(TurnStarted(turn=1, agent_id="sa-9"), now=0.0) is None
    assert view.subagents == {}
