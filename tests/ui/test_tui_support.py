"""Helpers shared by the TUI tests: an app on the stand-in server, waiting, and reading widgets."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static

from agentcli.ui.tui.app import AgentApp, make_app
from agentcli.ui.tui.widgets.conversation import ReportEntry
from agentcli.ui.tui.widgets.prompt import PromptInput
from tests.fakes.anthropic_server import offers_tool

SIZE = (110, 34)
USAGE = {"input_tokens": 1200, "output_tokens": 80}  # fixed, so numbers on screen do not depend on tmp paths


def is_main(body: dict[str, Any]) -> bool:
    return offers_tool(body, "task")


def is_child(body: dict[str, Any]) -> bool:
    return not offers_tool(body, "task")


@pytest.fixture
def tui(make_session: Callable[..., Any]) -> Callable[..., AgentApp]:
    """An app on a fresh session of the ``repo`` fixture, talking to the stand-in server."""

    def build(*, interactive: bool = True, testing: bool = True, **settings: Any) -> AgentApp:
        session, _ = make_session(interactive=interactive, **settings)
        return make_app(session.settings, session.workspace.root, session=session, testing=testing)

    return build


async def until(pilot: Pilot[Any], condition: Callable[[], Any], what: str, timeout: float = 20.0) -> None:
    """Let the app run until ``condition()`` holds (the timeout only guards against a hang)."""
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    app = pilot.app
    raise AssertionError(f"gave up waiting for {what}; the screen shows:\n" + shown(app.conversation if hasattr(app, "conversation") else app.screen))


async def send(pilot: Pilot[Any], text: str) -> None:
    area = pilot.app.query_one(PromptInput)
    area.focus()
    area.load_text(text)
    await pilot.pause()
    await pilot.press("enter")


async def answer(pilot: Pilot[Any], text: str) -> None:
    """Send a message and wait until the agent has finished with it."""
    app = pilot.app
    assert isinstance(app, AgentApp)
    await send(pilot, text)
    await until(pilot, lambda: not app.busy, "the turn to end")
    await pilot.pause()


def plain(widget: Widget) -> str:
    """The text a widget shows."""
    if isinstance(widget, Markdown):
        return widget.source
    if isinstance(widget, ReportEntry):  # a table drawn to its width: read it as drawn
        return "\n".join(strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, *widget.outer_size)))
    if isinstance(widget, Collapsible):
        title = widget.title
        return getattr(title, "plain", str(title)) + "\n" + "\n".join(plain(w) for w in widget.query(Static))
    if isinstance(widget, Static):
        content = widget.content
        return getattr(content, "plain", str(content))
    return "\n".join(plain(child) for child in widget.children)


def shown(container: Widget) -> str:
    return "\n".join(plain(child) for child in container.children)
