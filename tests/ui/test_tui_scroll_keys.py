"""Scrolling the conversation from the input, as in other terminal tools: pageup/pagedown, shift+up/down,
ctrl+home/ctrl+end, with the side panel open, from the input and from a panel entry; the input keeps its text."""

from __future__ import annotations

from agentcli.ui.tui.widgets.entries import ReportEntry
from agentcli.ui.tui.widgets.side_panel import EntryTitle
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_tui_support import SIZE, answer, is_child, is_main, plain, send, until

LONG = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(120))


async def test_page_and_line_keys_scroll_the_conversation_with_the_panel_open(server, tui):
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}), text(LONG))
    server.when(is_child, text("It is in src/app/auth.py:9."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "Find auth through a subagent")
        conversation, prompt = app.conversation, app.prompt
        assert app.panel.is_open and prompt.has_focus
        await until(
            pilot,
            lambda: (
                conversation.max_scroll_y > 3 * conversation.size.height
                and conversation.scroll_y == conversation.max_scroll_y
            ),
            "a long answer, at the bottom",
        )
        await pilot.press(*"draft", "left")
        bottom = conversation.scroll_y

        await pilot.press("pageup")
        await until(pilot, lambda: conversation.scroll_y < bottom - conversation.size.height / 2, "a page up")
        paged = conversation.scroll_y
        await pilot.press("shift+up")
        await until(pilot, lambda: conversation.scroll_y == paged - 1, "a line up")
        await pilot.press("shift+down")
        await until(pilot, lambda: conversation.scroll_y == paged, "a line down")
        await pilot.press("ctrl+home")
        await until(pilot, lambda: conversation.scroll_y == 0, "the top")
        await pilot.press("pagedown")
        await until(pilot, lambda: conversation.scroll_y > 0, "a page down")
        await pilot.press("ctrl+end")
        await until(pilot, lambda: conversation.scroll_y == conversation.max_scroll_y, "the bottom")
        # the input kept its text, its cursor and the focus: the keys were the conversation's
        assert prompt.text == "draft" and prompt.cursor_location == (0, 4) and prompt.has_focus

        prompt.clear()
        await pilot.press("tab")  # on the empty input: to a panel entry; from there, too
        assert isinstance(app.focused, EntryTitle)
        await pilot.press("pageup")
        await until(pilot, lambda: conversation.scroll_y < conversation.max_scroll_y, "a page up from the panel")
        assert isinstance(app.focused, EntryTitle)
        await send(pilot, "/help")
        helped = plain(list(conversation.query(ReportEntry))[-1])
        assert "pageup pagedown, shift+↑ ↓" in helped and "ctrl+home, ctrl+end" in helped
