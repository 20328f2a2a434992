"""The panel's m (a message for a running subagent) and w (wrap up) keys, under Pilot against the stand-in."""

from __future__ import annotations

import json
import threading

from agentcli.ui.tui.widgets.prompt import PromptInput
from agentcli.ui.tui.widgets.side_panel import EntryTitle, SubagentEntry
from tests.fakes.anthropic_server import first_user_text, last_user_text, text, tool_result_text, tool_results, tool_use
from tests.ui.test_plain import Harness, plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, is_main, send, until
from tests.ui.test_tui_support import plain as shown


def child_calls(server, brief):
    return [b for b in server.requests if first_user_text(b) == brief]


async def test_m_on_a_running_entry_sends_the_typed_line_to_that_child(server, tui):
    hold = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find auth"}), text("Reported."))
    server.when(
        lambda b: first_user_text(b) == "Find auth",
        tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120),
        text("In lib/auth.py."),
    )
    app = tui()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "Find auth through a subagent")
            await until(
                pilot,
                lambda: "sa-1" in app.panel.entries and child_calls(server, "Find auth"),
                "the child's first call",
            )
            app.query_one("#entry-sa-1", SubagentEntry).query_one(EntryTitle).focus()
            await pilot.press("m")
            prompt = app.query_one(PromptInput)
            await until(pilot, lambda: prompt.text == "/steer sa-1 " and app.focused is prompt, "the input to ask")
            await pilot.press(*"check lib too", "enter")
            await until(pilot, lambda: app.session.subagents.records["sa-1"].steers, "the message to be queued")
            hold.set()
            await until(pilot, lambda: not app.busy, "the answer")
            second = json.dumps(child_calls(server, "Find auth")[1]["messages"])
            assert "A message from the user while you work" in second and "check lib too" in second
    finally:
        hold.set()


async def test_w_on_a_running_entry_wraps_it_up_with_one_tool_less_call(server, tui):
    hold = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Slow one", "prompt": "Slow one"}), text("Reported."))
    server.when(
        lambda b: first_user_text(b) == "Slow one" and b.get("tool_choice") == {"type": "none"},
        text("What I have: src/a.py."),
    )
    server.when(
        lambda b: first_user_text(b) == "Slow one", tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120)
    )
    app = tui()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "One slow errand")
            await until(
                pilot, lambda: "sa-1" in app.panel.entries and child_calls(server, "Slow one"), "the child's first call"
            )
            entry = app.query_one("#entry-sa-1", SubagentEntry)
            entry.query_one(EntryTitle).focus()
            await pilot.press("w")
            await until(pilot, lambda: "wrapping up…" in shown(entry), "the entry to say it wraps up")
            hold.set()
            await until(pilot, lambda: not app.busy, "the answer")
            assert child_calls(server, "Slow one")[-1]["tool_choice"] == {"type": "none"}
            [result] = [tool_result_text(r) for b in server.requests if is_main(b) for r in tool_results(b)]
            assert result.startswith("What I have: src/a.py.") and "+ wrap-up" in result
    finally:
        hold.set()


async def test_line_mode_steers_and_wraps_up_a_background_child_with_slash_commands(plain, server):
    hold = threading.Event()
    server.when(
        is_main,
        tool_use("task", {"description": "Endless", "prompt": "Search forever.", "run_in_background": True}),
        text("Started."),
        text("It wrapped up."),
    )
    server.when(
        lambda b: first_user_text(b) == "Search forever." and b.get("tool_choice") == {"type": "none"},
        text("Looked at two globs."),
    )
    server.when(
        lambda b: first_user_text(b) == "Search forever.",
        tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120),
    )
    ui = plain()
    try:
        await ui.submit("search forever in the background")
        await ui.until(lambda: child_calls(server, "Search forever."), "the child's first call")
        assert "sa-1 reads your message before its next turn." in await ui.submit("/steer 1 try src/ first")
        assert "Say which subagent should wrap up" in await ui.submit("/wrapup")
        assert "sa-1 is asked to wrap up" in await ui.submit("/wrapup sa-1")
        hold.set()
        await ui.until(lambda: "It wrapped up." in ui.text, "the turn on the child's wrap-up")
    finally:
        hold.set()
    last = child_calls(server, "Search forever.")[-1]
    assert last["tool_choice"] == {"type": "none"} and "try src/ first" in json.dumps(last["messages"])
    assert await ui.quit() == 0


