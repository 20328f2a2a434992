"""The panel's m (a message for a running subagent) and w (wrap up) keys, under Pilot against the stand-in."""

from __future__ import annotations

import json
import threading

from agentcli.ui.tui.widgets.prompt import PromptInput
from agentcli.ui.tui.widgets.side_panel import EntryTitle, SubagentEntry
from tests.fakes.anthropic_server import first_user_text, text, tool_result_text, tool_results, tool_use
from tests.ui.test_plain import Harness, plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, is_main, send, until
from tests.ui.test_tui_support import plain as shown


def child_calls(server, brief):
    return [b for b in server.requests if first_user_text(b) == brief]


async def test_m_on_a_running_entry_sends_the_typed_line_to_that_child(server, tui):
    hold = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find auth"}), text("Reported."))
    server.when(lambda b: first_user_text(b) == "Find auth",
                tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120), text("In lib/auth.py."))
    app = tui()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "Find auth through a subagent")
            await until(pilot, lambda: "sa-1" in app.panel.entries and child_calls(server, "Find auth"),
                        "the child's first call")
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
    server.when(lambda b: first_user_text(b) == "Slow one" and b.get("tool_choice") == {"type": "none"},
                text("What I have: src/a.py."))
    server.when(lambda b: first_user_text(b) == "Slow one", tool_use("glob", {"pattern": "*"}, gate=hold,
                                                                     gate_timeout=120))
    app = tui()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "One slow errand")
            await until(pilot, lambda: "sa-1" in app.panel.entries and child_calls(server, "Slow one"),
                        "the child's first call")
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
    server.when(is_main, tool_use("task", {"description": "Endless", "prompt": "Search forever.",
                                           "run_in_background": True}), text("Started."), text("It wrapped up."))
    server.when(lambda b: first_user_text(b) == "Search forever." and b.get("tool_choice") == {"type": "none"},
                text("Looked at two globs."))
    server.when(lambda b: first_user_text(b) == "Search forever.", tool_use("glob", {"pattern": "*"}, gate=hold,
                                                                            gate_timeout=120))
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
