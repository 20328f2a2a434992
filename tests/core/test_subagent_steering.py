"""Steering one child: a message at its next turn boundary, wrap-up (asked for, or at a budget), and a session
budget that winds the children down. Against the stand-in server, with the model scripted."""

from __future__ import annotations

import asyncio
import json
import threading

from agentcli.core.content import agentcli_note
from agentcli.core.engine.steering import RELAYED
from agentcli.core.events import SubagentFinished, SubagentStarted, SubagentSteered, SubagentWrappingUp
from tests.fakes.anthropic_server import first_user_text, offers_tool, text, tool_result_text, tool_results, tool_use
from tests.waiting import until, within


def is_main(body):
    return offers_tool(body, "task")


def child_requests(server, brief):
    return [b for b in server.requests if first_user_text(b) == brief]


def said(body) -> str:
    """Everything the request's history holds, as one text (notes, tool results, answers)."""
    return json.dumps(body["messages"])


def main_results(server) -> list[str]:
    return [tool_result_text(block) for body in server.requests if is_main(body) for block in tool_results(body)]


async def test_a_message_from_the_user_reaches_the_running_child_in_its_next_request(server, make_session):
    hold = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find auth"}), text("Reported."))
    server.when(
        lambda b: first_user_text(b) == "Find auth",
        tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120),
        text("Auth is in lib/auth.py."),
    )
    session, events = make_session()
    run = asyncio.create_task(session.send("go"))
    try:
        await until(lambda: child_requests(server, "Find auth"), "the child's first call")
        assert session.subagents.steer("sa-1", "Look in lib/ as well, not only src/.") == ""
        [steered] = events.of(SubagentSteered)
        assert steered.id == "sa-1" and steered.source == "user"
        assert "Look in lib/" not in said(child_requests(server, "Find auth")[0])
        hold.set()
        await within(run, "the parent's answer")
    finally:
        hold.set()
    second = child_requests(server, "Find auth")[1]
    assert json.dumps(
        agentcli_note(
            "A message from the user while you work (not a tool result; take it into "
            "account):\n\nLook in lib/ as well, not only src/.",
            said_by=RELAYED,
        )["text"]
    ) in said(second)  # not "From agentcli, not the user"
    mains = [b for b in server.requests if is_main(b)]  # the parent reads it in the child's receipt, not before
    assert [b for b in mains if "Look in lib/" in said(b)] == mains[-1:]
    assert "Auth is in lib/auth.py." in main_results(server)[0]
    # the parent learns what the user told its child, or the child's "as you asked" would be a riddle to it
    assert 'The user told it while it worked: "Look in lib/ as well, not only src/."' in main_results(server)[0]
    assert "is not running" in session.subagents.steer("sa-1", "too late")  # a finished child takes none


async def test_a_message_the_child_never_read_is_in_its_receipt_as_too_late(server, make_session):
    hold = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find auth"}), text("Reported."))
    server.when(
        lambda b: first_user_text(b) == "Find auth",
        tool_use("glob", {"pattern": "*"}),
        text("Auth is in lib/auth.py.", gate=hold, gate_timeout=120),
    )
    session, _ = make_session()
    run = asyncio.create_task(session.send("go"))
    try:
        await until(lambda: len(child_requests(server, "Find auth")) == 2, "the child's last call")
        assert session.subagents.steer("sa-1", "Also check the\ntests.") == ""
        hold.set()
        await within(run, "the parent's answer")
    finally:
        hold.set()
    assert not any("check the" in said(b) for b in child_requests(server, "Find auth"))
    assert (
        'The user told it while it worked (too late: it had finished): "Also check the tests."'
        in main_results(server)[0]
    )


