"""Line mode's live line for a running MCP call carries what its server last said of its progress, and the
call's finished line does not (tests/ui/test_mcp_progress.py has the view's and the TUI's side)."""

from __future__ import annotations

import io

from agentcli.core.events import ToolCallFinished, ToolCallStarted, ToolProgress
from agentcli.ui.plain.display import Display
from agentcli.ui.plain.screen import Painter, Screen


async def test_line_modes_live_line_shows_the_running_calls_progress():  # the live line ticks on the loop
    out, now = io.StringIO(), [100.0]
    screen = Screen(out, live=True, size=lambda: (100, 40))
    display = Display(screen, Painter(None, lambda: screen.width), clock=lambda: now[0])
    display.handle(ToolCallStarted(id="toolu_1", name="mcp__features__slow", input={}, kind="exec"))
    display.handle(ToolProgress(id="toolu_1", progress=1, total=2, message="first half"))
    now[0] = 101.5
    [live] = display.live_lines()
    assert "mcp__features__slow" in live and live.endswith("· 1.5 s · 1/2 · first half")
    display.handle(ToolProgress(id="toolu_other", progress=1))  # a call it never saw start changes nothing
    display.handle(
        ToolCallFinished(id="toolu_1", name="mcp__features__slow", output="done", is_error=False, seconds=2.0)
    )
    assert display.live_lines() == []
    finished = out.getvalue().rsplit("●", 1)[1]
    assert finished.startswith(" mcp__features__slow · 2.0 s") and "first half" not in finished
