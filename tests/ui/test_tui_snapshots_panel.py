"""Snapshots of the panel at 80x24 (one line per entry, cancelling) and of a stalled entry at 120 columns."""

from __future__ import annotations

import threading
from typing import Any

from textual.pilot import Pilot

from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.widgets.side_panel import EntryTitle
from tests.fakes.anthropic_server import first_user_text, reply, text, tool_use, tool_use_block
from tests.ui.test_tui_snapshots import settled
from tests.ui.test_tui_support import USAGE, is_child, is_main, send, until


def test_panel_at_80_by_24_with_a_cancelling_entry(snap_compare, server, tui):
    hold, summary = threading.Event(), threading.Event()
    server.when(
        is_main,
        reply(
            "Three errands at once.",
            *[
                tool_use_block("task", {"description": d, "prompt": f"Errand {n}"})
                for n, d in (
                    (1, "Find the authentication handler"),
                    (2, "List every caller of login in the codebase"),
                    (3, "Check which tests cover the billing module"),
                )
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
        text("Partial.", gate=summary, gate_timeout=120, usage=USAGE),
    )
    server.when(
        lambda b: first_user_text(b) == "Errand 2",
        tool_use("grep", {"pattern": "login"}, usage=USAGE),
        text("never sent", gate=hold, gate_timeout=120),
    )
    server.when(
        lambda b: first_user_text(b) == "Errand 3",
        tool_use("glob", {"pattern": "tests/*"}, usage=USAGE),
        text("never sent", gate=hold, gate_timeout=120),
    )
    app = tui()

    async def run_before(pilot: Pilot[Any]) -> None:
        await send(pilot, "Run three errands")
        await until(
            pilot,
            lambda: (
                "sa-3" in app.subagents
                and app.subagents["sa-1"].finished
                and app.subagents["sa-2"].turn == 2
                and app.subagents["sa-3"].turn == 2
            ),
            "the children to go",
        )
        app.query_one("#entry-sa-2").query_one(EntryTitle).focus()
        app.prompt.typing = False
        await pilot.press("x")
        await until(pilot, lambda: app.subagents["sa-2"].cancelling, "the cancel")
        app.prompt.focus()
        await settled(pilot)

    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
    finally:
        hold.set()
        summary.set()


def test_a_stalled_entry_at_120_columns(snap_compare, server, make_session):
    gate = threading.Event()
    server.when(
        is_main,
        tool_use("task", {"description": "Find the config loader", "prompt": "Find it."}, usage=USAGE),
        text("Done.", usage=USAGE),
    )
    server.when(is_child, text("Late.", gate=gate, gate_timeout=120))  # the stand-in stays silent
    now = [1000.0]
    session, _ = make_session(interactive=True)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True, clock=lambda: now[0])

    async def run_before(pilot: Pilot[Any]) -> None:
        await send(pilot, "Find the config loader through a subagent")
        await until(
            pilot, lambda: "sa-1" in app.subagents and app.subagents["sa-1"].status == "running", "the child to run"
        )
        now[0] += 75  # no event from the child since: its model call has sent nothing
        await app.tick()
        await settled(pilot)

    try:
        assert snap_compare(app, terminal_size=(120, 30), run_before=run_before)
    finally:
        gate.set()
