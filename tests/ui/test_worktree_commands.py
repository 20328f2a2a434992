"""/diff, /merge and /discard in both front ends, on children that ran with isolation: worktree."""

from __future__ import annotations

from agentcli.ui.tui.screens.confirm import ConfirmScreen
from agentcli.ui.tui.widgets.entries import NoticeEntry, ReportEntry
from tests.fakes.anthropic_server import first_user_text, offers_tool, reply, text, tool_use, tool_use_block
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode harness fixture)
from tests.ui.test_tui_support import SIZE, answer, send, tui, until  # noqa: F401
from tests.ui.test_tui_support import plain as shown_text

DOC = '    """Check a password."""\n'


def two_children_edit_the_same_line(server) -> None:
    """sa-1 and sa-2, each in its own worktree, rewrite the same docstring line differently."""
    server.when(
        lambda b: offers_tool(b, "task"),
        reply(
            *[
                tool_use_block("task", {"description": f"Edit {n}", "prompt": f"brief {n}", "isolation": "worktree"})
                for n in ("one", "two")
            ]
        ),
        text("Both are done."),
    )
    for n in ("one", "two"):
        server.when(
            lambda b, n=n: not offers_tool(b, "task") and first_user_text(b) == f"brief {n}",
            tool_use("read_file", {"path": "src/app/auth.py"}),
            tool_use(
                "edit_file",
                {"path": "src/app/auth.py", "old_string": DOC, "new_string": f'    """Check a password ({n})."""\n'},
            ),
            text("Changed it."),
        )


async def test_line_mode_diff_merge_conflict_and_discard(plain, server, repo):  # noqa: F811
    two_children_edit_the_same_line(server)
    ui = plain(permission_mode="acceptEdits")
    await ui.submit("have two subagents edit auth.py")
    assert '+    """Check a password (one)."""' in await ui.submit("/diff sa-1")
    assert "Merged sa-1 into your working tree" in await ui.submit("/merge sa-1")
    refused = await ui.submit("/merge sa-2")
    assert "Cannot merge sa-2: src/app/auth.py changed both" in refused and "Nothing was changed" in refused
    assert "(one)" in (repo / "src/app/auth.py").read_text()
    ui.pipe.send_text("/discard 2\r")  # it asks first, and n keeps the worktree
    await ui.until(lambda: "Drop sa-2's worktree and branch?" in ui.text, "the question")
    ui.pipe.send_text("n\r")
    await ui.until(lambda: "Kept sa-2's worktree." in ui.text, "the worktree kept")
    assert "Discarded sa-2" not in ui.text
    ui.pipe.send_text("/discard 2\r")
    await ui.until(lambda: ui.text.count("Drop sa-2's worktree and branch?") == 2, "the question again")
    ui.pipe.send_text("y\r")
    await ui.until(lambda: "Discarded sa-2" in ui.text, "sa-2 discarded")
    assert "Usage: /merge ID" in await ui.submit("/merge")


async def test_tui_diff_merge_conflict_and_discard(server, tui, repo):  # noqa: F811
    two_children_edit_the_same_line(server)
    app = tui(permission_mode="acceptEdits")

    def last() -> str:
        notices = list(app.conversation.query(NoticeEntry))
        return shown_text(notices[-1]) if notices else ""

    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "have two subagents edit auth.py")
        await send(pilot, "/diff sa-2")
        await until(pilot, lambda: app.conversation.query(ReportEntry), "the /diff of sa-2")
        diff = app.conversation.query(ReportEntry).last().content
        added = next(line for line in diff.split("\n") if line.plain.startswith('+    """Check a password (two)'))
        assert "green" in {str(span.style) for span in added.spans}  # coloured, line by line
        await send(pilot, "/merge sa-1")
        await until(pilot, lambda: "Merged sa-1 into your working tree" in last(), "sa-1 merged")
        await send(pilot, "/merge sa-2")
        await until(
            pilot, lambda: "Cannot merge sa-2: src/app/auth.py changed both" in last(), "the conflict refusal for sa-2"
        )
        await send(pilot, "/discard sa-2")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question before discarding")
        await pilot.press("n")
        await until(pilot, lambda: "Kept sa-2's worktree." in last(), "sa-2 kept")
        await send(pilot, "/discard sa-2")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question again")
        await pilot.press("y")
        await until(pilot, lambda: "Discarded sa-2" in last(), "sa-2 discarded")
    assert "(one)" in (repo / "src/app/auth.py").read_text()


async def test_line_mode_colours_a_diff(plain, server, repo):  # noqa: F811
    two_children_edit_the_same_line(server)
    ui = plain(color=True, permission_mode="acceptEdits")
    await ui.submit("have two subagents edit auth.py")
    shown = await ui.submit("/diff sa-1")
    added = next(line for line in shown.splitlines() if "Check a password (one)" in line)
    removed = next(line for line in shown.splitlines() if '"""Check a password."""' in line)
    assert "\x1b[32m" in added and "\x1b[31m" in removed  # green and red
