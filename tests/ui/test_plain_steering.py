"""Line mode steers the main agent's running turn: ctrl+s (or enter, with steer_on_enter) sends what is typed
into it, read after the next tool call; one the turn ends before reading is the next prompt."""

from __future__ import annotations

import threading

from tests.fakes.anthropic_server import last_user_text, text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the fixture)

CTRL_S = "\x13"


async def test_ctrl_s_sends_the_typed_line_into_the_running_turn(plain, server):  # noqa: F811
    hold = threading.Event()
    server.script(tool_use("glob", {"pattern": "*"}, gate=hold, gate_timeout=120), text("Reading lib/ then."))
    ui = plain()
    try:
        await ui.idle()
        ui.pipe.send_text("list the files\r")
        await ui.until(lambda: ui.app.turns.busy and server.requests, "the first request")
        ui.pipe.send_text("look at lib/ instead" + CTRL_S)
        await ui.until(lambda: ui.app.display.steering == ["look at lib/ instead"], "the steer")
        assert ui.app.display.typeahead == ""  # taken out of the type-ahead: not sent again at the prompt
        hold.set()
        await ui.until(lambda: "Reading lib/ then." in ui.text and not ui.app.turns.busy, "the answer")
    finally:
        hold.set()
    second = server.requests[1]["messages"][-1]["content"]
    assert [b["type"] for b in second] == ["tool_result", "text"]
    assert "A message from the user while you work" in second[1]["text"] and "look at lib/ instead" in second[1]["text"]
    assert ui.text.index("› look at lib/ instead · steered into the turn") < ui.text.index("Reading lib/ then.")
    assert len(server.requests) == 2 and not ui.app.display.steering
    await ui.quit()


async def test_with_steer_on_enter_an_unread_steer_is_the_next_prompt(plain, server):  # noqa: F811
    hold = threading.Event()
    server.script(text("Done.", gate=hold, gate_timeout=120), text("About that."), text("And the later one."))
    ui = plain(steer_on_enter=True)
    try:
        await ui.idle()
        ui.pipe.send_text("hi\r")
        await ui.until(lambda: ui.app.turns.busy and server.requests, "the first request")
        ui.pipe.send_text("one more thing\r")  # enter: into the running turn
        await ui.until(lambda: ui.app.display.steering == ["one more thing"], "the steer")
        ui.pipe.send_text("/cost" + CTRL_S + "later" + CTRL_S)  # the other way: kept for the prompt, in order
        await ui.until(lambda: ui.app.display.typeahead == "/cost\nlater\n", "the type-ahead")
        assert ui.app.display.steering == ["one more thing"]
        hold.set()  # answered without a tool call: no boundary came
        await ui.until(lambda: "And the later one." in ui.text, "the queued line's answer")
    finally:
        hold.set()
    assert "one more thing" not in str(server.requests[0]["messages"])
    assert last_user_text(server.requests[1]) == "one more thing"  # the unread steer first, then the typed
    assert last_user_text(server.requests[2]) == "later" and len(server.requests) == 3
    assert "› one more thing" in ui.text
    await ui.quit()
