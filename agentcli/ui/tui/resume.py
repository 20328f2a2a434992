"""Opening the session the app works on (a new one, or one resumed with --resume / --continue), and showing
what a resumed one holds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...core.door import SessionError  # a bad --resume or --continue, in one sentence
from ...core.events import MAIN, Event
from ..escapes import visible_data, visible_event
from .base import AppBase
from .preview import read_tail, session_path
from .widgets.history import tail_start, text_of

if TYPE_CHECKING:
    from ...core.door import LLM, EngineSettings, SessionSurface

__all__ = ["SessionError", "open_session", "show_restored", "show_tail", "welcome"]


def open_session(
    settings: EngineSettings,
    root: Path,
    *,
    llm: LLM | None = None,
    interactive: bool = True,
    resume: str | None = None,
    continue_: bool = False,
) -> tuple[SessionSurface, list[Event]]:
    """The session, and the events it emitted while opening (warnings): the app is given them when it subscribes.

    The engine is imported here, on first use: the app calls this once its first screen is up."""
    from ...core import door as core

    session = core.open_session(
        settings, core.Workspace.at(root), None, interactive=interactive, llm=llm, resume=resume, continue_=continue_
    )
    return session, list(session.opened)


async def welcome(app: AppBase) -> None:
    """The first line of a new conversation (the bench and the tests wait for its words)."""
    if not app.welcomed:
        app.welcomed = True
        await app.conversation.add_notice(
            f"agentcli in {app.root.name}/ · ask about the code, or ask it to change something.\n"
            "Type / for commands and @ for files; ctrl+p lists every action.",
            block=True,
        )


async def show_tail(app: AppBase, resume: str | None, continue_: bool, limit: int) -> None:
    """Before the session opens: draw the latest part of the session being resumed (``resume``, or the latest
    with ``continue_``) from its file's tail (preview.py), as many items as ``show_restored`` draws."""
    try:
        path = session_path(app.root, resume, continue_)
        rows = app.size.height + 1
        tail = read_tail(path, lambda events: tail_start(events, limit, rows) > 0) if path else None
        if tail is not None and tail.events:
            await app.conversation.preview(tail.events, whole=tail.whole, limit=limit)
    except Exception:  # only an early draw: the session's own events are drawn once it is open, and what
        await app.conversation.clear()  # is wrong with its file is said then, in a sentence


def main_events(session: SessionSurface) -> list[Event]:
    """The main agent's restored events (a ``HistoryCleared`` where the user ran /clear)."""
    return [e for e in session.restored_events if e.agent_id == MAIN]


async def show_restored(app: AppBase, limit: int) -> None:
    """Show a resumed session in ``app``: its subagents in the panel, the latest ``limit`` items of its
    conversation (earlier ones load on scroll), and the warnings it gave while opening."""
    restored = [visible_event(event) for event in main_events(app.session)]
    app.view.restore(app.session.children, restored)
    app.plan.show(app.view.plan)
    messages = app.session.messages
    if await app.conversation.adopt(restored):  # its tail, drawn before the session opened, is kept
        pass
    elif restored:
        await app.conversation.replay(restored, limit=limit)
    elif messages:
        await app.conversation.replay_messages(visible_data(messages), app.session.call_started)
    app.prompt.sent = [
        text for m in messages if m.get("role") == "user" for text in [text_of(m.get("content")).strip()] if text
    ]
    for state in app.subagents.values():
        await app.panel.show(state, app.clock())
        app.conversation.show_subagent(state)
    if app.subagents:
        app.show_panel()
    if not (restored or messages):
        await welcome(app)
    opened, app.opened = app.opened or [], None
    for event in opened:
        await app.conversation.apply(visible_event(event))
