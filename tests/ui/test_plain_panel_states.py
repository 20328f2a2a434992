"""Line mode: a stalled or cancelling child says so on its live line, its summary is no turn; /cost's bars."""

from __future__ import annotations

import threading

from tests.fakes.anthropic_server import first_user_text, offers_tool, text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the fixture)


def is_child(body):
    return not offers_tool(body, "task")


def is_main(body):
    return offers_tool(body, "task")


async def test_a_stalled_then_cancelling_child_says_so_on_its_live_line(plain, server):  # noqa: F811
    gate, summary = threading.Event(), threading.Event()
    server.when(is_main, tool_use("task", {"description": "Stuck one", "prompt": "Stuck errand"}), text("Done."))
    server.when(
        lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"},
        text("Partial.", gate=summary, gate_timeout=120),
    )
    server.when(
        lambda b: first_user_text(b) == "Stuck errand",
        tool_use("grep", {"pattern": "x"}),
        text("never sent", gate=gate, gate_timeout=120),
    )
    ui = plain(live=True, subagent_stall_seconds=0.05)
    display = ui.app.display
    try:
        await ui.idle()
        ui.pipe.send_text("a stuck errand\r")
        await ui.until(
            lambda: "sa-1" in display.view.subagents and display.view.subagents["sa-1"].turn == 2,
            "the child's second call",
        )
        await ui.until(lambda: "no progress for" in "\n".join(display.live_lines()), "the stall flag")
        assert ui.app.session.subagents.cancel("sa-1")
        await ui.until(lambda: "cancelling…" in "\n".join(display.live_lines()), "the cancelling word")
        assert "no progress" not in "\n".join(display.live_lines())
        summary.set()
        await ui.idle()
        assert "sa-1 ■ cancelled · 2 turns + summary ·" in ui.text
    finally:
        gate.set()
        summary.set()
    shown = await ui.submit("/cost")
    assert "with subagents" in shown and "without subagents" in shown
    await ui.quit()
