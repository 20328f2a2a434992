"""Thinking in the app and in line mode: a dim line that says how long it was, the text on demand."""

from __future__ import annotations

from agentcli.ui.tui.widgets.thinking import ThinkingEntry
from tests.fakes.anthropic_server import reply, thinking_block, tool_use_block
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode fixture)
from tests.ui.test_tui_support import SIZE, answer, until

THOUGHT = "First grep for the handler, then read the file around it."


def script(server) -> None:
    server.script(
        reply(thinking_block(THOUGHT), tool_use_block("grep", {"pattern": "def handle_auth"})),
        reply("It is in src/app/auth.py."),
    )


async def test_the_app_shows_thinking_collapsed_and_expands_it(server, tui):
    script(server)
    app = tui(thinking="on")
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "where is auth?")
        [entry] = app.conversation.query(ThinkingEntry)
        assert entry.collapsed and entry.done
        assert "thought · 11 words" in str(entry.title)
        entry.collapsed = False
        await until(pilot, lambda: THOUGHT in str(entry.query_one(".thinking-text").render()), "the thinking text")
    server.assert_no_rejections()


async def test_line_mode_says_the_thinking_in_one_dim_line(plain, server):  # noqa: F811
    script(server)
    ui = plain(thinking="on")
    said = await ui.submit("where is auth?")
    assert "∴ thought · 11 words: First grep for the handler" in said
    assert said.index("∴ thought") < said.index("grep")
    server.assert_no_rejections()
