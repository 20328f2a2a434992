"""Opening the session the app works on: a new one, or one resumed with --resume / --continue."""

from __future__ import annotations

from pathlib import Path

from ...config import Settings
from ...core import session as core
from ...core.events import Event
from ...core.llm import LLM
from ...core.workspace import Workspace

SessionError = core.SessionError  # a bad --resume or --continue, in one sentence


def open_session(settings: Settings, root: Path, *, llm: LLM | None = None, interactive: bool = True,
                 resume: str | None = None, continue_: bool = False) -> tuple[core.Session, list[Event]]:
    """The session, and the events it emitted while opening (warnings), to show once the app is up."""
    opened: list[Event] = []
    session = core.open_session(settings, Workspace.at(root), opened.append, interactive=interactive, llm=llm,
                                resume=resume, continue_=continue_)
    session.sink = lambda event: None
    return session, opened
