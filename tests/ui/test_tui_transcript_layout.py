"""A child's transcript lays an expanded call out at one width: the call's indent is its own padding, not a
margin (Textual's stream layout sized a child without its side margin and placed it within it, so a long
output was wrapped at two widths on each layout); its output is shown whole and indented as before."""

from __future__ import annotations

from agentcli.core.events import (
    Event,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    Usage,
    UserMessage,
)
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.screens.transcript import TranscriptScreen
from agentcli.ui.tui.widgets.tool_call import ToolCallEntry
from tests.narrow import of
from tests.ui.test_tui_support import SIZE, drawn, until

LINES = [f"src/pkg/module_{i}.py:{i}:    def handler_{i}(request):  # a match" for i in range(80)]


def _child() -> list[Event]:
    child = "sa-1"
    return [
        SubagentStarted(
            id=child,
            subagent_type="explore",
            description="Find the handlers",
            prompt="Find them.",
            max_turns=30,
            agent_id=child,
            parent_tool_use_id="toolu_task",
        ),
        UserMessage(content=[{"type": "text", "text": "Find them."}], agent_id=child),
        TurnStarted(turn=1, max_turns=30, agent_id=child),
        ToolCallStarted(
            id="toolu_1", name="grep", input={"pattern": "def handler_"}, summary="def handler_", agent_id=child
        ),
        ToolCallFinished(
            id="toolu_1", name="grep", output="\n".join(LINES), is_error=False, seconds=0.1, agent_id=child
        ),
        SubagentFinished(
            id=child,
            status="done",
            result="In src/pkg.",
            turns=1,
            usage=Usage(input_tokens=10),
            seconds=1.0,
            agent_id=child,
        ),
    ]


async def test_an_expanded_call_in_a_transcript_is_indented_by_its_own_padding(server, make_session):
    session, _ = make_session()
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        for event in _child():
            app.view.apply(event, 0.0)
        app.open_transcript("sa-1")
        await until(
            pilot,
            lambda: isinstance(app.screen, TranscriptScreen) and app.screen.query(ToolCallEntry),
            "the transcript and its call",
        )
        await pilot.pause()
        view = of(TranscriptScreen, app.screen).conversation
        entry = view.query_one(ToolCallEntry)
        assert entry.styles.margin.left == 0 and entry.styles.padding.left == 2
        assert entry.region.x == view.content_region.x  # laid out at the conversation's own width
        lines = drawn(entry)  # under its title and input, the whole output, a line each (none wrapped), beside
        assert lines[2:-1] == [f"    ▏ {line}" for line in LINES]  # its bar, indented under the call's line
        assert lines[-1] == "" and len(lines) == entry.region.height == 1 + 1 + len(LINES) + 1