async def test_the_main_agent_steers_a_background_child_with_message_subagent(server, make_session):
    hold = threading.Event()
    server.when(
        is_main,
        tool_use("task", {"description": "Count tests", "prompt": "Count tests", "run_in_background": True}),
        tool_use("message_subagent", {"subagent_id": "sa-1", "message": "Skip the e2e folder."}),
        text("Waiting for it."),
        text("It counted them."),
    )
    server.when(
        lambda b: first_user_text(b) == "Count tests",
        tool_use("glob", {"pattern": "tests/*"}, gate=hold, gate_timeout=120),
        text("41 tests."),
    )
    session, events = make_session()
    try:
        await session.send("go")  # ends once the main agent has sent its message
    finally:
        hold.set()
    assert "It reads your message before its next model call" in main_results(server)[-1]
    await within(session.finish_background(), "the background child and the turn that reads it")
    second = child_requests(server, "Count tests")[1]
    assert "A message from the main agent while you work" in said(second) and "Skip the e2e folder." in said(second)
    assert not offers_tool(second, "message_subagent")  # a child is never offered it
    [finished] = events.of(SubagentFinished)
    assert finished.status == "done" and finished.result == "41 tests."


async def test_message_subagent_refuses_an_unknown_child_in_one_sentence(server, make_session):
    server.when(is_main, tool_use("message_subagent", {"subagent_id": "sa-9", "message": "hi"}), text("ok"))
    session, _ = make_session()
    await session.send("go")
    [result] = [block for body in server.requests if is_main(body) for block in tool_results(body)]
    assert result["is_error"] and "There is no subagent sa-9 in this session" in tool_result_text(result)


async def test_a_child_at_its_token_budget_is_asked_to_wrap_up_with_one_tool_less_call(server, make_session):
    server.when(
        is_main,
        tool_use("task", {"description": "Big search", "prompt": "Big search", "token_budget": 5000}),
        text("Reported."),
    )
    server.when(
        lambda b: first_user_text(b) == "Big search" and b.get("tool_choice") == {"type": "none"},
        text("Partial: auth is in lib/, tests not checked."),
    )
    server.when(
        lambda b: first_user_text(b) == "Big search", tool_use("glob", {"pattern": "*"}, usage={"input_tokens": 6000})
    )
    session, events = make_session()
    await session.send("go")
    calls = child_requests(server, "Big search")
    assert len(calls) == 2  # one turn, then the wrap-up: not killed, not another turn with tools
    assert calls[-1]["tool_choice"] == {"type": "none"} and "your token budget (5.0k tokens)" in said(calls[-1])
    [wrapping] = events.of(SubagentWrappingUp)
    assert "token budget" in wrapping.reason
    [finished] = events.of(SubagentFinished)
    assert finished.status == "done" and finished.result == "Partial: auth is in lib/, tests not checked."
    answer = main_results(server)[0]
    assert "Partial: auth is in lib/" in answer and "1 turn + wrap-up" in answer


async def test_a_child_is_told_once_as_it_nears_its_turn_cap(server, make_session):
    server.when(is_main, tool_use("task", {"description": "Long one", "prompt": "Long one"}), text("ok"))
    server.when(
        lambda b: first_user_text(b) == "Long one",
        *[tool_use("glob", {"pattern": "*"}) for _ in range(6)],
        text("Done."),
    )
    session, _ = make_session(subagent_max_turns=8)
    await session.send("go")
    calls = child_requests(server, "Long one")
    warned = [i for i, body in enumerate(calls, 1) if "You are near your turn cap" in said(body)]
    assert warned[0] == 6  # 3 turns left of 8: early enough to answer well
    assert said(calls[-1]).count("You are near your turn cap") == 1  # once


