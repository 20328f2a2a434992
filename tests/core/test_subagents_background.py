"""task run_in_background and task resume: the engine's side (issue 16, parts 1 and 2)."""

from __future__ import annotations

import asyncio
import threading

from agentcli.core.events import (
    Event,
    SubagentFinished,
    SubagentResultDelivered,
    SubagentStarted,
    ToolCallFinished,
    UserMessage,
)
from agentcli.core.storage.store import read_records
from agentcli.ui.view import SessionView
from tests.fakes.anthropic_server import (
    first_user_text,
    last_user_text,
    message_text,
    offers_tool,
    reply,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)
from tests.waiting import until, within


def is_child(body):
    return not offers_tool(body, "task")


def is_main(body):
    return offers_tool(body, "task")


def background(description, prompt, **extra):
    return tool_use("task", {"description": description, "prompt": prompt, "run_in_background": True, **extra})


def main_requests(server):
    return [b for b in server.requests if is_main(b)]


async def test_background_child_returns_at_once_and_its_result_joins_the_busy_main_turn(server, make_session):
    child_done = threading.Event()  # the main agent's second reply waits until the child has finished
    server.when(
        is_main,
        background("Find auth", "Find where auth is handled."),
        tool_use("read_file", {"path": "README.md"}, gate=child_done, gate_timeout=120),
        text("Auth is in src/app/auth.py, and the README says it is a demo."),
    )
    server.when(is_child, text("Auth is handled in src/app/auth.py:9."))
    session, events = make_session()
    view = SessionView()

    def watch(event: Event) -> None:
        view.apply(event, 0.0)
        if isinstance(event, SubagentFinished):
            child_done.set()

    session.subscribe(watch)
    result = await session.send("Look into auth in the background and read the README meanwhile")
    assert result.text.startswith("Auth is in src/app/auth.py")
    [started_call] = tool_results(main_requests(server)[1])
    assert tool_result_text(started_call).startswith("sa-1 started in the background")
    assert not started_call.get("is_error")
    # The result came in the user message of the next model call, after the read_file result.
    last = main_requests(server)[2]["messages"][-1]
    assert [b["type"] for b in last["content"]][:2] == ["tool_result", "text"]
    arrived = message_text(last)
    assert "Background subagent sa-1 (Find auth) has finished." in arrived
    assert "Auth is handled in src/app/auth.py:9." in arrived and "[sa-1 · done · 1 turn" in arrived
    [delivered] = events.of(SubagentResultDelivered)
    assert (delivered.id, delivered.status, delivered.agent_id) == ("sa-1", "done", "main")
    assert [m.origin for m in events.of(UserMessage, agent_id="main")] == [
        "user",
        "tool_results",
        "tool_results",
        "subagent",
    ]
    [started] = events.of(SubagentStarted)
    assert started.background and started.segment == 1
    assert view.results_waiting == [] and view.subagents["sa-1"].background
    assert session.subagents.pending == []
    server.assert_no_rejections()


async def test_background_child_finishing_while_the_main_agent_is_idle_is_read_in_a_turn_of_its_own(
    server, make_session
):
    release = threading.Event()
    server.when(
        is_main,
        background("Count tests", "Count the test files."),
        text("Started it; I will report."),
        text("The child counted 0 test files."),
    )
    server.when(is_child, text("There are 0 test files.", gate=release, gate_timeout=120))
    session, events = make_session()
    view = SessionView()
    session.subscribe(lambda e: view.apply(e, 0.0))
    assert (await session.send("Count tests in the background")).text == "Started it; I will report."
    assert await session.read_results() is None  # nothing waits yet: no turn, no request
    assert len(main_requests(server)) == 2
    release.set()
    await until(lambda: view.results_waiting == ["sa-1"], "the view to show sa-1's result waiting")
    result = await within(session.read_results(), "the main agent's turn on the result")
    assert result is not None and result.text == "The child counted 0 test files."
    assert "There are 0 test files." in last_user_text(main_requests(server)[-1])
    assert view.results_waiting == []
    assert len(events.of(SubagentResultDelivered)) == 1
    server.assert_no_rejections()


async def test_interrupting_the_main_turn_leaves_a_background_child_running(server, make_session):
    hold_main, hold_child = threading.Event(), threading.Event()
    server.when(
        is_main,
        background("Slow search", "Search slowly."),
        text("never seen", gate=hold_main, gate_timeout=120),
        text("Read the result."),
    )
    server.when(is_child, text("Slow search found it.", gate=hold_child, gate_timeout=120))
    session, events = make_session()
    run = asyncio.create_task(session.send("go"))
    await until(
        lambda: len(main_requests(server)) == 2 and any(is_child(b) for b in server.requests),
        "the main agent's second call and the child's first",
    )
    run.cancel()  # esc
    try:
        await run
    except asyncio.CancelledError:
        pass
    assert session.subagents.records["sa-1"].status == "running"
    hold_child.set()
    await until(lambda: events.of(SubagentFinished, id="sa-1"), "the background child to finish")
    assert session.subagents.records["sa-1"].status == "done"
    hold_main.set()
    assert (await within(session.read_results(), "the turn on the result")).text == "Read the result."
    server.assert_no_rejections()


