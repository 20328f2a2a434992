"""Opening the session the app works on: a new one, or one resumed with --resume / --continue."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...config import Settings
from ...core import session as core
from ...core.events import MAIN, Event
from ...core.history import replay_events
from ...core.llm import LLM
from ...core.store import read_records
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


@dataclass(frozen=True, kw_only=True)
class HistoryCleared(Event):
    """Where /clear started the conversation afresh: a record of the session file, not an engine event."""


def main_events(session: core.Session) -> list[Event]:
    """The main agent's restored events, with a ``HistoryCleared`` where the user ran /clear.

    The engine's replay leaves /clear out; the session file is read again only when it holds one.
    """
    events = [e for e in session.restored_events if e.agent_id == MAIN]
    path = session.store.main_path if session.store is not None else None
    try:
        if not events or path is None or b'"history_cleared"' not in path.read_bytes():
            return events
    except OSError:  # not written yet, or unreadable now: the engine's replay is what there is
        return events
    records, _ = read_records(path)
    out: list[Event] = []
    start = 0
    for index, record in enumerate(records + [{"type": "history_cleared"}]):  # the end closes the last part
        if record.get("type") == "history_cleared" and record.get("agent_id", MAIN) == MAIN:
            out += [e for e in replay_events(records[start:index]) if e.agent_id == MAIN]
            out.append(HistoryCleared())
            start = index + 1
    return out[:-1]
