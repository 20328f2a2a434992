"""/plugin in line mode and the TUI: the installed plugins and their state here, enable and disable."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.core.engine.plugins import read_plugin
from agentcli.ui import slash
from tests.e2e.test_plugins import installed_by_claude_code
from tests.ui.test_plain import plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, answer, shown, until


async def test_line_mode_lists_disables_and_enables_a_plugin(plain):  # noqa: F811
    folder = installed_by_claude_code()
    ui = plain(plugins=[read_plugin(folder, key="helper@team-tools")])
    listed = await ui.submit("/plugin")
    assert "helper@team-tools  1.0.0  user  enabled" in listed and "Loaded in this session:" in listed
    assert " ".join(listed.split()).endswith(f"helper@team-tools {folder}")
    assert "helper:greet" in [c.name for c in slash.custom_commands(ui.app.session.commands)]
    helped = await ui.submit("/help")  # the command once by its full name, once by the short name it also has
    assert helped.count("/helper:greet ") == 1 and helped.count("/greet ") == 1
    assert "Disabled helper@team-tools" in await ui.submit("/plugin disable helper")
    settings = json.loads((Path.home() / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"] == {"helper@team-tools": False}
    assert "helper@team-tools  1.0.0  user  disabled" in await ui.submit("/plugin list")
    assert (await ui.submit("/plugin enable nothing@nowhere")).startswith("The plugin nothing@nowhere is not installed")
    assert "Enabled helper@team-tools" in await ui.submit("/plugin enable helper@team-tools")
    await ui.quit()


async def test_the_tui_lists_the_plugins(server, tui):
    installed_by_claude_code()
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "/plugin")
        await until(pilot, lambda: "helper@team-tools" in shown(app.conversation), "the plugin listing")
