"""What agentcli writes for the model (the turn was stopped, go on after a cut-off reply, sum up) is never drawn
as the user's words: live after esc, in `sessions show`, in a child's transcript, and replayed in the TUI and in
line mode."""

from __future__ import annotations

import io
from typing import Any

from agentcli.core.content import agentcli_note
from agentcli.core.engine.history import replay_events
from agentcli.core.engine.loop import CUT_OFF, STOPPED
from agentcli.sessions_cli import replay
from agentcli.ui.plain.display import Display
from agentcli.ui.plain.screen import Painter, Screen
from agentcli.ui.transcript_text import main_lines, subagent_lines
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.resume import open_session
from agentcli.ui.tui.widgets.entries import NoticeEntry, UserEntry
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text
from tests.origin import Origin
from tests.ui.test_tui_support import SIZE, answer, plain, send, shown, until

CHILD: Origin = {"agent_id": "sa-1", "parent_tool_use_id": "t9"}


def record(type_: str, agent: Origin | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "ts": "2026-12-05T10:00:00+00:00",
        "type": type_,
        "agent_id": "main",
        "parent_tool_use_id": None,
        **(agent or {}),
        **fields,
    }


def said(origin: str, note: str, agent: Origin | None = None) -> dict[str, Any]:
    return record("user_message", agent, content=[agentcli_note(note)], origin=origin)


async def test_esc_shows_no_note_to_the_model_and_sessions_show_says_interrupted(server, make_session, repo):
    server.script(
        text(" ".join(f"word{i}" for i in range(300)), stall_after_events=8, stall_seconds=600), text("Second answer.")
    )
    session, _ = make_session(interactive=True)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Tell me a long story")
        await until(pilot, lambda: app.conversation.streaming, "the answer to stream")
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, "the interrupt")
        notices = [plain(n) for n in app.conversation.query(NoticeEntry)]
        assert [n for n in notices if n.startswith("Interrupted.")], shown(app.conversation)
        assert "interrupted your turn" not in shown(app.conversation)
        await answer(pilot, "Go on")
        assert [plain(u) for u in app.conversation.query(UserEntry)] == ["you Tell me a long story", "you Go on"]
    # The model was told, as agentcli's note.
    said_then = [b["text"] for b in server.requests[-1]["messages"][0]["content"]]
    assert said_then == ["Tell me a long story", agentcli_note(STOPPED)["text"], "Go on"]

    listed = agentcli("sessions", "show", session.id, cwd=repo).stdout
    assert "── interrupted: the user stopped this turn" in listed
    assert "interrupted your turn" not in listed and "> Go on" in listed

    resumed, _ = open_session(session.settings, session.workspace.root, llm=session.llm, resume=session.id)
    app = make_app(resumed.settings, resumed.workspace.root, session=resumed, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "Second answer." in shown(app.conversation), "the replayed conversation")
        assert "interrupted your turn" not in shown(app.conversation)
        assert "Interrupted." in [plain(n) for n in app.conversation.query(NoticeEntry)]
        assert [plain(u) for u in app.conversation.query(UserEntry)] == ["you Tell me a long story", "you Go on"]


def stored() -> list[dict[str, Any]]:
    return [
        record("session_started", session_id="s", cwd="/w", model="m"),
        record("user_message", content=[{"type": "text", "text": "write it"}], origin="user"),
        record("assistant_message", content=[{"type": "text", "text": "…"}]),
        said("engine", CUT_OFF),
        said("interrupt", STOPPED),
        record("subagent_started", CHILD, id="sa-1", subagent_type="explore", description="Map it", prompt="Map."),
        record("user_message", CHILD, content=[{"type": "text", "text": "Map."}], origin="user"),
        said("interrupt", STOPPED, CHILD),
        said("engine", "Sum up what you found.", CHILD),
    ]


def test_sessions_show_marks_notes_to_the_model_as_agentclis():
    view, _ = replay(stored())
    lines = list(main_lines(view, live=False))
    assert "> write it" in lines
    assert f"agentcli → model: {CUT_OFF}" in lines
    assert "── interrupted: the user stopped this turn" in lines
    assert not [line for line in lines if line.startswith("> ") and line != "> write it"]
    child = list(subagent_lines(view.subagents["sa-1"], live=False, now=0.0))
    assert "agentcli → model: Sum up what you found." in child and "── interrupted: the user stopped this turn" in child
    assert not [line for line in child if "interrupted your turn" in line or line.startswith("> Sum up")]


def test_line_mode_replays_notes_to_the_model_as_agentclis():
    out = io.StringIO()
    screen = Screen(out, live=False, size=lambda: (200, 40))
    display = Display(screen, Painter(None, lambda: screen.width), clock=lambda: 100.0)
    display.replay([e for e in replay_events(stored()) if e.agent_id == "main"])
    lines = out.getvalue().splitlines()
    assert "› write it" in lines and "Interrupted." in lines
    assert [line for line in lines if line.startswith(f"agentcli → model: {CUT_OFF[:40]}")]
    assert not [line for line in lines if "interrupted your turn" in line or line.startswith(f"› {CUT_OFF[:20]}")]
