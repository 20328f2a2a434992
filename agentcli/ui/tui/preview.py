"""A resumed session's latest part, drawn from the end of its file before the engine opens it.

Opening a resumed session (importing the engine, reading and checking the whole file, rebuilding its
history) takes longer than drawing a screenful of it, so the app reads only the file's last records,
as the engine would read them, and draws them in its first frame. Once the session is open, the
conversation keeps those widgets if the session's own events end with the same ones (they do unless
the file changed in between), and draws afresh otherwise. A tail this module cannot read exactly as
the engine does (a torn last line, records written before events carried a call's summary or a
message's origin) is not drawn early: the engine's events are drawn once it opens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...core.content import text_of
from ...core.door import SessionError, find_session, image_folder, latest_session, record_event
from ...core.events import MAIN, AssistantMessage, Event, TextDelta, ToolCallStarted, UserMessage
from ..escapes import visible_event

CHUNK = 128 * 1024  # bytes read from the end first; four times more each time that holds too few items
MOST = 8 * 1024 * 1024  # past this the engine's own reading is as quick: no early draw


@dataclass(frozen=True)
class Tail:
    """The main agent's events from the end of a session file (escaped for the view, as ``show_restored``
    escapes the session's), and whether they are all of them (the read reached the file's start)."""

    events: list[Event]
    whole: bool


def session_path(root: Path, resume: str | None, continue_: bool) -> Path | None:
    """The file that ``--resume ID`` or ``--continue`` opens, found as the engine finds it; None when
    there is none (the engine then says why, in its sentence)."""
    try:
        return find_session(root, resume) if resume is not None else latest_session(root) if continue_ else None
    except (SessionError, OSError):
        return None


def read_tail(path: Path, enough: Callable[[list[Event]], bool]) -> Tail | None:
    """The latest main-agent events of ``path``: from its end back until ``enough`` of them, or all."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            chunk = CHUNK
            while True:
                start = max(0, size - chunk)
                f.seek(start)
                data = f.read(size - start)
                if start:
                    data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""  # the first line is cut
                events = _events(data, path)
                if events is None:
                    return None
                if not start or enough(events):
                    return Tail(events, whole=not start)
                if chunk >= MOST:
                    return None
                chunk *= 4
    except OSError:
        return None


def _events(data: bytes, path: Path) -> list[Event] | None:
    """The main agent's events in these whole JSONL lines, as the engine replays them (a TextDelta before
    each message's text, core/engine/history.replay_events); None for a tail it would read otherwise."""
    if data and not data.endswith(b"\n"):
        return None  # torn by a crash: the engine mends the file first
    events: list[Event] = []
    folder = image_folder(path)
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        found = record_event(line, folder)
        if found is None or found[1].agent_id != MAIN:
            continue  # the engine skips it too (with a warning), or it is a child's
        record, event = found
        if (isinstance(event, UserMessage) and "origin" not in record) or (
            isinstance(event, ToolCallStarted) and "summary" not in record
        ):
            return None  # an old record: the engine fills it in from its tool registry
        if isinstance(event, AssistantMessage) and (text := text_of(event.content).strip()):
            events.append(
                visible_event(
                    TextDelta(text=text, agent_id=event.agent_id, parent_tool_use_id=event.parent_tool_use_id)
                )
            )
        events.append(visible_event(event))
    return events
