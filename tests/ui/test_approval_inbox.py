"""One approval inbox: two background children asking at once wait in one queue, in order, neither
lost nor replaced; the panel counts them and marks each "waiting for you"; a call may be allowed for
one subagent alone. Under Pilot and in line mode, against the stand-in server."""

from __future__ import annotations

from agentcli.core.events import ALLOW_AGENT, ApprovalRequested
from agentcli.ui.tui.screens.approval import ApprovalScreen
from tests.fakes.anthropic_server import (
    first_user_text,
    message_text,
    offers_tool,
    reply,
    text,
    tool_use,
    tool_use_block,
)
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode harness)
from tests.ui.test_tui_support import SIZE, is_main, send, until
from tests.ui.test_tui_support import plain as plain_text


def background(description, prompt):
    return tool_use_block("task", {"description": description, "prompt": prompt, "run_in_background": True})


def child(prompt):
    return lambda body: not offers_tool(body, "task") and first_user_text(body) == prompt


MAIN_ANSWERS = ("Both started.", "Read a result.", "Read the other.", "All read.")  # after the first reply


def script_two_children(server):
    """The main agent starts two background children in one message; each wants to run a command."""
    server.when(
        is_main,
        reply(background("Count alpha", "Run the alpha count."), background("Count beta", "Run the beta count.")),
        *[text(answer) for answer in MAIN_ANSWERS],
    )
    server.when(child("Run the alpha count."), tool_use("bash", {"command": "echo alpha-ran"}), text("alpha done."))
    server.when(child("Run the beta count."), tool_use("bash", {"command": "echo beta-ran"}), text("beta done."))


def results_read(server):
    """Every tool result and background result the main agent was given, as one text."""
    return "\n".join(
        message_text(m) for b in server.requests if is_main(b) for m in b["messages"] if m["role"] == "user"
    )


async def test_two_children_asking_at_once_wait_in_one_queue_shown_in_order(server, tui):
    script_two_children(server)
    app = tui()
    asked: list[ApprovalRequested] = []
    app.session.subscribe(lambda e: asked.append(e) if isinstance(e, ApprovalRequested) else None)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "count both in the background")
        await until(
            pilot,
            lambda: isinstance(app.screen, ApprovalScreen) and len(app.view.approvals) == 2,
            "both children's calls in the inbox",
        )
        first = app.screen
        first_id = first.request.agent_id
        second_id = "sa-2" if first_id == "sa-1" else "sa-1"
        errand = {"sa-1": "Count alpha", "sa-2": "Count beta"}
        assert plain_text(first.query_one("#approval-agent")) == f"Asked by subagent {first_id} ({errand[first_id]})"
        await until(
            pilot,
            lambda: (
                plain_text(first.query_one("#approval-queue"))
                == f"1 more waiting after this: {second_id} ({errand[second_id]})"
            ),
            "the modal's queue line",
        )
        inbox = app.panel.query_one("#panel-inbox")
        assert plain_text(inbox) == (
            f"2 approvals wait: {first_id} ({errand[first_id]}), {second_id} ({errand[second_id]})"
        )
        for agent_id in ("sa-1", "sa-2"):  # both wait for the user: neither is flagged as stalled
            state = app.view.subagents[agent_id]
            assert state.state(now=1e9, stall_after=1.0) == "waiting for you"
            assert "waiting for you" in str(app.panel.entries[agent_id].title)
        assert len(asked) == 1  # the second question waits its turn: it does not replace the first
        await pilot.press("y")
        await until(
            pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen is not first, "the second question"
        )
        assert app.screen.request.agent_id == second_id
        assert (
            plain_text(app.screen.query_one("#approval-agent"))
            == f"Asked by subagent {second_id} ({errand[second_id]})"
        )
        assert not app.screen.query_one("#approval-queue").display  # no one after it
        assert plain_text(inbox) == f"1 approval waits: {second_id} ({errand[second_id]})"
        assert app.view.subagents[first_id].state(now=0.0) != "waiting for you"
        await pilot.press("y")
        await until(
            pilot,
            lambda: "alpha done." in results_read(server) and "beta done." in results_read(server) and not app.busy,
            "both results read by the main agent",
        )
        assert not inbox.display and app.view.approvals == []
        assert [e.agent_id for e in asked] == [first_id, second_id]
        assert "alpha-ran" in results_read(server) or app.session.subagents.records["sa-1"].status == "done"
    server.assert_no_rejections()


