"""Events are folded once, in the view model: line mode, stream-json and the TUI read the facts they draw
from it (which child runs, which call is open, a run of retries) instead of folding the events again."""

from __future__ import annotations

import dataclasses
import io

import pytest
from textual.app import App, ComposeResult

from agentcli.core.events import (
    ApprovalsWaiting,
    AssistantMessage,
    LanguageServerWorking,
    ModeChanged,
    Notice,
    ReplyStarted,
    Retrying,
    SubagentCancelling,
    SubagentFinished,
    SubagentStarted,
    SubagentSteered,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolProgress,
    TurnStarted,
    Usage,
    UsageUpdated,
)
from agentcli.ui.change import Asked, Line, Quiet, Status, Streamed, Updated
from agentcli.ui.plain.display import Display
from agentcli.ui.plain.screen import Painter, Screen
from agentcli.ui.tui.widgets.conversation import Conversation
from agentcli.ui.tui.widgets.entries import NoticeEntry
from agentcli.ui.view import SessionView
from tests.narrow import of
from tests.origin import Origin
from tests.ui.test_tui_support import plain

CHILD: Origin = {"agent_id": "sa-1", "parent_tool_use_id": "toolu_1"}


def line_mode(live: bool = False) -> tuple[Display, io.StringIO]:
    out = io.StringIO()
    screen = Screen(out, live=live, size=lambda: (120, 40))
    return Display(screen, Painter(None, lambda: screen.width), clock=lambda: 100.0), out


async def test_a_child_that_finishes_as_the_prompt_closes_still_gets_its_end_line():
    display, out = line_mode()
    display.handle(SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD))
    display.end_turn()  # the prompt closed before the child's last events came through the queue
    display.handle(ToolCallStarted(id="t1", name="grep", input={"pattern": "a"}, summary="a", **CHILD))
    display.handle(
        SubagentFinished(id="sa-1", status="done", result="ok", turns=2, usage=Usage(900, 100), seconds=3.0, **CHILD)
    )
    assert out.getvalue().splitlines() == [
        "  sa-1 ▸ Map it · explore",
        "  sa-1 · grep a",
        "  sa-1 ✓ done · 2 turns · 1.0k tokens · 3.0 s",
    ]


def test_the_view_counts_a_childs_latest_run_and_keeps_each_agents_latest_call():
    view = SessionView()
    view.apply(SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD), 10.0)
    view.apply(ToolCallStarted(id="t1", name="grep", input={"pattern": "a"}, **CHILD), 11.0)
    used = UsageUpdated(usage=Usage(900, 100), total=Usage(900, 100), model="m-1", **CHILD)
    view.apply(used, 12.0)
    child = view.subagents["sa-1"]
    assert (child.run_calls, child.run_tokens, view.latest_usage["sa-1"]) == (1, 1000, used)
    view.apply(
        SubagentFinished(id="sa-1", status="done", result="ok", turns=1, usage=Usage(900, 100), seconds=2.0, **CHILD),
        13.0,
    )
    view.apply(
        SubagentStarted(
            id="sa-1",
            subagent_type="explore",
            description="Again",
            prompt="…",
            segment=2,
            agent_id="sa-1",
            parent_tool_use_id="toolu_2",
        ),
        20.0,
    )
    assert (child.run_calls, child.run_tokens, child.started, child.tool_use_id) == (0, 0, 20.0, "toolu_2")


def test_the_view_counts_what_the_main_agents_call_streams_until_its_usage_comes():
    view = SessionView()
    view.apply(TurnStarted(turn=1), 1.0)
    view.apply(TextDelta(text="Hello, "), 1.0)
    view.apply(TextDelta(text="world"), 1.0)
    assert view.streamed == 12  # the TUI's working line estimates the call's tokens from it
    view.apply(UsageUpdated(usage=Usage(10, 3), total=Usage(10, 3)), 2.0)
    assert (view.streamed, view.main_usage.output_tokens) == (0, 3)


