"""Numbers said the same everywhere and truly: what subagents kept out of the main context (the status
bar, the panel's bars, /cost in the TUI and line mode), a cost without a price, a compaction that
freed nothing, and a retried call's line once the call went through."""

from __future__ import annotations

from agentcli.ui.tui.widgets.entries import ReportEntry
from agentcli.ui.tui.widgets.side_panel import ContextBars
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_plain import plain as plain_fixture  # noqa: F401  (the line-mode harness)
from tests.ui.test_tui_support import SIZE, USAGE, answer, is_child, is_main, plain

plain_ui = plain_fixture
CHILD_USAGE = {"input_tokens": 8300, "output_tokens": 40}


def delegate(server) -> None:
    server.when(
        is_main,
        tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}, usage=USAGE),
        text("It is in auth.py.", usage=USAGE),
    )
    server.when(
        is_child,
        tool_use("glob", {"pattern": "*.md"}, usage=CHILD_USAGE),  # a few bytes of output
        text("In src/app/auth.py.", usage=CHILD_USAGE),
    )


async def test_kept_out_is_one_number_in_the_status_bar_the_panel_and_cost(server, tui):
    delegate(server)
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "find auth through a subagent")
        status = str(app.query_one("#status").content)
        assert "kept out of main context: 8.3k tokens" in status
        used, alone, _ = app.query_one(ContextBars).counts
        assert alone - used == 8300
        assert "without subagents" in app.query_one(ContextBars).render().plain
        await answer(pilot, "/cost")
        report = plain(list(app.conversation.query(ReportEntry))[-1])
        assert "kept out of main context: 8.3k tokens" in report
        [bar] = [line for line in report.splitlines() if "without subagents" in line]
        assert f" {(used + 8300) / 1000:.1f}k " in bar


async def test_line_mode_says_the_same_kept_out_number(plain_ui, server):
    delegate(server)
    ui = plain_ui()
    await ui.submit("find auth through a subagent")
    report = await ui.submit("/cost")
    assert "kept out of main context: 8.3k tokens" in report
    await ui.quit()


async def test_a_model_without_a_price_says_its_cost_is_unknown(plain_ui, server, tui):
    server.script(text("Hi.", usage=USAGE), text("Hi.", usage=USAGE))
    ui = plain_ui(model="qwen3-coder-local")
    await ui.submit("hello")
    report = await ui.submit("/cost")
    assert "n/a" not in report and report.lower().count("cost unknown for this model") == 1  # said once, not a row
    assert "agentcli has no price for qwen3-coder-local" in report
    await ui.quit()
    app = tui(model="qwen3-coder-local")
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "hello")
        status = str(app.query_one("#status").content)
        assert "cost unknown for this model" in status and "n/a" not in status
        await answer(pilot, "/cost")
        report = plain(list(app.conversation.query(ReportEntry))[-1])
        assert (
            report.lower().count("cost unknown for this model") == 1
            and "main    1.2k      80           0            0  unknown" in report
        ), report


async def test_the_tuis_cost_has_line_modes_account_per_agent_type(server, tui):
    delegate(server)
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "find auth through a subagent")
        await answer(pilot, "/cost")
        report = plain(list(app.conversation.query(ReportEntry))[-1])
        assert "Delegation by agent type:" in report and "general-purpose ×1: spent 16.7k" in report, report


async def test_a_compaction_that_frees_nothing_is_not_announced(plain_ui, server):
    tiny = {"input_tokens": 5, "output_tokens": 1}  # the summary cannot be smaller than this
    server.script(
        text("One.", usage=tiny),
        text("Two.", usage=tiny),
        text("A summary of first and second.", usage=tiny),
        text("Three.", usage=tiny),
    )
    ui = plain_ui()
    await ui.submit("first")
    await ui.submit("second")
    shown = await ui.submit("/compact")
    assert "compacted" not in shown and "→" not in shown and "too little to compact" in shown
    await ui.submit("third")
    assert [m["role"] for m in server.requests[-1]["messages"]] == ["user", "assistant"] * 2 + ["user"]  # kept
    await ui.quit()
