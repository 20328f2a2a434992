"""Smaller things a new user saw: tables that keep their words, and commands that say what is true."""

from __future__ import annotations

from textual.geometry import Region
from textual.widgets import Static

from agentcli.ui.tui.widgets.answer import AssistantEntry
from tests.fakes.anthropic_server import text
from tests.ui.test_tui_support import answer

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