async def test_allowed_for_one_subagent_covers_that_child_only(make_session, server):
    """ "For this subagent" adds the rule for the asking child alone: the main agent is still asked."""
    server.when(
        is_main,
        reply(background("Say one", "Say one.")),
        text("Started."),
        tool_use("bash", {"command": "echo one"}),
        text("Done."),
    )
    server.when(
        child("Say one."),
        tool_use("bash", {"command": "echo one"}),
        tool_use("bash", {"command": "echo one"}),
        text("said it twice."),
    )
    session, recorder = make_session(interactive=True)
    asked: list[ApprovalRequested] = []

    def answer(event):
        if isinstance(event, ApprovalRequested):
            asked.append(event)
            assert event.future is not None
            event.future.set_result(ALLOW_AGENT if event.agent_id == "sa-1" else "deny")

    session.subscribe(answer)
    await session.send("say it in the background")
    await session.finish_background()  # the main agent reads the result, then runs a command of its own
    assert [(e.agent_id, e.input["command"]) for e in asked] == [("sa-1", "echo one"), ("main", "echo one")]
    assert [rule.text for rule in session.permissions.agent_rules["sa-1"]] == ["bash(echo *)"]
    assert not session.permissions.session_rules
    assert "(this session, sa-1 only)" in session.permissions.describe()
    server.assert_no_rejections()


async def test_line_mode_asks_both_children_in_order_and_loses_neither(plain, server):  # noqa: F811
    script_two_children(server)
    ui = plain()
    asked: list[ApprovalRequested] = []
    ui.app.session.subscribe(lambda e: asked.append(e) if isinstance(e, ApprovalRequested) else None)
    await ui.idle()
    ui.pipe.send_text("count both in the background\r")  # the questions come during this turn or after it
    await ui.until(lambda: "2 approvals wait: " in ui.text, "the inbox line")
    await ui.until(lambda: len(asked) == 1 and ui.app.keys.watching, "the first question, and the keys watched")
    first = asked[0].agent_id
    second = "sa-2" if first == "sa-1" else "sa-1"
    assert f"? {first} (" in ui.text and f"? {second} (" not in ui.text  # one question at a time
    ui.pipe.send_text("y")
    await ui.until(lambda: len(asked) == 2, "the second question")
    await ui.until(lambda: f"? {second} (" in ui.text and ui.app.keys.watching, "the second question shown")
    ui.pipe.send_text("y")
    await ui.until(
        lambda: "alpha done." in results_read(server) and "beta done." in results_read(server), "both results read"
    )
    # Both results may reach the main agent in one request or in two: each request carries every result
    # that finished by then (Subagents.take_results). So wait for the main agent to be idle with none left.
    await ui.until(
        lambda: not ui.app.turns.busy and ui.app.at_prompt and not ui.app.session.results_waiting,
        "the main agent idle with both results read",
    )
    last = MAIN_ANSWERS[sum(1 for body in server.requests if is_main(body)) - 2]
    await ui.until(lambda: last in ui.text, "the last turn's answer")
    shown = ui.text
    assert shown.index(f"? {first} (") < shown.index(f"? {second} (")
    assert shown.count("✓ allowed once: bash") == 2
    assert [e.agent_id for e in asked] == [first, second]
    assert await ui.quit() == 0
    server.assert_no_rejections()
