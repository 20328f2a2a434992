"""/context in the TUI and line mode: the bar and a row a part, the total the stand-in counted for the
request, and what subagents kept out."""

from __future__ import annotations

from agentcli.ui.format import tokens
from agentcli.ui.tui.widgets.entries import ReportEntry
from tests.fakes.anthropic_server import estimate_tokens
from tests.ui.test_numbers_said_truly import delegate
from tests.ui.test_plain import plain as plain_fixture  # noqa: F401  (the line-mode harness)
from tests.ui.test_tui_support import SIZE, answer, plain, send, until

plain_ui = plain_fixture
PARTS = ("system prompt", "project memory", "tool definitions", "conversation", "tool results")


def counted_total(server) -> str:
    return tokens(estimate_tokens(server.count_tokens_requests[-1]))


async def test_context_in_the_tui_shows_the_bar_the_parts_and_what_subagents_kept_out(server, tui):
    delegate(server)
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "find auth through a subagent")
        before = len(app.conversation.query(ReportEntry))
        await send(pilot, "/context")
        await until(pilot, lambda: len(app.conversation.query(ReportEntry)) > before, "the /context report")
        report = plain(list(app.conversation.query(ReportEntry))[-1])
        assert "counted by the API's count_tokens" in " ".join(report.split())
        assert all(part in report for part in PARTS)
        [total] = [line for line in report.splitlines() if " total " in f" {line} "]
        assert counted_total(server) in total
        assert "░" in report  # the free part of the window's bar
        assert "kept out of main context: 8.3k tokens" in report


async def test_context_in_line_mode_says_the_same(plain_ui, server):
    delegate(server)
    ui = plain_ui()
    await ui.submit("find auth through a subagent")
    report = await ui.submit("/context")
    assert f"Next request: {counted_total(server)} of " in report
    assert "counted by the API's count_tokens" in report
    assert all(part in report for part in PARTS)
    assert "kept out of main context: 8.3k tokens" in report
    await ui.quit()


async def test_context_says_when_it_only_estimated(plain_ui, server):
    server.offers_count_tokens = False
    delegate(server)
    ui = plain_ui()
    await ui.submit("find auth through a subagent")
    report = await ui.submit("/context")
    assert "estimated (about four characters a token" in report
    await ui.quit()