# -- the main agent: ctrl+s (or enter, with steer_on_enter) sends a message into its running turn --------------


async def press_with(pilot, text: str, key: str) -> None:
    prompt = pilot.app.query_one(PromptInput)
    prompt.focus()
    prompt.load_text(text)
    await pilot.pause()
    await pilot.press(key)
    await until(pilot, lambda: prompt.text == "", f"{text!r} to be sent with {key}")


async def test_ctrl_s_steers_the_typed_message_into_the_running_turn(server, tui):
    hold = threading.Event()
    server.script(tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120), text("Reading lib/ then."))
    app = tui()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "list the files")
            await until(pilot, lambda: server.requests, "the first request")
            await press_with(pilot, "look at lib/ instead", "ctrl+s")
            await until(pilot, lambda: app.turns.steered == ["look at lib/ instead"], "the steer to show")
            assert not app.turns.queued and shown(app.queued).startswith("steering look at lib/ instead")
            assert "read after the current tool call" in shown(app.queued)
            hold.set()
            await until(pilot, lambda: not app.busy and "Reading lib/ then." in shown(app.conversation), "the answer")
            second = server.requests[1]["messages"][-1]["content"]
            assert [b["type"] for b in second] == ["tool_result", "text"]  # the same request, after the result
            assert "A message from the user while you work" in second[1]["text"]
            assert "look at lib/ instead" in second[1]["text"]
            assert len(server.requests) == 2  # read in the turn: not sent again as a prompt
            body = shown(app.conversation)
            assert body.index("you · steered look at lib/ instead") < body.index("Reading lib/ then.")
            assert not app.turns.steered and not app.queued.display
    finally:
        hold.set()


async def test_with_steer_on_enter_enter_steers_ctrl_s_queues_and_an_unread_steer_is_the_next_prompt(server, tui):
    hold = threading.Event()
    server.script(text("Done.", gate=hold, gate_timeout=120), text("About the steer."), text("About the queue."))
    app = tui(steer_on_enter=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hi")
            await until(pilot, lambda: server.requests, "the first request")
            await send(pilot, "one more thing")  # enter: into the running turn
            await press_with(pilot, "and later this", "ctrl+s")  # the other way: queued
            await until(pilot, lambda: app.turns.queued == ["and later this"], "the queued message")
            assert app.turns.steered == ["one more thing"]
            assert shown(app.queued).index("steering one more thing") < shown(app.queued).index("queued and later")
            hold.set()  # the turn answers without a tool call: no boundary came, so the steer is the next prompt
            await until(pilot, lambda: not app.busy and len(server.requests) == 2, "the next prompt")
            assert last_user_text(server.requests[1]).endswith("one more thing\n\nand later this")
            assert "one more thing" not in json.dumps(server.requests[0]["messages"])
    finally:
        hold.set()


async def test_esc_takes_an_unread_steer_back_into_the_input(server, tui):
    hold = threading.Event()
    server.script(tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120), text("never"))
    app = tui()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "go")
            await until(pilot, lambda: server.requests, "the first request")
            await send(pilot, "queued one")
            await pilot.press("ctrl+s")  # an empty input: the queued messages go into the turn
            await until(pilot, lambda: app.turns.steered == ["queued one"] and not app.turns.queued, "the steer")
            await pilot.press("escape")
            await until(pilot, lambda: not app.busy, "the interrupt")
            assert app.prompt.text == "queued one" and not app.turns.steered
            assert app.session.steering.take() == []
    finally:
        hold.set()
