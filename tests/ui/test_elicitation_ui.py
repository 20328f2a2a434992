"""An MCP server's question to the user (elicitation) asked in both front ends: the mcp-SDK test server
(tests/fakes/mcp_features.py) asks for a name and a count, the user answers in the TUI's modal or at line
mode's typed fields, and the server's tool result says what it received."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from prompt_toolkit import PromptSession
from textual.widgets import Button, Input, Static

from agentcli.ui.plain import app as plain_app
from agentcli.ui.tui.screens.elicitation import ElicitationScreen
from tests.core.test_mcp_features import SETTINGS, features, results
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode harness fixture)
from tests.ui.test_tui_support import SIZE, send, tui, until  # noqa: F401
from tests.waiting import DEADLINE


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


async def test_an_error_nobody_handled_leaves_a_servers_question_its_keys(plain, server, monkeypatch):  # noqa: F811
    """An error reported to the loop while a field's prompt is up (a task of anyone's that failed unawaited) is
    logged, as everywhere in line mode: prompt-toolkit's own handler would print it and then wait for enter on
    another input, with the question's keys detached, so the answer would never be read."""
    server.script(tool_use("mcp__features__ask", {}), text("asked"))
    ui = plain(mcp_servers=features(), **SETTINGS)
    await ui.app.session.mcp.wait_started()
    await ui.idle()
    reported: list[str] = []

    class ErrorWhileAsked(PromptSession[str]):
        async def prompt_async(self, *args: Any, **kwargs: Any) -> str:
            def report() -> None:  # in the prompt's own context, as when a key's work drops a failed task
                reported.append("yes")
                loop.call_exception_handler({"message": "a task's error", "exception": EOFError()})

            loop = asyncio.get_running_loop()
            kwargs["pre_run"] = lambda: loop.call_soon(report) if not reported else None
            return await super().prompt_async(*args, **kwargs)

    monkeypatch.setattr(plain_app, "PromptSession", ErrorWhileAsked)
    ui.pipe.send_text("ask me\r")
    await ui.until(lambda: reported, "the error while the question is asked")
    ui.pipe.send_text("y\rAda\r3\r")
    await ui.until(lambda: "accept: Ada x3" in results(server), "the server's answer")
    await ui.idle()
    assert "asked" in ui.text
    await ui.quit()


async def polled() -> None:
    """Until the event loop has polled its readers once since now: a marker written to a pipe of our own is seen in
    the same poll as any keys already in the input's pipe, so whoever reads those has run by then."""
    loop = asyncio.get_running_loop()
    read, write = os.pipe()
    seen = asyncio.Event()
    loop.add_reader(read, seen.set)
    try:
        os.write(write, b".")
        await asyncio.wait_for(seen.wait(), DEADLINE)
    finally:
        loop.remove_reader(read)
        os.close(read)
        os.close(write)


async def test_line_mode_gives_the_next_field_what_is_typed_between_two_of_its_prompts(plain, server, monkeypatch):  # noqa: F811
    """Keys that arrive after one field's prompt has ended and before the next one reads go to the next field: the
    turn's own key reader (type-ahead for the next message) is off for the whole question, not back between prompts."""
    server.script(tool_use("mcp__features__ask", {}), text("asked"))
    ui = plain(mcp_servers=features(), **SETTINGS)
    await ui.app.session.mcp.wait_started()
    await ui.idle()
    after = iter(["Ada\r", "3\r"])  # typed as the prompt before each ends: "Answer it?", then the name

    class TypedBetween(PromptSession[str]):
        async def prompt_async(self, *args: Any, **kwargs: Any) -> str:
            answer = await super().prompt_async(*args, **kwargs)
            ui.pipe.send_text(next(after, ""))
            await polled()  # the loop looks at its readers between two prompts, as a busy machine's does
            return answer

    monkeypatch.setattr(plain_app, "PromptSession", TypedBetween)
    ui.pipe.send_text("ask me\r")
    await ui.until(lambda: "? The MCP server features asks" in ui.text, "the question")
    ui.pipe.send_text("y\r")
    await ui.until(lambda: "accept: Ada x3" in results(server), "the server's answer")
    await ui.idle()
    assert ui.app.keys.typed == []  # nothing of the answer kept as type-ahead for the next message
    await ui.quit()