async def test_finish_background_waits_for_children_and_the_turn_that_reads_them(server, make_session):
    asked_again = threading.Event()  # child two answers once the main agent's last call of that turn is out

    def waiting_again(body):
        asked_again.set()
        return text("Waiting again.")

    server.when(
        is_main,
        background("One", "Errand one."),
        text("Waiting."),
        background("Two", "Errand two."),
        waiting_again,
        text("Both are in: one and two."),
    )
    server.when(lambda b: first_user_text(b) == "Errand one.", text("One done."))
    server.when(lambda b: first_user_text(b) == "Errand two.", text("Two done.", gate=asked_again, gate_timeout=120))
    session, events = make_session()
    await session.send("two errands, one after the other")
    last = await within(session.finish_background(), "the background work to end")
    assert last is not None and last.text == "Both are in: one and two."
    assert [e.id for e in events.of(SubagentResultDelivered)] == ["sa-1", "sa-2"]
    assert not session.subagents.running and not session.subagents.pending
    server.assert_no_rejections()


async def test_closing_the_session_keeps_a_running_background_child_as_interrupted(server, make_session):
    hold = threading.Event()
    server.when(is_main, background("Endless", "Never ends."), text("Left it running."))
    server.when(is_child, tool_use("grep", {"pattern": "login"}), text("never", gate=hold, gate_timeout=120))
    session, events = make_session()
    await session.send("go")
    await until(
        lambda: events.of(ToolCallFinished, agent_id="sa-1") and len(server.requests) >= 4,
        "the child to call grep and then the model again",
    )
    await within(session.subagents.interrupt_all(), "the child to stop")
    hold.set()
    [finished] = events.of(SubagentFinished)
    assert finished.status == "interrupted"
    assert session.subagents.pending == []  # nobody is left to read it
    records, _ = read_records(session.store.path_for("sa-1"))
    assert records[-1]["type"] == "subagent_finished" and records[-1]["status"] == "interrupted"


async def test_stop_cancels_every_running_child_and_each_still_reports(server, make_session):
    hold = threading.Event()
    server.when(
        is_main,
        reply(
            *[
                tool_use_block("task", {"description": name, "prompt": f"Errand {name}.", "run_in_background": True})
                for name in "AB"
            ]
        ),
        text("Both started."),
        text("Both were stopped."),
    )
    server.when(
        lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"},
        text("Stopped early."),
        text("Stopped early."),
    )
    server.when(
        is_child,
        tool_use("glob", {"pattern": "*"}),
        tool_use("glob", {"pattern": "*"}),
        text("never", gate=hold, gate_timeout=120),
        text("never", gate=hold, gate_timeout=120),
    )
    session, events = make_session()
    await session.send("start A and B")
    await until(lambda: len([b for b in server.requests if is_child(b)]) == 4, "both children to call again")
    assert sorted(session.subagents.cancel_all()) == ["sa-1", "sa-2"]
    await until(lambda: len(events.of(SubagentFinished)) == 2, "both children to finish")
    hold.set()
    assert [e.status for e in events.of(SubagentFinished)] == ["cancelled", "cancelled"]
    assert (await within(session.read_results(), "the turn on both results")).text == "Both were stopped."
    assert message_text(main_requests(server)[-1]["messages"][-1]).count("Stopped early.") == 2
    server.assert_no_rejections()


