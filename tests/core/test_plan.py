"""todo_write: the plan an agent keeps for the user, in Claude Code's TodoWrite shape."""

from __future__ import annotations

from agentcli.core.events import PlanUpdated, ToolCallFinished
from agentcli.ui.view import SessionView
from tests.fakes.anthropic_server import offers_tool, text, tool_names, tool_result_text, tool_results, tool_use

PLAN = [
    {"content": "Read the auth code", "status": "completed", "activeForm": "Reading the auth code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]


async def test_a_plan_in_claude_codes_shape_becomes_a_plan_event_and_a_short_result(server, make_session):
    server.script(tool_use("todo_write", {"todos": PLAN}), text("Working on it."))
    session, events = make_session()
    await session.send("fix auth, then test")
    [plan] = events.of(PlanUpdated)
    assert plan.agent_id == "main"
    assert [(i["content"], i["status"], i["active_form"]) for i in plan.items] == [
        ("Read the auth code", "completed", "Reading the auth code"),
        ("Fix the bug", "in_progress", "Fixing the bug"),
        ("Run the tests", "pending", "Running the tests"),
    ]
    [result] = tool_results(server.requests[1])
    assert "3 items, 1 completed" in tool_result_text(result) and not result.get("is_error")
    [finished] = events.of(ToolCallFinished)
    assert not finished.denied  # it never asks, in any mode


async def test_a_bad_status_is_one_sentence_and_no_plan(server, make_session):
    server.script(tool_use("todo_write", {"todos": [{"content": "x", "status": "doing"}]}), text("Oops."))
    session, events = make_session(permission_mode="plan")
    await session.send("plan")
    assert not events.of(PlanUpdated)
    [result] = tool_results(server.requests[1])
    assert result["is_error"] and "status 'doing'" in tool_result_text(result)


async def test_the_system_prompt_says_when_a_plan_helps_and_children_may_keep_one(server, make_session):
    server.when(
        lambda b: offers_tool(b, "task"), tool_use("task", {"description": "Look", "prompt": "Look."}), text("Done.")
    )
    server.when(lambda b: not offers_tool(b, "task"), tool_use("todo_write", {"todos": PLAN[:1]}), text("Found."))
    session, events = make_session()
    await session.send("look around")
    main, child = server.requests[0], next(r for r in server.requests if not offers_tool(r, "task"))
    system = "".join(b["text"] for b in main["system"]) if isinstance(main["system"], list) else main["system"]
    assert "three or more distinct steps" in system and "Skip it for a single step" in system
    assert "todo_write" in tool_names(main) and "todo_write" in tool_names(child)  # a general-purpose child too
    [plan] = events.of(PlanUpdated)
    assert plan.agent_id == "sa-1" and plan.parent_tool_use_id


async def test_a_resumed_session_shows_its_latest_plan_again(server, make_session, resume):
    server.script(tool_use("todo_write", {"todos": PLAN}), tool_use("todo_write", {"todos": PLAN[:2]}), text("Ok."))
    session, _ = make_session()
    await session.send("go")
    session.close()
    again, _ = resume(session.id)
    view = SessionView()
    view.restore([], again.restored_events)
    assert [step.content for step in view.plan] == ["Read the auth code", "Fix the bug"]
