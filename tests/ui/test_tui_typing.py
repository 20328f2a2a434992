"""Keys typed while the focus moves: each reaches the input in the order typed, and enter sends what is shown.

A terminal hands the app a burst of keys at once (a fast typist, a paste-like burst from tmux). The keys
here are posted the way the driver posts them, all before the app handles the first, so that the focus
changes and the keys interleave as they do for a user: after cancelling a child from the panel, while its
entry still says "cancelling…", with the focus taken by the panel mid-word, and with the child finishing
mid-word.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from textual import events

from agentcli.ui.tui.app import AgentApp
from agentcli.ui.tui.widgets.side_panel import EntryTitle, SubagentEntry
from tests.fakes.anthropic_server import last_user_text, text, tool_use
from tests.ui.test_tui_support import SIZE, is_child, is_main, send, until

TYPED = "what did you find after x was cancelled"  # x and space are the entry's own keys, typed here as text


GAPS = (0, 1, 2, 3, 4, 5, 6, 8, 11)  # turns of the event loop between two keys, in turn: every window hit


async def burst(app: AgentApp, typed: str, *, enter: bool = False) -> None:
    """Post keys as the terminal driver does, a few turns of the event loop apart: some arrive before the
    app has handled the one before, some while it is moving the focus, some after."""
    keys = [events.Key("space" if c == " " else c, c) for c in typed] + ([events.Key("enter", "\r")] if enter else [])
    for n, key in enumerate(keys):
        app.post_message(key)
        for _ in range(GAPS[n % len(GAPS)]):
            await asyncio.sleep(0)


def entry_line(app: AgentApp) -> str:
    return app.query_one("#entry-sa-1", SubagentEntry).title.plain  # type: ignore[attr-defined]


def user_messages(server) -> list[str]:
    return [last_user_text(body) for body in server.requests if is_main(body) and last_user_text(body)]


@pytest.mark.parametrize(
    "how", ["x-and-text-in-one-burst", "while-cancelling", "focus-taken-mid-word", "child-finishes-mid-word"]
)
async def test_text_typed_after_cancelling_from_the_panel_is_sent_whole(server, tui, how):
    hold, summary = threading.Event(), threading.Event()
    server.when(
        is_main,
        tool_use("task", {"description": "Slow one", "prompt": "Slow errand"}),
        text("Reported."),
        text("Got it."),
    )
    server.when(
        lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"},
        text("Partial: looked in src/ only.", gate=summary, gate_timeout=120),
    )
    server.when(is_child, tool_use("grep", {"pattern": "x"}), text("never sent", gate=hold, gate_timeout=120))
    app = tui()
    half = len(TYPED) // 2
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "one slow errand")
            await until(pilot, lambda: "sa-1" in app.subagents and app.subagents["sa-1"].turn == 2, "the child")
            await pilot.press("tab")  # on the empty input: to the panel, on purpose
            assert isinstance(app.focused, EntryTitle)
            if how == "x-and-text-in-one-burst":
                await burst(app, "x" + TYPED, enter=True)
                await until(pilot, lambda: app.subagents["sa-1"].cancelling, "x to cancel the child")
            else:
                await burst(app, "x")
                await until(pilot, lambda: "cancelling…" in entry_line(app), "the entry to say cancelling")
                if how == "while-cancelling":
                    await burst(app, TYPED, enter=True)
                elif how == "focus-taken-mid-word":
                    await burst(app, TYPED[:half])
                    app.panel.focus_newest()  # the focus lands on the entry while keys are on their way
                    await burst(app, TYPED[half:], enter=True)
                else:
                    await burst(app, TYPED[:half])
                    summary.set()  # the child sums up and ends: its entry changes under the typing
                    await until(pilot, lambda: app.subagents["sa-1"].finished, "the child to end")
                    await burst(app, TYPED[half:], enter=True)
            summary.set()
            await until(pilot, lambda: len(user_messages(server)) == 2, "the typed message to be sent", timeout=30)
            assert user_messages(server) == ["one slow errand", TYPED]
            assert app.subagents["sa-1"].status == "cancelled"
            await until(pilot, lambda: not app.busy, "the answer")
            assert app.prompt.text == "" and app.prompt.has_focus
    finally:
        hold.set()
        summary.set()
