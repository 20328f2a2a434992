"""Smaller things a new user saw: tables that keep their words, and commands that say what is true."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from textual.geometry import Region
from textual.widgets import Static

from agentcli.ui.tui.widgets.answer import AssistantEntry
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_plain import plain as plain_fixture  # noqa: F401  (the line-mode harness)
from tests.ui.test_tui_support import answer

plain_ui = plain_fixture

TABLE = """Here are the settings:

| Option | Default | Effect on the session | Notes for users |
|---|---|---|---|
| permission_mode | default | Decides which tool calls need a yes from the user before they run | acceptEdits lets edits run without asking, bypassPermissions allows everything |
| subagent_max_turns | 30 | How many turns a subagent may take before it is cut off and asked to summarize | A type may narrow it in its agent file |
"""


def drawn_words(widget) -> list[str]:
    return " ".join(strip.text for w in widget.query(Static) for strip in w.render_lines(Region(0, 0, *w.size))).split()


async def test_a_markdown_table_wraps_its_cells_and_keeps_every_word(server, tui):
    server.script(text(TABLE))
    app = tui()
    async with app.run_test(size=(80, 40)) as pilot:
        await answer(pilot, "list the settings")
        entry = app.conversation.query(AssistantEntry).last()
        words = drawn_words(entry)
        assert "…" not in " ".join(words)
        for row in TABLE.splitlines()[2:]:
            if row.startswith("|") and "---" not in row:
                for word in row.replace("|", " ").split():
                    assert word in words, (word, words)


async def test_permissions_says_an_always_rule_was_saved_not_for_this_session(plain_ui, server, repo):
    server.script(tool_use("bash", {"command": "echo one"}), text("Ran it."))
    ui = plain_ui()
    await ui.idle()
    ui.pipe.send_text("echo\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the approval question")
    ui.pipe.send_text("a")
    await ui.idle()
    shown = await ui.submit("/permissions")
    said = " ".join(shown.split())  # the path may wrap
    assert "allow bash(echo *) (always: saved to " in said and "/workspaces/" in said
    assert "(this session)" not in said
    await ui.quit()


async def test_hints_say_the_text_itself_not_a_docs_file(plain_ui, server, repo):
    ui = plain_ui()
    shown = await ui.submit("/mcp")
    assert "docs/" not in shown and '{"mcpServers": {"NAME": {"command": "PROGRAM"' in shown
    await ui.quit()
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "agentcli", "agents"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "AGENTCLI_HOME": str(repo.parent / "home")},
    )
    assert done.returncode == 0, done.stderr
    assert "docs/" not in done.stdout and "front matter with name, description" in done.stdout
