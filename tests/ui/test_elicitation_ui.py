"""An MCP server's question to the user (elicitation) asked in both front ends: the mcp-SDK test server
(tests/fakes/mcp_features.py) asks for a name and a count, the user answers in the TUI's modal or at line
mode's typed fields, and the server's tool result says what it received."""

from __future__ import annotations

from textual.widgets import Button, Input, Static

from agentcli.ui.tui.screens.elicitation import ElicitationScreen
from tests.core.test_mcp_features import SETTINGS, features, results
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode harness fixture)
from tests.ui.test_tui_support import SIZE, send, tui, until  # noqa: F401


async def test_the_tui_asks_a_servers_question_in_a_modal_and_the_server_gets_the_answer(tui, server):  # noqa: F811
    server.script(tool_use("mcp__features__ask", {}), text("asked"), tool_use("mcp__features__ask", {}), text("again"))
    app = tui(mcp_servers=features(), **SETTINGS)
    async with app.run_test(size=SIZE) as pilot:
        assert app.session.asks_user
        await app.session.mcp.wait_started()
        await send(pilot, "ask me")
        await until(pilot, lambda: isinstance(app.screen, ElicitationScreen), "the question's modal")
        modal = app.screen
        assert "What name should the report use?" in str(modal.query_one("#elicitation-message", Static).render())
        modal.query_one("#field-count", Input).value = "3"
        modal.query_one("#accept", Button).press()  # the name is required
        await until(
            pilot,
            lambda: "is required" in str(modal.query_one("#elicitation-error", Static).render()),
            "the sentence about the name",
        )
        assert app.screen is modal  # a wrong value is corrected, not sent
        modal.query_one("#field-name", Input).value = "Ada"
        modal.query_one("#accept", Button).press()
        await until(pilot, lambda: "accept: Ada x3" in results(server), "the server's answer")
        await until(pilot, lambda: not app.busy, "the turn's end")
        await send(pilot, "ask again")
        await until(pilot, lambda: isinstance(app.screen, ElicitationScreen), "the second question")
        await pilot.press("escape")
        await until(pilot, lambda: "cancel" in results(server), "the cancelled answer")
        await until(pilot, lambda: not app.busy, "the second turn's end")


async def test_line_mode_asks_a_servers_question_field_by_field_and_the_server_gets_the_answer(plain, server):  # noqa: F811
    server.script(tool_use("mcp__features__ask", {}), text("asked"), tool_use("mcp__features__ask", {}), text("again"))
    ui = plain(mcp_servers=features(), **SETTINGS)
    assert ui.app.session.asks_user
    await ui.app.session.mcp.wait_started()
    await ui.idle()
    ui.pipe.send_text("ask me\r")
    await ui.until(
        lambda: "? The MCP server features asks: What name should the report use?" in ui.text, "the question"
    )
    ui.pipe.send_text("y\r")
    ui.pipe.send_text("\r")  # the name is required
    await ui.until(lambda: "is required" in ui.text, "the sentence about the name")
    ui.pipe.send_text("Ada\r")
    ui.pipe.send_text("lots\r")
    await ui.until(lambda: "whole number" in ui.text, "the sentence about the count")
    ui.pipe.send_text("3\r")
    await ui.until(lambda: "accept: Ada x3" in results(server), "the server's answer")
    await ui.idle()
    assert "asked" in ui.text
    ui.pipe.send_text("ask again\r")
    await ui.until(lambda: ui.text.count("? The MCP server features asks") == 2, "the second question")
    ui.pipe.send_text("n\r")
    await ui.until(lambda: "decline" in results(server), "the declined answer")
    await ui.quit()
