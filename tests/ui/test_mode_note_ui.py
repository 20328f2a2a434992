"""A mode change reaches the model as a note at its request's end (core/engine/mode_note.py); the user already sees
the mode in the status bar, so the conversation does not show the note as a notice or as the user's words."""

from __future__ import annotations

from agentcli.ui.tui.widgets.conversation import Conversation
from tests.fakes.anthropic_server import text
from tests.ui.test_tui_support import SIZE, plain, send, until


async def test_shift_tab_tells_the_model_at_the_end_of_its_request_and_not_the_user_again(tui, server):
    server.script(text("One."), text("Two."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await until(pilot, lambda: len(server.requests) == 1 and not app.busy, "the first turn")
        await pilot.press("shift+tab")
        await send(pilot, "second")
        await until(pilot, lambda: len(server.requests) == 2 and not app.busy, "the second turn")
        first, second = server.requests
        assert second["system"] == first["system"]
        assert "The permission mode is now acceptEdits" in str(second["messages"][-1]["content"])
        shown = plain(app.query_one(Conversation))
        assert "Two." in shown and "second" in shown
        assert "permission mode is now" not in shown.lower()
    server.assert_no_rejections()