def test_a_run_of_retries_is_folded_once_and_ends_with_the_next_event_of_the_agents_loop():
    view = SessionView()
    view.apply(SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD), 1.0)
    for attempt in (1, 2):
        view.apply(Retrying(attempt=attempt, retries=8, delay=4.0, error="Overloaded.", **CHILD), 2.0)
    view.apply(SubagentSteered(id="sa-1", source="user", text="look in src/", **CHILD), 3.0)  # not its loop's
    assert view.subagents["sa-1"].retry == "retrying 2/8" and view.retried is None
    assert [(agent, run.count) for agent, run in view.retries.items()] == [("sa-1", 2)]
    view.apply(ThinkingDelta(text="Hmm", **CHILD), 4.0)  # the call got through: thinking comes first
    assert view.subagents["sa-1"].retry == "" and view.retries == {}
    assert view.retried is not None and view.retried[1].outcome == "Overloaded. Retried 2 times."
    view.apply(TurnStarted(turn=1, **CHILD), 5.0)
    assert view.retried is None  # said once, by the event that ended it


async def test_line_mode_says_a_run_of_retries_once_though_the_user_steered_meanwhile():
    display, out = line_mode(live=True)
    display.handle(SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD))
    display.handle(Retrying(attempt=1, retries=8, delay=4.0, error="Overloaded.", **CHILD))
    display.handle(SubagentSteered(id="sa-1", source="user", text="look in src/", **CHILD))
    display.handle(Retrying(attempt=2, retries=8, delay=4.0, error="Overloaded.", **CHILD))
    display.handle(TextDelta(text="Found it.", **CHILD))
    shown = out.getvalue()
    assert shown.count("Retried") == 1 and "  sa-1 ! Overloaded. Retried 2 times.\n" in shown


async def test_line_modes_running_calls_are_the_views_of_this_request():
    display, _ = line_mode(live=True)
    display.replay([ToolCallStarted(id="t0", name="read_file", input={"path": "old.py"}, summary="old.py")])
    display.idle = False  # a stored session left t0 open; the next request starts t1
    display.handle(ToolCallStarted(id="t1", name="grep", input={"pattern": "auth"}, summary="auth"))
    assert [(call.id, call.started) for call in display.view.transcript.running()] == [("t0", 100.0), ("t1", 100.0)]
    assert [call.id for call in display.running()] == ["t1"]
    assert [line for line in display.live_lines() if "grep" in line or "read_file" in line] == ["⠋ grep auth · 0.0 s"]


def test_the_view_says_what_kind_of_change_each_event_is_and_a_quiet_one_is_named_nowhere():
    view = SessionView()
    kinds = []
    for event in (
        SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD),
        TextDelta(text="Hi"),
        ToolCallStarted(id="t1", name="grep", input={}),
        ToolProgress(id="t1", progress=1.0),
        UsageUpdated(usage=Usage(10, 3), total=Usage(10, 3)),
        LanguageServerWorking(text="indexing"),
        SubagentCancelling(id="sa-1", **CHILD),
        ReplyStarted(),
        ModeChanged(mode="plan"),
        ApprovalsWaiting(agents=("sa-1",), descriptions=("Map it",), **CHILD),
    ):
        view.apply(event, 1.0)
        assert view.change.event is event
        kinds.append(type(view.change))
    assert kinds == [Line, Streamed, Line, Updated, Status, Status, Quiet, Quiet, Quiet, Asked]
    assert view.subagents["sa-1"].cancelling and view.servers_working == "indexing"  # folded all the same


async def test_a_quiet_event_changes_what_line_mode_and_the_tui_show_only_through_the_view():
    display, out = line_mode()
    display.handle(SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD))
    shown = out.getvalue()
    for quiet in (SubagentCancelling(id="sa-1", **CHILD), ReplyStarted(**CHILD), ModeChanged(mode="plan")):
        display.handle(quiet)
    assert out.getvalue() == shown and display.view.subagents["sa-1"].state(100.0) == "cancelling…"
    async with OneConversation().run_test() as pilot:
        conversation = pilot.app.query_one(Conversation)
        await conversation.replay(
            [
                Notice(level="info", text="Hello."),
                SubagentCancelling(id="sa-1", **CHILD),
                ModeChanged(mode="plan"),
                ReplyStarted(),
            ]
        )
        assert [plain(note) for note in conversation.query(NoticeEntry)] == ["Hello."]