async def test_the_user_asks_a_running_child_to_wrap_up(server, make_session):
    hold = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Slow", "prompt": "Slow"}), text("Reported."))
    server.when(
        lambda b: first_user_text(b) == "Slow" and b.get("tool_choice") == {"type": "none"},
        text("What I have: src/a.py."),
    )
    server.when(lambda b: first_user_text(b) == "Slow", tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120))
    session, events = make_session()
    run = asyncio.create_task(session.send("go"))
    try:
        await until(lambda: child_requests(server, "Slow"), "the child's first call")
        assert session.subagents.wrap_up("sa-1") == ""
        assert "already finishing" in session.subagents.wrap_up("sa-1")
        hold.set()
        await within(run, "the parent's answer")
    finally:
        hold.set()
    last = child_requests(server, "Slow")[-1]
    assert last["tool_choice"] == {"type": "none"} and "the user asked you to wrap up now" in said(last)
    assert "What I have: src/a.py." in main_results(server)[0]
    assert events.of(SubagentFinished)[0].status == "done"


async def test_near_the_session_budget_no_new_child_starts(server, make_session):
    server.when(
        is_main,
        tool_use("task", {"description": "One more", "prompt": "One more"}, usage={"input_tokens": 2_000_000}),
        text("I will finish myself."),
    )
    session, _ = make_session(max_budget_usd=1.0)
    await session.send("go")
    assert not child_requests(server, "One more")
    [result] = [block for body in server.requests if is_main(body) for block in tool_results(body)]
    assert result["is_error"] and "so no new subagent starts" in tool_result_text(result)


def test_an_agent_file_sets_a_token_and_a_cost_budget():
    from agentcli.core.engine.agents import AgentFileError, parse_agent_file

    kind = parse_agent_file(
        "---\nname: scout\ndescription: Looks.\ntokenBudget: 40000\ncost-budget: 0.25\n---\nLook.", source="scout.md"
    )
    assert kind.token_budget == 40000 and kind.cost_budget == 0.25
    try:
        parse_agent_file("---\nname: scout\ndescription: Looks.\ncostBudget: lots\n---\n", source="scout.md")
    except AgentFileError as exc:
        assert str(exc) == "'cost_budget' must be a number of US dollars, not 'lots'"
    else:
        raise AssertionError("a cost budget that is no number was taken")


async def test_one_task_call_takes_a_structured_brief_and_a_budget_together(server, make_session):
    server.when(
        is_main,
        tool_use(
            "task",
            {
                "description": "Both",
                "prompt": "Find auth",
                "files": ["src/a.py"],
                "deliverable": "a list",
                "token_budget": 90000,
            },
        ),
        text("ok"),
    )
    server.when(lambda b: first_user_text(b).startswith("Find auth"), text("Auth is in src/a.py."))
    session, events = make_session()
    await session.send("go")
    [child] = [b for b in server.requests if first_user_text(b).startswith("Find auth")]
    assert "# Files to start from\n- src/a.py" in first_user_text(child)
    assert "# What to deliver\na list" in first_user_text(child)
    [started] = events.of(SubagentStarted)
    assert started.token_budget == 90000
    assert not any(block["is_error"] for block in tool_results(server.requests[-1]))


async def test_json_and_cost_attribute_cost_per_child_and_per_agent_type(server, make_session):
    from agentcli.ui import slash
    from agentcli.ui.prompt_mark import Mark
    from agentcli.ui.stream_json import result_message

    server.when(
        is_main, tool_use("task", {"description": "Look", "prompt": "Look", "subagent_type": "explore"}), text("Done.")
    )
    server.when(lambda b: first_user_text(b) == "Look", text("Found it.", usage={"input_tokens": 100_000}))
    session, _ = make_session()
    mark = Mark.of(session)
    await session.send("go")
    result = result_message(session, mark, text="Done.", status="done", is_error=False)
    child_cost = session.children[0].usage.cost
    assert child_cost and result["subagents"][0]["cost_usd"] == round(child_cost, 6)
    assert result["subagent_types"]["explore"]["subagents"] == 1
    assert result["subagent_types"]["explore"]["cost_usd"] == round(child_cost, 6)
    assert result["total_cost_usd"] >= round(child_cost, 6)  # the total never leaves the children out
    report = slash.cost_report(session)
    assert "type explore" in report and "1 subagent" in report
