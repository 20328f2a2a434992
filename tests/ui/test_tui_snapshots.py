"""Snapshots of the app's key states (``pytest --snapshot-update`` accepts changes after a human look).

Numbers on screen come from fixed usages, clock times are hidden (``testing=True``), so every run draws alike.
"""

from __future__ import annotations

import threading
from typing import Any

from textual.pilot import Pilot

from agentcli.config import Settings
from agentcli.ui.tui.app import AgentApp, make_app
from agentcli.ui.tui.screens.transcript import TranscriptScreen
from agentcli.ui.tui.widgets.side_panel import EntryTitle
from agentcli.ui.tui.widgets.tool_call import ToolCallEntry
from tests.fakes.anthropic_server import first_user_text, reply, text, tool_use, tool_use_block
from tests.ui.test_tui_support import SIZE, USAGE, answer, approval_shown, is_child, is_main, send, until

ANSWER = """\
## Where auth is handled

`handle_auth` in **src/app/auth.py** checks the password:

```python
def handle_auth(user, password):
    return hashlib.sha256(password.encode()).hexdigest() == user.digest
```

- `login()` calls it
- nothing else does
"""


async def settled(pilot: Pilot[Any]) -> None:
    pilot.app.clear_notifications()
    await pilot.pause()


def test_streamed_answer(snap_compare, server, tui):
    server.script(text(ANSWER, usage=USAGE))
    app = tui()

    async def run_before(pilot: Pilot[Any]) -> None:
        await answer(pilot, "Where is auth handled?")
        await settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def tool_call_app(server: Any, tui: Any) -> AgentApp:
    server.script(
        tool_use("grep", {"pattern": "handle_auth", "glob": "*.py"}, usage=USAGE),
        text("`handle_auth` is defined in src/app/auth.py:9 and called by `login`.", usage=USAGE),
    )
    return tui()


def test_tool_call_collapsed(snap_compare, server, tui):
    app = tool_call_app(server, tui)

    async def run_before(pilot: Pilot[Any]) -> None:
        await answer(pilot, "grep for handle_auth")
        await settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_tool_call_expanded(snap_compare, server, tui):
    app = tool_call_app(server, tui)

    async def run_before(pilot: Pilot[Any]) -> None:
        await answer(pilot, "grep for handle_auth")
        app.conversation.query_one(ToolCallEntry).focus()
        await pilot.press("enter")
        await settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_panel_with_running_done_and_cancelled_entries(snap_compare, server, tui):
    hold, later = threading.Event(), threading.Event()
    server.when(
        is_main,
        reply(
            "Three errands at once.",
            *[
                tool_use_block("task", {"description": d, "prompt": f"Errand {n}"})
                for n, d in ((1, "Find auth handler"), (2, "List every caller"), (3, "Check the tests"))
            ],
            usage=USAGE,
        ),
    )
    server.when(
        lambda b: first_user_text(b) == "Errand 1",
        tool_use("grep", {"pattern": "handle_auth"}, usage=USAGE),
        text("handle_auth is defined at src/app/auth.py:9.", usage=USAGE),
    )
    server.when(
        lambda b: first_user_text(b) == "Errand 2" and b.get("tool_choice") == {"type": "none"},
        text("Partial: only `login` calls it, in src/app/auth.py.", usage=USAGE),
    )
    server.when(
        lambda b: first_user_text(b) == "Errand 2",
        tool_use("grep", {"pattern": "login"}, usage=USAGE),
        text("never sent", gate=hold, gate_timeout=120),
    )
    server.when(lambda b: first_user_text(b) == "Errand 3", text("never sent", gate=later, gate_timeout=120))
    app = tui()

    async def run_before(pilot: Pilot[Any]) -> None:
        await send(pilot, "Run three errands")
        await until(
            pilot,
            lambda: "sa-3" in app.subagents and app.subagents["sa-1"].finished and app.subagents["sa-2"].turn == 2,
            "two children to get going",
        )
        app.query_one("#entry-sa-2").query_one(EntryTitle).focus()
        await pilot.press("x")
        await until(pilot, lambda: app.subagents["sa-2"].finished, "the cancel")
        app.query_one("#entry-sa-1").query_one(EntryTitle).focus()
        await pilot.press("space")
        await settled(pilot)

    try:
        assert snap_compare(app, terminal_size=(130, 36), run_before=run_before)
    finally:
        hold.set()
        later.set()


def test_transcript_screen(snap_compare, server, tui):
    server.when(
        is_main,
        tool_use("task", {"description": "Find auth handler", "prompt": "Find handle_auth."}, usage=USAGE),
        text("It is in src/app/auth.py:9.", usage=USAGE),
    )
    server.when(
        is_child,
        reply("Searching.", tool_use_block("grep", {"pattern": "def handle_auth"}), usage=USAGE),
        text("handle_auth is defined at src/app/auth.py:9.", usage=USAGE),
    )
    app = tui()

    async def run_before(pilot: Pilot[Any]) -> None:
        await answer(pilot, "Use a subagent to find auth")
        await pilot.press("ctrl+o")
        await until(
            pilot,
            lambda: isinstance(app.screen, TranscriptScreen) and app.screen.conversation.query(ToolCallEntry),
            "the transcript",
        )
        await settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_approval_modal(snap_compare, server, tui):
    server.when(
        is_main,
        tool_use("task", {"description": "Run the tests", "prompt": "Run the test suite."}, usage=USAGE),
        text("Done.", usage=USAGE),
    )
    server.when(
        is_child,
        tool_use("bash", {"command": "python -m pytest -q tests/"}, usage=USAGE),
        text("All pass.", usage=USAGE),
    )
    app = tui(interactive=True)

    async def run_before(pilot: Pilot[Any]) -> None:
        await send(pilot, "Delegate the tests")
        await until(pilot, lambda: approval_shown(app), "the approval request")
        await settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_no_key_screen(snap_compare, repo):
    app = make_app(Settings().engine(), repo, testing=True)
    assert snap_compare(app, terminal_size=SIZE)