def test_the_view_keeps_every_agents_open_and_refused_calls_which_acp_and_p_read():
    from agentcli.core.events import ToolCallFinished

    view = SessionView()
    view.apply(ToolCallStarted(id="m1", name="bash", input={"command": "ls"}), 1.0)
    view.apply(SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD), 2.0)
    view.apply(ToolCallStarted(id="c1", name="edit_file", input={"path": "a.py"}, **CHILD), 3.0)
    view.apply(ToolCallStarted(id="m2", name="grep", input={"pattern": "x"}), 4.0)
    assert [c.id for c in view.open_calls()] == ["m1", "c1", "m2"]
    assert [c.id for c in view.open_calls("sa-1")] == ["c1"]
    view.apply(
        ToolCallFinished(
            id="c1", name="edit_file", output="Refused.", is_error=True, seconds=0.0, denied=True, **CHILD
        ),
        5.0,
    )
    view.apply(ToolCallFinished(id="m1", name="bash", output="a.py", is_error=False, seconds=0.1), 6.0)
    assert [c.id for c in view.open_calls()] == ["m2"]
    assert [(c.id, c.agent_id, c.input) for c in view.refused] == [("c1", "sa-1", {"path": "a.py"})]
    mark = len(view.transcript.items)
    view.apply(AssistantMessage(content=[{"type": "text", "text": " Done. "}]), 7.0)
    assert view.said_since(mark) == ["Done."] and view.said_since(len(view.transcript.items)) == []


def test_the_view_says_which_events_changed_the_status_facts():
    view = SessionView()
    changed = []
    for event in (
        TurnStarted(turn=1),
        TextDelta(text="Hi"),
        UsageUpdated(usage=Usage(10, 3), total=Usage(10, 3)),
        ToolCallStarted(id="t1", name="grep", input={}),
        SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD),
        UsageUpdated(usage=Usage(5, 1), total=Usage(5, 1), **CHILD),
        SubagentFinished(id="sa-1", status="done", result="ok", turns=1, usage=Usage(5, 1), seconds=1.0, **CHILD),
    ):
        view.apply(event, 1.0)
        changed.append(view.status_changed)
    assert changed == [False, False, True, False, True, True, True]


class OneConversation(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation(id="conversation")


@pytest.mark.parametrize("agent_id", ["main", "sa-1"])  # the main screen's, a subagent's transcript
async def test_the_tuis_conversation_draws_a_replayed_run_of_retries_from_a_view_of_the_replay(agent_id):
    retry = {"retries": 8, "delay": 4.0, "error": "Overloaded.", "agent_id": agent_id}
    events = [
        Retrying(attempt=1, **retry),
        Retrying(attempt=2, **retry),
        TextDelta(text="Hi", agent_id=agent_id),
        AssistantMessage(content=[{"type": "text", "text": "Hi"}], agent_id=agent_id),
    ]
    async with OneConversation().run_test() as pilot:
        conversation = pilot.app.query_one(Conversation)
        await conversation.replay(events)
        notes = [plain(note) for note in conversation.query(NoticeEntry)]
        assert notes == ["Overloaded. Retried 2 times."]  # one line, its outcome once the call went through
        assert conversation.view.retries == {} and conversation.view.retried is None  # the live view: untouched
        await conversation.replay(events[:2])  # a session left while retrying: the line says the latest try
        assert [plain(note) for note in conversation.query(NoticeEntry)][1:] == [of(Retrying, events[1]).text]


async def test_a_child_of_one_turn_is_counted_in_the_singular():
    """Line mode, the TUI and the view's text say "1 turn", as the footer the model gets does ("1 turns" before)."""
    ended = SubagentFinished(id="sa-1", status="done", result="ok", turns=1, usage=Usage(900, 100), seconds=2.0)
    async with OneConversation().run_test() as pilot:
        conversation = pilot.app.query_one(Conversation)
        await conversation.replay([ended])
        [note] = [plain(note) for note in conversation.query(NoticeEntry)]
        assert "sa-1 done · 1 turn · 1.0k tokens" in note, note
    display, out = line_mode()
    display.handle(SubagentStarted(id="sa-1", subagent_type="explore", description="Map it", prompt="…", **CHILD))
    display.handle(dataclasses.replace(ended, **CHILD))
    assert out.getvalue().splitlines()[-1] == "  sa-1 ✓ done · 1 turn · 1.0k tokens · 2.0 s"
