"""A sign when the user is needed (issue 39 §3): the terminal notification's bytes, as the setting and the terminal
choose them, reach the terminal in the TUI (under Pilot, what the app writes to its driver) and in line mode (what
it writes to its output); a hostile name in the message cannot start a sequence of its own."""

from __future__ import annotations

import json
import sys

from textual.drivers.headless_driver import HeadlessDriver

from agentcli.ui.notify import kind_of, sequence
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode harness)
from tests.ui.test_tui_support import SIZE, is_child, is_main, send, until

IDLE_OSC9 = "\x1b]9;agentcli is waiting for your input\x07"


def test_the_setting_and_the_terminal_choose_the_sequence_and_tmux_passes_it_through_only_when_allowed():
    assert kind_of("auto", {"TERM_PROGRAM": "iTerm.app"}) == "osc9"
    assert kind_of("auto", {"TERM": "foot"}) == "osc777"
    assert kind_of("auto", {"TERM": "xterm-256color"}) == "bell"
    assert kind_of("auto", {"TMUX": "/tmp/tmux-0/default,1,0"}, passthrough=lambda: False) == "off"
    assert kind_of("auto", {"TMUX": "/tmp/tmux-0/default,1,0"}, passthrough=lambda: True) == "osc9"
    assert kind_of("osc777", {}) == "osc777" and kind_of("off", {"TERM_PROGRAM": "iTerm.app"}) == "off"
    assert sequence("osc777", "done") == "\x1b]777;notify;agentcli;done\x07"
    assert sequence("bell", "done") == "\x07" and sequence("off", "done") == ""
    assert sequence("osc9", "done", in_tmux=True) == "\x1bPtmux;\x1b\x1b]9;done\x07\x1b\\"


def test_a_hostile_name_in_the_message_cannot_end_the_sequence_or_start_one():
    # An MCP server named by a repository's .mcp.json: a BEL would end the OSC and the rest would be obeyed.
    made = sequence("osc9", "The MCP server evil\x07\x1b]52;c;cm0gLXJmIH4=\x07\x9b2J asks you a question")
    assert made.count("\x1b") == 1 and made.count("\x07") == 1 and "\x9b" not in made
    assert made.startswith("\x1b]9;") and made.endswith("\x07")


async def test_line_mode_notifies_when_a_turn_ends_and_the_session_end_hook_hears_the_user_quit(
    plain,
    server,  # noqa: F811
    repo,
    tmp_path,
):
    script = tmp_path / "log.py"
    script.write_text("import json, sys; open('end.json', 'w').write(json.dumps(json.load(sys.stdin)))")
    end = {"SessionEnd": [{"hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}]}
    server.script(text("Hello."))
    ui = plain(live=True, notifications="osc9", hooks=end)
    await ui.submit("hi")
    await ui.until(lambda: IDLE_OSC9 in ui.text, "the notification")
    assert await ui.quit() == 0
    assert json.loads((repo / "end.json").read_text())["reason"] == "prompt_input_exit"


async def test_the_tui_notifies_when_a_turn_ends_and_when_a_background_child_finishes(tui, server, monkeypatch):
    written: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: written.append(data))
    server.when(
        is_main,
        tool_use("task", {"description": "Count", "prompt": "Count the files.", "run_in_background": True}),
        text("Started."),
        text("Read it."),
    )
    server.when(is_child, text("Three files."))
    app = tui(notifications="osc9")
    child_done = "\x1b]9;The background subagent sa-1 finished (done)\x07"
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "count in the background")
        await until(pilot, lambda: child_done in written and IDLE_OSC9 in written, "both notifications")
    assert "\x07" not in [w for w in written if w not in (child_done, IDLE_OSC9)]  # no bell besides
