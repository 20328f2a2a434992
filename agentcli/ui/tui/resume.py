"""Opening the session the app works on: a new one, or one resumed with --resume / --continue."""

from __future__ import annotations

from pathlib import Path

from ...config import Settings
from ...core import session as core
from ...core.events import MAIN, Event
from ...core.session import LLM, Workspace

SessionError = core.SessionError  # a bad --resume or --continue, in one sentence


def open_session(settings: Settings, root: Path, *, llm: LLM | None = None, interactive: bool = True,
                 resume: str | None = None, continue_: bool = False) -> tuple[core.Session, list[Event]]:
    """The session, and the events it emitted while opening (warnings): the app is given them when it subscribes."""
    session = core.open_session(settings, Workspace.at(root), None, interactive=interactive, llm=llm,
                                resume=resume, continue_=continue_)
    return session, list(session.opened)


def main_events(session: core.Session) -> list[Event]:
    """The main agent's restored events (a ``HistoryCleared`` where the user ran /clear)."""
    return [e for e in session.restored_events if e.agent_id == MAIN]
