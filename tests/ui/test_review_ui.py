"""/review in line mode and the app: each reviewer shows as a child while it works, and the checked findings come as
one notice at the end."""

from __future__ import annotations

import threading

from tests.core.test_review import findings, plant_bug, reviewer
from tests.fakes.anthropic_server import tool_use
from tests.ui.test_plain import Harness, plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, send, shown, until

BUG = {"severity": "high", "location": "src/app/auth.py:10", "problem": "The check is inverted.", "fix": "Use ==."}


def script_reviewers(server):
    server.when(reviewer("correctness"), tool_use("read_file", {"path": "src/app/auth.py"}), findings(BUG))
    for concern in ("security", "tests", "fit"):
        server.when(reviewer(concern), findings())


async def test_line_mode_shows_each_reviewer_and_the_checked_findings(plain, server, repo):
    plant_bug(repo)
    script_reviewers(server)
    ui: Harness = plain()
    shown = await ui.submit("/review")
    words = " ".join(shown.split())  # the notice is wrapped to the terminal's width
    for concern in ("correctness", "security", "tests", "fit"):
        assert f"▸ {concern} review · review-{concern}" in shown
    assert "1 finding (0 unverified), from 4 reviewers." in words
    assert "[high] src/app/auth.py:10: The check is inverted. (correctness)" in words
    nothing = await ui.submit("/review main")  # HEAD is main: nothing between them
    assert "There is nothing to review in main...HEAD." in " ".join(nothing.split()) and "Traceback" not in nothing
    assert await ui.quit() == 0
    server.assert_no_rejections()


async def test_the_app_shows_the_reviewers_live_in_the_panel_and_the_findings_after(server, tui, repo):
    plant_bug(repo)
    release = threading.Event()
    server.when(
        reviewer("correctness"),
        tool_use("read_file", {"path": "src/app/auth.py"}, gate=release, gate_timeout=120),
        findings(BUG),
    )
    for concern in ("security", "tests", "fit"):
        server.when(reviewer(concern), findings().with_options(gate=release, gate_timeout=120))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/review")
        await until(pilot, lambda: len(app.subagents) == 4 and app.busy, "the four reviewers in the panel")
        assert sorted(child.type for child in app.subagents.values()) == [
            "review-correctness",
            "review-fit",
            "review-security",
            "review-tests",
        ]
        assert any(not child.finished for child in app.subagents.values())  # live, not after the fact
        release.set()
        await until(pilot, lambda: not app.busy, "the review to end")
        words = " ".join(shown(app.conversation).split())
        assert "1 finding (0 unverified), from 4 reviewers." in words
        assert "[high] src/app/auth.py:10: The check is inverted." in words
    server.assert_no_rejections()


async def test_the_merge_request_is_one_folded_line_in_the_app(server, tui, repo):
    """With two findings the main agent is asked to merge them: that note (the ask and the findings as JSON, some
    30 lines) was a screenful in the conversation; it is one line that expands, as a tool call's result."""
    from agentcli.ui.tui.widgets.to_model import ToModelEntry
    from tests.fakes.anthropic_server import offers_tool, text

    plant_bug(repo)
    server.when(reviewer("correctness"), tool_use("read_file", {"path": "src/app/auth.py"}), findings(BUG))
    server.when(reviewer("security"), findings({**BUG, "problem": "Anyone logs in.", "severity": "medium"}))
    for concern in ("tests", "fit"):
        server.when(reviewer(concern), findings())
    server.when(lambda body: offers_tool(body, "task"), text("Merged.\n```review\n[]\n```"))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/review")
        await until(pilot, lambda: app.conversation.query(ToModelEntry), "the merge request in the conversation")
        await until(pilot, lambda: not app.busy, "the review to end")
        [note] = app.conversation.query(ToModelEntry)
        assert note.collapsed and note.outer_size.height <= 2
        assert str(note.title).startswith("agentcli → model: (") and " lines) " in str(note.title)
        assert '"location": "src/app/auth.py:10"' in note.text  # the whole request is there, folded
    server.assert_no_rejections()
