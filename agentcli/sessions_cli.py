"""`agentcli sessions list` and `agentcli sessions show SESSION [--agent sa-N]`: saved transcripts, readable."""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .core.door import (
    SessionError,
    SessionInfo,
    checkpoint_bytes,
    child_records,
    find_session,
    in_use,
    list_sessions,
    read_records,
    replay_events,
    session_info,
    subagent_record,
)
from .core.events import SubagentFinished
from .leaving import discard_unwritten
from .ui.escapes import json_line, visible
from .ui.format import tokens
from .ui.transcript import Transcript
from .ui.transcript_text import clip, item_lines, local_time, main_lines, plural, subagent_lines
from .ui.view import SessionView


def run_sessions(args: argparse.Namespace, root: Path) -> int:
    try:
        if args.action == "list":
            return list_command(root, everywhere=args.all, as_json=args.json)
        if args.action == "export":
            return export_command(root, args.session, fmt=args.format, output=args.output)
        return show_command(root, args.session, agent=args.agent, as_json=args.json)
    except BrokenPipeError:  # `agentcli sessions show S | head`
        discard_unwritten(sys.stdout)
        return 0


def list_command(root: Path, *, everywhere: bool, as_json: bool) -> int:
    sessions = list_sessions(None if everywhere else root)  # damage is marked on its row (damage_mark), not warned
    if as_json:
        print(json_line(json.dumps([s.to_dict() for s in sessions], indent=2, ensure_ascii=False)))
        return 0
    if not sessions:
        print("No sessions in this workspace yet." if not everywhere else "No sessions yet.")
        return 0
    # Rows fit the terminal's width; for a pipe or a file they are kept whole, as ls does.
    width = shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 100_000
    for line in list_lines(sessions, everywhere, width):
        print(visible(line))
    return 0


MIN_PROMPT = 20  # what a narrow terminal keeps of the first prompt: the counts give way to it first
GIVE_WAY = ("AGENTS", "TOKENS", "TURNS")  # dropped in this order while the first prompt would get less
MIN_PLACE = 12  # and then the workspace column narrows, down to this


def list_lines(sessions: list[SessionInfo], everywhere: bool, width: int = 100_000) -> Iterator[str]:
    """The table of ``sessions list``, each line at most ``width`` characters: the first prompt is cut to
    fit, and keeps at least MIN_PROMPT characters where the counts (GIVE_WAY) and the workspace can make room."""
    places = [short_path(s.cwd) for s in sessions]
    place_width = min(max(len(p) for p in places), 40) if everywhere else 0
    columns: dict[str, tuple[int, str]] = {
        "ID": (max(len(s.id) for s in sessions), "<"),
        "STARTED": (16, "<"),
        "TURNS": (5, ">"),
        "AGENTS": (6, ">"),
        "TOKENS": (7, ">"),
    }
    if everywhere:
        columns["WORKSPACE"] = (place_width, "<")

    def room() -> int:  # what the first prompt gets
        return width - sum(w + 2 for w, _ in columns.values())

    for name in GIVE_WAY:
        if room() < MIN_PROMPT:
            del columns[name]
    if everywhere and room() < MIN_PROMPT:
        place_width = max(MIN_PLACE, place_width - (MIN_PROMPT - room()))
        columns["WORKSPACE"] = (place_width, "<")

    def line(cells: dict[str, str], prompt: str) -> str:
        row = "".join(f"{cells[name]:{align}{w}}  " for name, (w, align) in columns.items())
        return clip(row + clip(prompt, max(1, width - len(row))), width)

    yield line({name: name for name in columns}, "FIRST PROMPT")
    for session, place in zip(sessions, places, strict=True):
        cells = {
            "ID": session.id,
            "STARTED": local_time(session.started),
            "TURNS": str(session.turns),
            "AGENTS": str(len(session.subagents)),
            "TOKENS": tokens(session.usage.total_tokens),
            "WORKSPACE": clip(place, place_width),
        }
        yield line(cells, damage_mark(session) + (one_line(session.first_prompt) or "(no prompt)"))


def damage_mark(session: SessionInfo) -> str:
    """A list row's word on lines of the session's files that are skipped: the list is read again and again,
    so it says so on the row, where a warning each time would repeat for ever; `sessions show` names them."""
    return f"[{plural(len(session.warnings), 'damaged line')} skipped] " if session.warnings else ""


