"""Opening the session the app works on: a new one, or one resumed with --resume / --continue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...config import Settings
from ...core import session as core_session
from ...core.events import Event
from ...core.llm import LLM
from ...core.workspace import Workspace

# What opening a session raises for a bad --resume / --continue (one sentence); older engines lack it.
SessionError: type[Exception] = getattr(core_session, "SessionError", LookupError)


def open_session(settings: Settings, root: Path, *, llm: LLM | None = None, interactive: bool = True,
                 resume: str | None = None, continue_: bool = False) -> tuple[core_session.Session, list[Event]]:
    """The session, and the events it emitted while opening (warnings), to show once the app is up."""
    opened: list[Event] = []
    opener: Any = getattr(core_session, "open_session", None)
    if opener is not None:
        session = opener(settings, Workspace.at(root), opened.append, interactive=interactive, llm=llm,
                         resume=resume, continue_=continue_)
    else:
        session = core_session.Session(settings, Workspace.at(root), opened.append, interactive=interactive,
                                       llm=llm)
    session.sink = lambda event: None
    return session, opened
