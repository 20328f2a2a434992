"""A child's report as the front ends show it: the "unverified" mark on the panel entry and in the
conversation, the whole receipt in its transcript, and /cost's account per agent type."""

from __future__ import annotations

from agentcli.core.events import SubagentFinished
from agentcli.ui.slash import cost_report
from agentcli.ui.transcript_text import subagent_lines
from agentcli.ui.tui.widgets.side_panel import SubagentEntry
from agentcli.ui.view import SessionView
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_tui_support import SIZE, is_child, is_main, plain, send, until

FABRICATED = "Login is handled in src/app/session_manager.py:12."


def fabricating_child(server):
    server.when(is_main, tool_use("task", {"description": "Find login", "prompt": "Find login."}), text("Done."))
    server.when(is_child, tool_use("read_file", {"path": "src/app/views.py"}), text(FABRICATED))


async def test_the_panel_and_the_conversation_mark_an_unverified_child(server, tui):
    fabricating_child(server)
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "delegate")
        await until(pilot, lambda: "sa-1" in app.subagents and app.subagents["sa-1"].finished, "the child")
        await until(
            pilot, lambda: "unverified" in app.query_one("#entry-sa-1", SubagentEntry).title.plain, "the entry's mark"
        )
        await until(pilot, lambda: "task Find login  ✓ done · unverified  sa-1" in plain(app), "the task line's mark")
        # The main agent goes on ("Done."): leaving before its turn ends let its events reach an app Pilot was
        # already taking apart (run_test shuts the app down while its messages still run), where the status
        # bar was gone (NoMatches, seen once under load).
        await until(pilot, lambda: not app.busy, "the main agent's turn to end")


async def test_the_transcript_holds_the_whole_receipt_and_cost_sums_per_type(server, make_session):
    fabricating_child(server)
    session, events = make_session()
    await session.send("delegate")
    view = SessionView()
    for event in events.events:
        view.apply(event, 0.0)
    lines = "\n".join(subagent_lines(view.subagents["sa-1"], live=False, now=0.0))
    assert "Status: done · unverified · 2 turns" in lines
    assert "UNVERIFIED: its answer cites src/app/session_manager.py" in lines
    assert "Read: src/app/views.py (1-5)" in lines
    [finished] = events.of(SubagentFinished)
    report = cost_report(session)
    assert "Delegation by agent type:" in report
    account = finished.report.account()
    assert account["spent"] == finished.usage.total_tokens and account["returned"] > 0
    assert "  general-purpose ×1: spent " in report
    rows = [
        line
        for line in report.splitlines()
        if line.startswith(("main ", "sa-1 ", "type ", "total ")) and " in " in line
    ]
    assert len(rows) == 4 and len({row.index(" in ") for row in rows}) == 1  # the figures line up