def show_command(root: Path, text: str, *, agent: str | None, as_json: bool) -> int:
    path = find_session(root, text, everywhere=True)
    records, warnings = read_records(path)
    children: dict[str, list[dict[str, Any]]] = {}
    if agent is not None:
        children, child_warnings = child_records(path)
        warnings += child_warnings
        agent = f"sa-{agent}" if agent.isdigit() else agent
        if agent not in children:
            have = ", ".join(children) or "none"
            raise SessionError(f"Session {path.stem} has no subagent {agent}; it has {have}.")
        records = children[agent]
    warn(warnings)
    if as_json:
        for record in records:
            print(json_line(json.dumps(record, ensure_ascii=False)))
        return 0
    live = in_use(path)  # another agentcli is working in it right now
    lines = child_transcript(records, agent, path, live) if agent is not None else main_transcript(records, path, live)
    for line in lines:
        print(visible(line))
    return 0


def export_command(root: Path, text: str, *, fmt: str, output: str | None) -> int:
    from .ui.export import export, write_export

    path = find_session(root, text, everywhere=True)
    # Open in another agentcli now: a child that has not finished is at work there, as `show` says too.
    document = export(path, fmt, running=session_info(path).subagents if in_use(path) else ())
    if output is None:
        sys.stdout.write(document)
        return 0
    print(f"Exported to {write_export(Path(output), document)}.")
    return 0


def warn(warnings: list[str]) -> None:
    for warning in warnings:
        print(f"agentcli: warning: {visible(warning)}", file=sys.stderr)


def replay(records: list[dict[str, Any]]) -> tuple[SessionView, float]:
    """Stored records → the events a live run emitted → the view every front end draws from.

    The clock is each record's own time, so a child that never finished has run from its first
    record to its last; returns the view and that last time."""
    view, now = SessionView(), 0.0
    for record in records:
        now = stamp(record) or now
        if record.get("type") == "session_resumed":  # the store's own record, not an event
            view.transcript.resumed(str(record.get("ts", "")))
        for event in replay_events([record]):
            view.apply(event, now)
    return view, now


def stamp(record: dict[str, Any]) -> float:
    try:
        return datetime.datetime.fromisoformat(record["ts"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return 0.0


def main_transcript(records: list[dict[str, Any]], path: Path, live: bool) -> Iterator[str]:
    info = session_info(path)
    yield f"Session {info.id} · started {local_time(info.started)} · {info.model or 'unknown model'}"
    yield (
        f"Workspace: {info.cwd or '?'}"
        + (f" · forked from {info.forked_from}" if info.forked_from else "")
        + (" · open in another agentcli now" if live else "")
    )
    view, _ = replay(records)
    yield from main_lines(view, live=live)
    yield ""
    agents = (
        f" · subagents: {', '.join(info.subagents)} (show one with --agent {info.subagents[0]})"
        if info.subagents
        else ""
    )
    kept = checkpoint_bytes(path.parent / path.stem / "checkpoints")
    saved = f" · checkpoints {kept / 1e6:.1f} MB (agentcli rewind {info.id} --list)" if kept else ""
    yield f"── {plural(info.turns, 'turn')} · {tokens(info.usage.total_tokens)} tokens{agents}{saved}"
    yield from worktree_lines(info)


def worktree_lines(info: SessionInfo) -> Iterator[str]:
    """The session's subagent worktrees not yet merged or discarded, and how to deal with them."""
    from .core.door import WorktreeError, worktree_listing
    from .core.door import worktree_lines as lines_of

    try:
        kept = [w for w in worktree_listing(Path(info.cwd)) if w.session == info.id] if info.cwd else []
    except (WorktreeError, OSError):
        return
    if kept:
        yield "Worktrees kept (agentcli worktrees diff|merge|discard ID, from the repository):"
        yield from (f"  {line}" for line in lines_of(kept, info.id))


def child_transcript(records: list[dict[str, Any]], agent_id: str, path: Path, live: bool) -> Iterator[str]:
    view, now = replay(records)
    agent = view.subagents.get(agent_id)
    if agent is None:
        yield f"{agent_id} of session {path.stem}: its transcript has no start record."
        transcript = Transcript()
        for event in (e for r in records for e in replay_events([r])):
            transcript.apply(event)
        yield from item_lines(transcript.items, full=True, live=live)
        return
    if live and agent.status == "interrupted":  # not dead: still at work in the other process
        agent.status, agent.result = "running", ""
    record = subagent_record(records, agent_id)
    if not agent.finished and not live and record is not None:  # it stopped when its process did
        ended = record.events[-1]
        if isinstance(ended, SubagentFinished):
            agent.apply(ended, now)
    yield from subagent_lines(agent, live=live, now=now, where=f"session {path.stem}")


def one_line(text: str) -> str:
    return " ".join(text.split())


def short_path(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if path and path.startswith(home + "/") else path
