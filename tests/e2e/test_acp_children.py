"""Subagents over ACP: child sessions for a client that opts in (foreground, background, resumed, in a worktree,
cancelled on their own, replayed by session/load), and folded into the task call for one that does not.

The processes are shared (test_acp_support.py): each test has its own session, repository and replies."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from acp import schema as s

from tests.e2e.test_acp_support import (  # noqa: F401 (fixtures)
    acp_home,
    api_env,
    opted_in,
    plain,
    plain_process,
    server,
    shared,
    shared_server,
    subagent_process,
)
from tests.fakes.anthropic_server import offers_tool, text, tool_use
from tests.waiting import until


def is_main(body) -> bool:
    return offers_tool(body, "task")


def delegation(server, **task) -> None:
    server.when(
        is_main,
        tool_use("task", {"description": "Find auth handler", "prompt": "Find where handle_auth is defined.", **task}),
        text("Auth is handled in `src/app/auth.py:9`."),
    )
    server.when(
        lambda b: not is_main(b),
        tool_use("grep", {"pattern": "def handle_auth"}),
        text("handle_auth is defined at src/app/auth.py:9."),
    )


def task_call(client, sid: str, n: int = 0):
    return [c for c in client.of(s.ToolCallStart, sid) if c.title.startswith("task")][n]


def links(client, sid: str) -> list[tuple[str, str]]:
    """(tool call, child session) of every update that names a call's child (in its _meta: the newest schema
    has no tool call content for it)."""
    return [
        (p["update"]["toolCallId"], p["update"]["_meta"]["agentcli"]["subagentSessionId"])
        for p in client.notes(sid)
        if "subagentSessionId" in p["update"].get("_meta", {}).get("agentcli", {})
    ]


@shared
async def test_subagents_are_child_sessions_for_a_client_that_opts_in(server, opted_in, repo):
    agent, client = opted_in
    delegation(server)
    sid = await agent.new(repo)
    done = await agent.prompt(sid, "Where is auth handled?")
    assert done.stop_reason == "end_turn"
    child = f"{sid}:sa-1"
    announced = client.subagent_updates(sid)
    assert [u["sessionId"] for u in announced] == [child, child]
    assert announced[0]["title"] == "Find auth handler"
    assert announced[0]["capabilities"] == {"cancel": {}}
    assert announced[0]["state"]["state"] == "running"
    assert announced[1]["state"] == {
        "state": "idle",
        "stopReason": "end_turn",
        "_meta": {"agentcli": {"status": "done", "turns": 2}},
    }
    raw = [m["params"] for m in client.raw if m.get("method") == "session/update"]
    first_child_update = next(i for i, p in enumerate(raw) if p["sessionId"] == child)
    assert raw.index(next(p for p in raw if p["update"] == announced[0])) < first_child_update
    [grep] = client.of(s.ToolCallStart, child)
    assert grep.kind == "search" and "def handle_auth" in grep.title
    assert "handle_auth is defined" in client.said(child)
    task = task_call(client, sid)
    assert task.kind == "other"  # an errand handed on, not the model's own thinking (which an editor folds away)
    # linked as it starts, and still linked once it ends (an update's content replaces the call's)
    assert links(client, sid) == [(task.tool_call_id, child), (task.tool_call_id, child)]
    ended = [p["update"] for p in client.notes(sid) if p["update"].get("status") == "completed"][-1]
    assert ended["toolCallId"] == task.tool_call_id
    [answer] = ended["content"]  # the child's answer as text, which every client reads
    assert "handle_auth is defined at src/app/auth.py:9." in answer["content"]["text"]
    assert client.said(sid) == "Auth is handled in `src/app/auth.py:9`."
    assert client.invalid == [] and client.raw


@shared
async def test_a_client_that_did_not_opt_in_sees_the_child_folded_into_the_task_call(server, plain, repo):
    agent, client = plain
    delegation(server)
    sid = await agent.new(repo)
    await agent.prompt(sid, "Where is auth handled?")
    assert {session for session, _ in client.updates} == {sid}
    assert not any(
        m.get("method") == "session/update" and m["params"]["update"].get("sessionUpdate") == "subagent_update"
        for m in client.raw
    )
    task = task_call(client, sid)
    finished = [u for u in client.of(s.ToolCallProgress, sid) if u.tool_call_id == task.tool_call_id]
    assert "handle_auth is defined at src/app/auth.py:9." in finished[-1].content[0].content.text
    assert client.invalid == []


@shared
async def test_a_childs_plan_goes_to_its_own_session(server, opted_in, repo):
    agent, client = opted_in
    server.when(is_main, tool_use("task", {"description": "Plan the fix", "prompt": "Plan it."}), text("Planned."))
    server.when(
        lambda b: not is_main(b),
        tool_use(
            "todo_write",
            {"todos": [{"content": "Find handle_auth", "status": "in_progress", "activeForm": "Finding handle_auth"}]},
        ),
        text("One step."),
    )
    sid = await agent.new(repo)
    await agent.prompt(sid, "Plan the fix")
    [plan] = client.of(s.AgentPlanUpdate, f"{sid}:sa-1")
    assert [(e.content, e.status) for e in plan.entries] == [("Find handle_auth", "in_progress")]
    assert client.of(s.AgentPlanUpdate, sid) == []
    assert client.invalid == []


@shared
async def test_a_child_cancelled_on_its_own_still_reports_to_its_parent(server, opted_in, repo):
    agent, client = opted_in
    gate = threading.Event()
    server.when(
        is_main,
        tool_use("task", {"description": "Find auth handler", "prompt": "Find where handle_auth is defined."}),
        text("The subagent found part of it."),
    )
    server.when(
        lambda b: not is_main(b),
        tool_use("grep", {"pattern": "def handle_auth"}),
        text("never sent", gate=gate),
        text("Partial: handle_auth is in src/app/auth.py."),
    )
    try:
        sid = await agent.new(repo)
        prompt = asyncio.create_task(agent.prompt(sid, "Find auth"))
        await until(lambda: len(server.requests) >= 3, "the child's second model call")
        await agent.conn.cancel(session_id=f"{sid}:sa-1")
        done = await prompt
    finally:
        gate.set()
    assert done.stop_reason == "end_turn"  # the parent went on: only the child was cancelled
    task = task_call(client, sid)
    result = [p["update"] for p in client.notes(sid) if p["update"].get("toolCallId") == task.tool_call_id][-1]
    assert "Partial: handle_auth is in src/app/auth.py." in result["content"][-1]["content"]["text"]
    ended = client.subagent_updates(sid)[-1]
    assert ended["state"]["stopReason"] == "cancelled" and ended["state"]["_meta"]["agentcli"]["status"] == "cancelled"
    assert client.said(sid) == "The subagent found part of it."
    assert client.invalid == [] and client.raw


def background(server, gate: threading.Event) -> None:
    server.when(
        is_main,
        tool_use(
            "task", {"description": "Find auth handler", "prompt": "Find handle_auth.", "run_in_background": True}
        ),
        text("It runs in the background."),
    )
    server.when(lambda b: not is_main(b), text("handle_auth is at src/app/auth.py:9.", gate=gate))


@shared
async def test_a_background_child_is_a_child_session_that_says_it_finished_after_the_prompt(server, opted_in, repo):
    agent, client = opted_in
    gate = threading.Event()
    background(server, gate)
    try:
        sid = await agent.new(repo)
        done = await agent.prompt(sid, "Look in the background")
        assert done.stop_reason == "end_turn"
        child = f"{sid}:sa-1"
        [running] = client.subagent_updates(sid)
        assert running["sessionId"] == child and running["state"]["state"] == "running"
    finally:
        gate.set()  # the child answers while no prompt runs
    await until(lambda: len(client.subagent_updates(sid)) == 2, "the child's end, announced on its parent")
    assert client.subagent_updates(sid)[-1]["state"]["stopReason"] == "end_turn"
    assert client.said(child) == "handle_auth is at src/app/auth.py:9."
    task = task_call(client, sid)

    def task_updates() -> list[dict[str, Any]]:
        return [p["update"] for p in client.notes(sid) if p["update"].get("toolCallId") == task.tool_call_id]

    # the call's result follows the child's end (agent.py: announce, then background_result)
    await until(
        lambda: "handle_auth is at" in str(task_updates()[-1].get("content")),
        "the task call's result, after the child's end",
    )
    last = task_updates()[-1]
    assert last["_meta"]["agentcli"]["subagentSessionId"] == child  # the task call still names it
    assert "handle_auth is at src/app/auth.py:9." in last["content"][0]["content"]["text"]
    assert client.invalid == []


@shared
async def test_a_background_childs_result_reaches_its_task_call_for_a_client_without_child_sessions(
    server, plain, repo
):
    agent, client = plain
    gate = threading.Event()
    background(server, gate)
    try:
        sid = await agent.new(repo)
        await agent.prompt(sid, "Look in the background")
        task = task_call(client, sid)
    finally:
        gate.set()

    def result() -> str:
        said = [
            u.content[0].content.text
            for u in client.of(s.ToolCallProgress, sid)
            if u.tool_call_id == task.tool_call_id and u.content
        ]
        return said[-1] if said else ""

    await until(lambda: "handle_auth is at src/app/auth.py:9." in result(), "the result in the task call")
    assert "sa-1 · done" in result()
    assert {session for session, _ in client.updates} == {sid}
    assert client.invalid == []


@shared
async def test_a_resumed_child_goes_on_in_the_same_child_session(server, opted_in, repo):
    agent, client = opted_in
    server.when(
        is_main,
        tool_use("task", {"description": "Find login", "prompt": "Where is login defined?"}),
        tool_use("task", {"description": "Follow up", "prompt": "And who calls it?", "resume": "sa-1"}),
        text("views.py calls it."),
    )
    server.when(lambda b: not is_main(b), text("login is at src/app/auth.py:4."), text("src/app/views.py imports it."))
    sid = await agent.new(repo)
    await agent.prompt(sid, "Who calls login?")
    child = f"{sid}:sa-1"
    updates = client.subagent_updates(sid)
    assert [u["sessionId"] for u in updates] == [child] * 4  # started, ended, started again, ended
    assert [u["state"]["state"] for u in updates] == ["running", "idle", "running", "idle"]
    assert updates[2]["title"] == "Follow up"
    first, second = task_call(client, sid, 0), task_call(client, sid, 1)
    assert first.tool_call_id != second.tool_call_id
    # each call links to the one child as it starts, and still does once it ends
    assert links(client, sid) == [(first.tool_call_id, child)] * 2 + [(second.tool_call_id, child)] * 2
    assert client.said(child) == "login is at src/app/auth.py:4.src/app/views.py imports it."
    assert not any(session.endswith(":sa-2") for session, _ in client.updates)
    assert client.invalid == []


@shared
async def test_a_child_in_its_own_worktree_is_a_child_session_too(server, opted_in, repo):
    agent, client = opted_in
    server.when(
        is_main,
        tool_use("task", {"description": "Read auth", "prompt": "Read auth.py.", "isolation": "worktree"}),
        text("Auth is handled in `src/app/auth.py:9`."),
    )
    server.when(
        lambda b: not is_main(b),
        tool_use("read_file", {"path": "src/app/auth.py"}),
        text("handle_auth is defined at src/app/auth.py:9."),
    )
    sid = await agent.new(repo)
    done = await agent.prompt(sid, "Where is auth handled?")
    assert done.stop_reason == "end_turn"
    child = f"{sid}:sa-1"
    updates = client.subagent_updates(sid)
    assert [u["state"]["state"] for u in updates] == ["running", "idle"]
    assert updates[-1]["state"]["stopReason"] == "end_turn"
    [read] = client.of(s.ToolCallStart, child)
    where = Path(read.locations[0].path)  # the file it read is its worktree's (gone now: it changed nothing)
    assert where.parts[-5:] == ("worktrees", "sa-1", "src", "app", "auth.py")
    assert not where.is_relative_to(repo.resolve())
    assert "handle_auth is defined" in client.said(child)
    assert client.invalid == []


@shared
async def test_loading_a_session_replays_its_children_as_child_sessions(server, plain, opted_in, repo):
    first, _ = plain  # the session is made where nobody watched its children: they are on disk all the same
    delegation(server)
    sid = await first.new(repo)
    await first.prompt(sid, "Where is auth handled?")
    agent, client = opted_in
    await agent.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[])
    client.sessions.append(sid)
    child = f"{sid}:sa-1"
    updates = client.subagent_updates(sid)
    assert [u["state"]["state"] for u in updates] == ["running", "idle"]
    assert updates[0]["title"] == "Find auth handler"
    raw = [m["params"] for m in client.raw if m.get("method") == "session/update"]
    first_child = next(i for i, p in enumerate(raw) if p["sessionId"] == child)
    assert raw.index(next(p for p in raw if p["update"] == updates[0])) < first_child
    [grep] = client.of(s.ToolCallStart, child)
    assert "def handle_auth" in grep.title
    assert client.said(child) == "handle_auth is defined at src/app/auth.py:9."
    task = task_call(client, sid)
    assert (task.tool_call_id, child) in links(client, sid)
    assert client.said(sid) == "Auth is handled in `src/app/auth.py:9`."
    assert client.invalid == []
