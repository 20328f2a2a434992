"""What the TUI and line mode show of best-of-N attempts (one table; a question about those left at quit) and of
the API's web search (its sources under the answer; /help saying whether it is offered)."""

from __future__ import annotations

import json

from agentcli.core.comparison import Attempt
from agentcli.core.events import AssistantMessage, AttemptsCompared
from agentcli.ui.prompt_mark import Mark
from agentcli.ui.stream_json import result_message
from agentcli.ui.tui.screens.quit import DiscardScreen
from agentcli.ui.tui.widgets.entries import NoticeEntry, ReportEntry
from tests.core.test_attempts import CHECK, children, is_main
from tests.fakes.anthropic_server import reply, text, tool_use
from tests.fakes.web_search import DEFAULT_PAGES, cited, search_call
from tests.ui.test_one_fold import line_mode
from tests.ui.test_tui_support import SIZE, answer, plain, send, until

ROWS = (
    Attempt(
        id="sa-1",
        status="done",
        diff="1 file changed (+1 −0): answer.txt +1 −0",
        files=1,
        added=1,
        check="passed",
        tokens=1200,
        cost=0.01,
        seconds=3.0,
    ),
    Attempt(id="sa-2", status="capped", diff="no changes", check="not run", mark="unverified", tokens=900, seconds=5.0),
)


async def test_the_tui_shows_the_comparison_and_asks_about_attempts_left_when_quitting(server, tui, repo):
    children(server)
    server.when(
        is_main,
        tool_use(
            "task",
            {"description": "Write the answer", "prompt": "Put 42 in answer.txt.", "attempts": 3, "check": CHECK},
        ),
        text("Take the one that passed."),
    )
    app = tui(permission_mode="acceptEdits", permissions={"allow": ["bash(grep *)", "bash(touch *)"]})
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "three attempts please")
        table = " ".join(plain(next(iter(app.conversation.query(ReportEntry)))).split())  # as wrapped to the width
        assert f"Attempts: Write the answer · checked with `{CHECK}`" in table
        assert table.count("passed") == 1 and table.count("failed") == 2 and "/merge sa-N" in table
        compared = app.view.comparisons[-1]
        winner = next(a.id for a in compared.attempts if a.check == "passed")
        await answer(pilot, f"/merge {winner}")
        assert (repo / "answer.txt").read_text() == "42\n"
        await pilot.press("ctrl+q")
        losers = sorted(a.id for a in compared.attempts if a.id != winner)
        asked = f"{', '.join(losers)} are attempts nobody merged or discarded"
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, DiscardScreen)
                and app.screen.query("#quit")
                and asked in plain(app.screen.query_one("#quit"))
            ),
            "the question about the attempts left",
        )
        await pilot.press("y")
    for loser in losers:
        assert await app.session.worktree_root(loser) is None


async def test_the_tui_lists_a_searchs_sources_under_the_answer_and_help_says_it_is_on(server, tui):
    title, url = DEFAULT_PAGES[0]
    server.script(reply(search_call("python 3.13"), cited("It came out in October 2024.", title, url)))
    app = tui(web_search="true")
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "when did python 3.13 come out?")
        notes = [plain(n) for n in app.conversation.query(NoticeEntry)]
        assert any(n.startswith("Sources:") and f"1. {title} — {url}" in n for n in notes)
        await send(pilot, "/help")
        await until(
            pilot,
            lambda: any("Web search: on" in plain(r) for r in app.conversation.query(ReportEntry)),
            "/help's line on web search",
        )


def test_line_mode_draws_the_comparison_and_a_searchs_sources():
    display, out = line_mode()
    display.handle(AttemptsCompared(description="Fix the bug", check="pytest -q", attempts=ROWS))
    title, url = DEFAULT_PAGES[1]
    display.handle(AssistantMessage(content=[cited("See the schedule.", title, url)], stop_reason="end_turn"))
    shown = out.getvalue()
    assert "Attempts: Fix the bug · checked with `pytest -q`" in shown
    header, first, second = [line for line in shown.splitlines() if line.startswith(("attempt", "sa-"))]
    assert header.split() == ["attempt", "status", "diff", "check", "receipt", "tokens", "cost", "time"]
    assert first.split()[:6] == ["sa-1", "done", "1", "file", "+1", "−0"] and "passed" in first
    assert "not run" in second and "unverified" in second
    assert f"Sources:\n1. {title} — {url}" in shown


def test_json_carries_one_object_per_comparison(make_session):
    session, _ = make_session()
    result = result_message(
        session,
        Mark.of(session),
        text="ok",
        status="done",
        is_error=False,
        attempts=[AttemptsCompared(description="Fix the bug", check="pytest -q", attempts=ROWS)],
    )
    (compared,) = json.loads(json.dumps(result))["attempts"]
    assert compared["description"] == "Fix the bug" and compared["check"] == "pytest -q"
    assert [a["id"] for a in compared["attempts"]] == ["sa-1", "sa-2"]
    assert compared["attempts"][0]["check"] == "passed" and compared["attempts"][1]["receipt"] == "unverified"
    assert compared["attempts"][0]["cost_usd"] == 0.01 and compared["attempts"][1]["files"] == 0
