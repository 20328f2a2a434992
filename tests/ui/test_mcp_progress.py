"""A running MCP call's progress (ToolProgress) as the front ends show it: the view model keeps it on the
call, the TUI's call entry puts it on its title line, and line mode's live line shows it."""

from __future__ import annotations

from agentcli.core.events import ToolCallFinished, ToolCallStarted, ToolProgress
from agentcli.ui.tui.widgets.tool_call import ToolCallEntry
from agentcli.ui.view import Transcript, progress_text

STARTED = ToolCallStarted(id="toolu_1", name="mcp__features__slow", input={}, kind="exec")


def test_the_view_keeps_the_latest_progress_on_the_running_call():
    transcript = Transcript()
    transcript.apply(STARTED)
    transcript.apply(ToolProgress(id="toolu_1", progress=1, total=2, message="first half"))
    assert transcript.calls["toolu_1"].progress == "1/2 · first half"
    transcript.apply(ToolProgress(id="toolu_1", progress=7))
    assert transcript.calls["toolu_1"].progress == "7"
    transcript.apply(ToolProgress(id="toolu_other", progress=1))  # a call it never saw start: ignored


def test_the_tui_call_entry_shows_progress_until_the_call_ends():
    entry = ToolCallEntry(STARTED)
    entry.show_progress(ToolProgress(id="toolu_1", progress=1, total=2, message="first half"))
    assert "1/2 · first half" in entry._label().plain
    entry.finish(ToolCallFinished(id="toolu_1", name=STARTED.name, output="done", is_error=False, seconds=1.0))
    assert "first half" not in entry._label().plain


def test_progress_text_without_a_message():
    assert progress_text(ToolProgress(id="x", progress=0.5, total=1)) == "0.5/1"
