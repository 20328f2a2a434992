"""/plugin install in the TUI and line mode: a marketplace in a temporary git repository is added from the session,
installing shows every hook, MCP server and allowed-tools the plugin brings and asks; no keeps nothing, yes
records and enables it, and nothing of it ran meanwhile. A clone that never ends is stopped by esc or by quitting."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentcli.ui.tui.screens.confirm import ConfirmScreen
from agentcli.ui.tui.widgets.entries import NoticeEntry
from tests import waiting
from tests.conftest import git
from tests.e2e.test_plugin_clone_cap import files_under, git_left_running
from tests.e2e.test_plugin_stop import DEADLINE, stalled_server  # noqa: F401  (the fixture)
from tests.e2e.test_plugins import market  # noqa: F401  (the fixture)
from tests.ui.test_plain import plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, send, until
from tests.ui.test_tui_support import plain as shown_text

HOME = Path.home  # read when called: the test's own HOME


def with_allowed_tools(folder: Path) -> Path:
    """The marketplace's plugin with a command that lets `git push` run without asking while it is used."""
    (folder / "plugins/helper/commands/ship.md").write_text(
        "---\ndescription: Ship it\nallowed-tools: Bash(git push:*)\n---\nPush the branch.\n"
    )
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "A command that pushes")
    return folder


def recorded() -> tuple[dict[str, object], dict[str, object]]:
    claude = HOME() / ".claude"
    table = (
        json.loads((claude / "plugins" / "installed_plugins.json").read_text())["plugins"]
        if (claude / "plugins" / "installed_plugins.json").exists()
        else {}
    )
    settings = json.loads((claude / "settings.json").read_text()) if (claude / "settings.json").exists() else {}
    return table, settings.get("enabledPlugins", {})


async def test_the_tui_installs_a_plugin_only_after_its_yes(tui, market, repo):  # noqa: F811
    with_allowed_tools(market)
    app = tui()

    def last() -> str:
        notices = list(app.conversation.query(NoticeEntry))
        return shown_text(notices[-1]) if notices else ""

    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, f"/plugin marketplace add file://{market}")
        await until(pilot, lambda: "Added the marketplace team-tools" in last(), "the marketplace added")
        await send(pilot, "/plugin install helper@team-tools")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question before installing")
        asked = " ".join(str(app.screen.query_one("Static").render()).split())
        cached = HOME() / ".claude" / "plugins" / "cache" / "team-tools" / "helper" / "1.0.0"
        assert f'PreToolUse hook on Bash: sh "{cached}/hooks/mark.sh" (runs a command)' in asked
        assert "MCP server plugin_helper_echoer: runs" in asked
        assert "command helper:ship allowed-tools: Bash(git push:*)" in asked
        await pilot.press("n")
        await until(
            pilot, lambda: "Did not install helper@team-tools; nothing of it was kept" in last(), "the refusal said"
        )
        assert recorded() == ({}, {}) and not cached.exists()  # no means nothing stays behind

        await send(pilot, "/plugin install helper@team-tools")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question again")
        await pilot.press("y")
        await until(pilot, lambda: "Installed helper@team-tools 1.0.0 (user scope)" in last(), "the plugin installed")
        assert "it takes effect in your next session" in last()
        table, enabled = recorded()
        assert list(table) == ["helper@team-tools"] and enabled == {"helper@team-tools": True}
        assert not (repo / "hook-ran").exists()  # installing ran none of it
        await send(pilot, "/plugin uninstall helper")
        await until(pilot, lambda: "Uninstalled helper@team-tools (user scope)" in last(), "the plugin uninstalled")
        assert not cached.exists()


async def test_line_mode_asks_at_the_prompt_and_reports_bad_words(plain, market):  # noqa: F811
    ui = plain()
    assert "Added the marketplace team-tools" in await ui.submit(f"/plugin marketplace add {market}")
    assert "team-tools" in await ui.submit("/plugin marketplace list")
    ui.pipe.send_text("/plugin install helper@team-tools\r")
    await ui.until(lambda: "Install it (user scope)?" in ui.text, "the question")
    assert "MCP server plugin_helper_echoer" in ui.text and "PreToolUse hook on Bash" in ui.text
    ui.pipe.send_text("n\r")
    await ui.until(lambda: "Did not install helper@team-tools; nothing of it was kept" in ui.text, "the refusal")
    assert recorded() == ({}, {})
    ui.pipe.send_text("/plugin install helper@team-tools --scope project\r")
    await ui.until(lambda: "Install it (project scope)?" in ui.text, "the question again")
    ui.pipe.send_text("y\r")
    await ui.until(lambda: "Installed helper@team-tools 1.0.0 (project scope)" in ui.text, "installed")
    root = ui.app.session.workspace.root
    assert json.loads((root / ".claude" / "settings.json").read_text())["enabledPlugins"] == {"helper@team-tools": True}
    wrong = await ui.submit("/plugin install")  # a usage error is one sentence and the usage, never a traceback
    assert "the following arguments are required" in wrong.lower() and "Usage: /plugin" in wrong
    assert "Traceback" not in wrong
    assert "no marketplace named nowhere" in (await ui.submit("/plugin install x@nowhere")).lower()
    await ui.quit()


async def test_esc_stops_a_plugin_clone_and_quitting_stops_another(tui, tmp_path, stalled_server):  # noqa: F811
    """A clone that never ends (a server that never answers): esc stops it, git is gone and its clone removed; a
    second one, left running, is stopped by quitting the app (before: the app waited for git on its way out)."""
    app = tui()
    marketplaces = HOME() / ".claude" / "plugins" / "marketplaces"
    add = f"/plugin marketplace add {stalled_server.url}"

    def said() -> str:
        return " ".join(shown_text(notice) for notice in app.conversation.query(NoticeEntry))

    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, add)
        await until(pilot, lambda: f"{add[1:]}: working on it; esc stops it." in said(), "hint")
        await until(pilot, stalled_server.asked.is_set, "git asking the server")
        assert app.check_action("interrupt", ()) is True  # esc is offered, not dimmed: it has work to stop
        await pilot.press("escape")
        await until(pilot, lambda: f"Stopped {add}; what it had not finished was undone." in said(), "the stop said")
        assert git_left_running(tmp_path) == [] and files_under(marketplaces) == []
        assert app.check_action("interrupt", ()) is None  # nothing left to stop

        stalled_server.asked.clear()
        await send(pilot, add)
        await until(pilot, stalled_server.asked.is_set, "git asking the server again")
        app.exit()
    await waiting.until(lambda: not git_left_running(tmp_path), "git stopped as the app quit", timeout=DEADLINE)
    await waiting.until(lambda: not os.path.exists(marketplaces) or not os.listdir(marketplaces), "its clone removed")