async def test_a_finished_child_is_resumed_with_its_whole_history(server, make_session):
    server.when(
        is_main,
        tool_use("task", {"description": "Find login", "prompt": "Where is login defined?"}),
        text("It is in auth.py."),
        tool_use("task", {"description": "Ask about login", "prompt": "Who calls it?", "resume": "sa-1"}),
        text("views.py imports it."),
    )
    server.when(
        is_child,
        tool_use("grep", {"pattern": "def login"}),
        text("login is at src/app/auth.py:4."),
        text("src/app/views.py imports login."),
    )
    session, events = make_session(subagent_max_turns=2)
    await session.send("Find login")
    result = await session.send("And who calls it?")
    assert result.text == "views.py imports it."
    child = [b for b in server.requests if is_child(b)]
    assert len(child) == 3  # 2 turns, then 1 turn of the resumed run: a fresh budget of 2
    resumed = child[2]
    assert first_user_text(resumed) == "Where is login defined?"
    assert [m["role"] for m in resumed["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert last_user_text(resumed) == "Who calls it?"
    assert [t["name"] for t in resumed["tools"]] == [t["name"] for t in child[0]["tools"]]
    answer = tool_result_text(tool_results(main_requests(server)[-1])[0])
    assert answer.startswith("src/app/views.py imports login.") and "[sa-1 · done · 3 turns" in answer
    footer = answer.splitlines()[-1]  # after a resume the figures are totals, and the footer says so
    assert " · totals of 2 runs; this run 1 turn and " in footer and footer.endswith(" s]"), footer
    assert [(e.id, e.segment) for e in events.of(SubagentStarted)] == [("sa-1", 1), ("sa-1", 2)]
    record = session.subagents.records["sa-1"]
    assert (record.segments, record.turns, len(session.subagents.records)) == (2, 3, 1)
    view = SessionView()
    for event in events.events:
        view.apply(event, 0.0)
    entry = view.subagents["sa-1"]
    assert (entry.segment, entry.turn, entry.status, len(view.subagents)) == (2, 3, "done", 1)
    assert view.for_call(events.of(SubagentStarted)[0].parent_tool_use_id) is entry
    server.assert_no_rejections()


async def test_resuming_an_unknown_or_running_child_is_an_error_that_says_why(server, make_session):
    hold = threading.Event()
    server.when(
        is_main,
        tool_use("task", {"description": "Ask", "prompt": "More?", "resume": "sa-9"}),
        background("Slow", "Slow errand."),
        tool_use("task", {"description": "Ask", "prompt": "More?", "resume": "sa-1"}),
        text("Understood."),
    )
    server.when(is_child, text("slow answer", gate=hold, gate_timeout=120))
    session, _ = make_session()
    await session.send("go")
    unknown, _started, running = [tool_results(b)[0] for b in main_requests(server)[1:4]]
    assert unknown["is_error"] and "There is no subagent sa-9 in this session; none has run yet." in tool_result_text(
        unknown
    )
    assert running["is_error"] and "sa-1 is still running" in tool_result_text(running)
    hold.set()
    await within(session.subagents.wait_background(), "the slow child")
    server.assert_no_rejections()


async def test_a_child_is_resumed_after_continue_from_its_session_file(server, make_session, resume):
    server.when(
        is_main,
        tool_use("task", {"description": "Find login", "prompt": "Where is login defined?"}),
        text("In auth.py."),
    )
    server.when(is_child, text("login is at src/app/auth.py:4."))
    session, _ = make_session()
    await session.send("Find login")
    session.close()
    server.when(
        is_main,
        tool_use("task", {"description": "Follow up", "prompt": "And handle_auth?", "resume": "sa-1"}),
        text("Both are in auth.py."),
    )
    server.when(is_child, text("handle_auth is at src/app/auth.py:9."))
    again, events = resume(continue_=True)
    assert (await again.send("and handle_auth?")).text == "Both are in auth.py."
    resumed = [b for b in server.requests if is_child(b)][-1]
    assert first_user_text(resumed) == "Where is login defined?"
    assert "login is at src/app/auth.py:4." in str(resumed["messages"][1])
    assert last_user_text(resumed) == "And handle_auth?"
    [started] = events.of(SubagentStarted)
    assert (started.id, started.segment) == ("sa-1", 2)
    again.close()  # its records written, for the next to read
    third, _ = resume(continue_=True)
    record = third.subagents.records["sa-1"]
    assert (record.segments, record.status, record.result) == (2, "done", "handle_auth is at src/app/auth.py:9.")
    assert len(record.messages) == 4 and third.subagents.next_number == 2
    server.assert_no_rejections()


async def test_a_delivered_result_is_stored_and_a_continued_session_carries_on_validly(server, make_session, resume):
    server.when(is_main, background("Count", "Count files."), text("Started."), text("Read it."), text("Carrying on."))
    server.when(is_child, text("There are 5 files."))
    session, _ = make_session()
    await session.send("count in the background")
    await within(session.finish_background(), "the background work")
    session.close()
    again, _ = resume(continue_=True)
    assert [e.id for e in again.restored_events if isinstance(e, SubagentResultDelivered)] == ["sa-1"]
    assert any(m["role"] == "user" and "There are 5 files." in message_text(m) for m in again.main.messages)
    assert (await again.send("go on")).text == "Carrying on."
    assert not again.subagents.pending  # a result read before is not read again
    server.assert_no_rejections()


async def test_background_children_count_against_the_parallel_limit(server, make_session):
    gate = threading.Event()
    server.when(
        is_main,
        reply(
            *[
                tool_use_block("task", {"description": f"E{n}", "prompt": f"Errand {n}.", "run_in_background": True})
                for n in (1, 2)
            ]
        ),
        text("Both started."),
        text("Both answered."),
    )
    server.when(is_child, text("first", gate=gate, gate_timeout=120), text("second"))
    session, events = make_session(max_parallel_subagents=1)
    assert (await session.send("two errands")).text == "Both started."
    await until(lambda: len([b for b in server.requests if is_child(b)]) == 1, "the first child's call")
    assert sorted(r.status for r in session.subagents.records.values()) == ["queued", "running"]
    gate.set()
    await until(lambda: len(events.of(SubagentFinished)) == 2, "both children to finish, one after the other")
    assert (await within(session.read_results(), "the turn on both results")).text == "Both answered."
    assert [e.id for e in events.of(SubagentResultDelivered)] == ["sa-1", "sa-2"]
    server.assert_no_rejections()
