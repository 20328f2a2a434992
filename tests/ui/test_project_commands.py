"""A `.claude/commands` file and a PreToolUse hook that blocks `rm`, in the TUI (Pilot) and in line mode.

`-p` and the untrusted-repository attack are in tests/e2e/test_commands_hooks_headless.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentcli.ui.tui.widgets.entries import ReportEntry
from agentcli.ui.tui.widgets.prompt import Completions, PromptInput
from tests.fakes.anthropic_server import first_user_text, text, tool_result_text, tool_results, tool_use
from tests.ui.test_plain import plain as plain  # noqa: F401  (the line-mode fixture)
from tests.ui.test_tui_support import SIZE, answer, until
from tests.ui.test_tui_support import plain as shown

REVIEW = """---
description: Review a file for bugs
argument-hint: [file] [focus]
---
Review $1 for bugs, with a focus on $2.
"""
BLOCK_RM = (
    f"{sys.executable} -c \"import json,sys; c=json.load(sys.stdin)['tool_input'].get('command',''); "
    "sys.exit(print('rm is blocked by policy', file=sys.stderr) or 2) if c.split()[:1]==['rm'] else 0\""
)
HOOKS = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": BLOCK_RM}]}]}


def add_command(repo: Path) -> None:
    folder = repo / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(REVIEW)


def script_rm(server) -> None:
    server.script(tool_use("bash", {"command": "rm -rf src"}), text("The hook stopped me."))


def assert_rm_was_blocked(server, repo: Path) -> None:
    [result] = tool_results(server.requests[1])
    assert result["is_error"] and "rm is blocked by policy" in tool_result_text(result)
    assert (repo / "src" / "app" / "auth.py").exists()


async def test_tui_runs_a_claude_command_lists_it_and_completes_it(server, tui, repo):
    add_command(repo)
    server.script(text("Looks fine."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, '/review src/app/auth.py "error handling"')
        assert first_user_text(server.requests[0]) == "Review src/app/auth.py for bugs, with a focus on error handling."
        await answer(pilot, "/help")
        report = shown(list(app.conversation.query(ReportEntry))[-1])
        assert "/review [file] [focus]" in report, report
        menu = app.query_one(Completions)
        await pilot.press("/", "r", "e", "v")  # /rewind and /resume start with "re" too
        await until(pilot, lambda: menu.showing and menu.items, "command completions")
        assert [c.label for c in menu.items] == ["/review [file] [focus]"]
        app.query_one(PromptInput).clear()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "/review" in titles


async def test_tui_pre_tool_use_hook_blocks_rm(server, tui, repo):
    script_rm(server)
    app = tui(hooks=HOOKS, permission_mode="bypassPermissions")
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "delete the src folder")
    assert_rm_was_blocked(server, repo)


async def test_line_mode_runs_a_claude_command_and_lists_it(plain, server, repo):  # noqa: F811
    add_command(repo)
    server.script(text("Looks fine."))
    ui = plain()
    await ui.submit("/review views.py naming")
    assert first_user_text(server.requests[0]) == "Review views.py for bugs, with a focus on naming."
    listing = await ui.submit("/help")
    assert "/review [file] [focus]" in listing and "Review a file for bugs (project)" in listing
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    completions = ui.app.prompt.completer.get_completions(Document("/rev"), CompleteEvent())
    assert [c.text for c in completions] == ["/review"]
    await ui.quit()


async def test_line_mode_pre_tool_use_hook_blocks_rm(plain, server, repo):  # noqa: F811
    script_rm(server)
    ui = plain(hooks=HOOKS, permission_mode="bypassPermissions")
    await ui.submit("delete the src folder")
    assert_rm_was_blocked(server, repo)
    await ui.quit()


async def test_a_project_command_widens_tools_only_in_a_trusted_workspace(make_session, server, repo):
    folder = repo / ".agentcli" / "commands"
    folder.mkdir(parents=True)
    (folder / "mark.md").write_text("---\nallowed-tools: Bash(touch:*)\n---\nMark it.\n")
    for trusted in (False, True):
        server.reset()
        server.script(tool_use("bash", {"command": "touch marked"}), text("ok"))
        session, _ = make_session(trusted=trusted)  # headless: a call that asks is refused
        await session.send("/mark")
        [result] = tool_results(server.requests[1])
        assert result["is_error"] is (not trusted), json.dumps(result)
        assert (repo / "marked").exists() is trusted
        assert session.permissions.turn_rules == []  # the rules lasted for the command's turn only
