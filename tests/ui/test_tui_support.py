"""Helpers shared by the TUI tests: sending, waiting, and reading widgets (the ``tui`` fixture is in conftest)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static

from agentcli.ui.tui.app import AgentApp
from agentcli.ui.tui.widgets.entries import ReportEntry
from agentcli.ui.tui.widgets.prompt import PromptInput
from agentcli.ui.tui.widgets.tool_call import ToolCallEntry
from tests import waiting
from tests.fakes.anthropic_server import offers_tool
from tests.ui.conftest import tui as tui  # noqa: F401  (the fixture's old import path)
from tests.waiting import DEADLINE

SIZE = (110, 34)
USAGE = {"input_tokens": 1200, "output_tokens": 80}  # fixed, so numbers on screen do not depend on tmp paths


def is_main(body: dict[str, Any]) -> bool:
    return offers_tool(body, "task")


def is_child(body: dict[str, Any]) -> bool:
    return not offers_tool(body, "task")


async def until(pilot: Pilot[Any], condition: Callable[[], Any], what: str, timeout: float = DEADLINE) -> Any:  # noqa: ASYNC109 - as waiting.until
    """Let the app run until ``condition()`` holds; on a hang, fail with ``what`` and the screen's text."""
    app = pilot.app
    return await waiting.until(
        condition,
        what,
        timeout=timeout,
        step=lambda: pilot.pause(0.02),
        detail=lambda: "the screen shows:\n" + shown(getattr(app, "conversation", app.screen)),
    )


async def resize(pilot: Pilot[Any], width: int, height: int) -> None:
    """Resize the terminal and wait until the screen has its new size (Textual applies it on a timer)."""
    await pilot.resize_terminal(width, height)
    await until(pilot, lambda: pilot.app.screen.size == (width, height), f"the screen to be {width}x{height}")


async def send(pilot: Pilot[Any], text: str) -> None:
    """Type ``text`` and press enter; return once the app has handled it.

    Pilot's press() judges that a key was handled by the process looking idle, which a busy machine
    fools. So wait for the input to clear (it was sent) and for the message to have left every queue
    between the input and the app; the last pause lets the app's handler finish.
    """
    area = pilot.app.query_one(PromptInput)
    area.focus()
    area.load_text(text)
    await pilot.pause()
    await pilot.press("enter")
    path = [area, *area.ancestors]
    await until(
        pilot, lambda: area.text == "" and not any(node.message_queue_size for node in path), f"{text!r} to be sent"
    )
    await pilot.pause()


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
    if isinstance(widget, ToolCallEntry):
        return widget.plain
    if isinstance(widget, Collapsible):
        title = widget.title
        return getattr(title, "plain", str(title)) + "\n" + "\n".join(plain(w) for w in widget.query(Static))
    if isinstance(widget, Static):
        content = widget.content
        return getattr(content, "plain", str(content))
    return "\n".join(plain(child) for child in widget.children)


def drawn(widget: Widget) -> list[str]:
    """The lines a widget draws, as they are on screen (its padding and bars too), right-trimmed."""
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, *widget.outer_size))]


def shown(container: Widget) -> str:
    return "\n".join(plain(child) for child in container.children)


def approval_shown(app: Any) -> bool:
    """An approval question is up and drawn: its screen pushed and its widgets mounted (a busy machine can
    show the screen a moment before its children)."""
    from agentcli.ui.tui.screens.approval import ApprovalScreen

    return isinstance(app.screen, ApprovalScreen) and bool(app.screen.query("#approval-buttons"))
