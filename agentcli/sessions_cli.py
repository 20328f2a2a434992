"""`agentcli sessions list` and `agentcli sessions show SESSION [--agent sa-N]`: saved transcripts, readable."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

from .core.events import Usage
from .core.history import subagent_record
from .core.store import SessionError, SessionInfo, child_records, find_session, in_use, list_sessions, \
    read_records, session_info
from .core.subagents import SubagentRecord

OUTPUT_LINES = 12  # lines of each tool output shown in the main transcript; --agent shows them all
INPUT_CHARS = 200  # characters of each tool argument shown in the main transcript


def run_sessions(args: argparse.Namespace, root: Path) -> int:
    try:
        if args.action == "list":
            return list_command(root, everywhere=args.all, as_json=args.json)
        return show_command(root, args.session, agent=args.agent, as_json=args.json)
    except BrokenPipeError:  # `agentcli sessions show S | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def list_command(root: Path, *, everywhere: bool, as_json: bool) -> int:
    sessions = list_sessions(None if everywhere else root)
    if as_json:
        print(json.dumps([s.to_dict() for s in sessions], indent=2, ensure_ascii=False))
        return 0
    if not sessions:
        print("No sessions in this workspace yet." if not everywhere else "No sessions yet.")
        return 0
    for line in list_lines(sessions, everywhere):
        print(line)
    return 0


def list_lines(sessions: list[SessionInfo], everywhere: bool) -> Iterator[str]:
    width = shutil.get_terminal_size((120, 24)).columns
    id_width = max(len(s.id) for s in sessions)
    head = f"{'ID':<{id_width}}  {'STARTED':<16}  {'TURNS':>5}  {'AGENTS':>6}  {'TOKENS':>7}  "
    places = [short_path(s.cwd) for s in sessions]
    place_width = min(max(len(p) for p in places), 40) if everywhere else 0
    yield head + (f"{'WORKSPACE':<{place_width}}  " if everywhere else "") + "FIRST PROMPT"
    for session, place in zip(sessions, places):
        row = (f"{session.id:<{id_width}}  {local_time(session.started):<16}  {session.turns:>5}  "
               f"{len(session.subagents):>6}  {tokens(session.usage.total_tokens):>7}  ")
        if everywhere:
            row += f"{clip(place, place_width):<{place_width}}  "
        yield row + clip(one_line(session.first_prompt) or "(no prompt)", max(20, width - len(row)))


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
    for warning in warnings:
        print(f"agentcli: warning: {warning}", file=sys.stderr)
    if as_json:
        for record in records:
            print(json.dumps(record, ensure_ascii=False))
        return 0
    live = in_use(path)  # another agentcli is working in it right now
    lines = child_transcript(records, agent, path, live) if agent is not None else main_transcript(records, path, live)
    for line in lines:
        print(line)
    return 0


def main_transcript(records: list[dict[str, Any]], path: Path, live: bool) -> Iterator[str]:
    info = session_info(path)
    yield f"Session {info.id} · started {local_time(info.started)} · {info.model or 'unknown model'}"
    yield f"Workspace: {info.cwd or '?'}" + (f" · forked from {info.forked_from}" if info.forked_from else "") \
        + (" · open in another agentcli now" if live else "")
    yield from transcript(records, full=False, live=live)
    finished = {r.get("id") for r in records if r.get("type") == "subagent_finished"}
    for child in (c for c in info.subagents if c not in finished):
        yield f"  ▪ {child} {'running' if live else 'interrupted: the process stopped while it worked'}"
    yield ""
    agents = f" · subagents: {', '.join(info.subagents)} (show one with --agent {info.subagents[0]})" \
        if info.subagents else ""
    yield f"── {plural(info.turns, 'turn')} · {tokens(info.usage.total_tokens)} tokens{agents}"


def child_transcript(records: list[dict[str, Any]], agent: str, path: Path, live: bool) -> Iterator[str]:
    record = subagent_record(records, agent)
    if record is None:
        yield f"{agent} of session {path.stem}: its transcript has no start record."
        yield from transcript(records, full=True, live=live)
        return
    if live and record.status == "interrupted":  # not dead: still at work in the other process
        record.status, record.result = "running", ""
    yield f"{record.id} · {record.type} · {record.description}  (session {path.stem})"
    yield f"Status: {status_line(record)}"
    yield ""
    yield "Brief:"
    yield from indent(record.prompt, "  ")
    yield from transcript(records, full=True, live=live, brief=record.prompt)
    yield ""
    if record.result and record.result == last_reply(records):
        yield "Result: the last message above."
    else:
        yield "Result:"
        yield from indent(record.result or "(none)", "  ")


def last_reply(records: list[dict[str, Any]]) -> str:
    replies = [block_text(r.get("content")) for r in records if r.get("type") == "assistant_message"]
    return next((text for text in reversed(replies) if text), "")


def transcript(records: list[dict[str, Any]], *, full: bool, live: bool, brief: str | None = None
               ) -> Iterator[str]:
    """The readable lines of one transcript: prompts, replies, tool calls and their output, children."""
    finished = {r.get("id") for r in records if r.get("type") == "tool_call_finished"}
    for record in records:
        kind = record.get("type")
        if kind == "user_message":
            text = block_text(record.get("content"))
            if text and text != brief:
                yield ""
                yield from indent(text, "> ")
            brief = None  # only the first user message can be the brief
        elif kind == "assistant_message":
            text = block_text(record.get("content"))
            if text:
                yield ""
                yield text
        elif kind == "tool_call_started":
            yield ""
            yield from call_lines(record.get("name", "?"), record.get("input") or {}, full)
            if record.get("id") not in finished:
                yield "  ⎿ (running)" if live else "  ⎿ interrupted: no result was recorded"
        elif kind == "tool_call_finished":
            yield from output_lines(str(record.get("output", "")), bool(record.get("is_error")), full)
        elif kind == "subagent_started" and not full:
            yield f"  ▸ {record.get('id')} started · {record.get('subagent_type')} · {record.get('description')}"
        elif kind == "subagent_finished" and not full:
            yield f"  ▪ {record.get('id')} {record.get('status')} · {plural(record.get('turns', 0), 'turn')} · " \
                  f"{tokens(usage_total(record.get('usage')))} tokens · {float(record.get('seconds') or 0):.0f} s"
        elif kind == "notice" and record.get("level") in ("warning", "error"):
            yield f"! {record.get('text', '')}"
        elif kind == "session_resumed":
            yield ""
            yield f"── resumed {local_time(record.get('ts', ''))}"
        elif kind == "history_cleared":
            yield ""
            yield "── /clear: the conversation started afresh"
        elif kind == "compacted":
            yield ""
            yield f"── compacted {record.get('messages_summarized', 0)} older messages into a summary"


def call_lines(name: str, args: dict[str, Any], full: bool) -> Iterator[str]:
    """``● grep(pattern="x", path="src")``; long or multi-line arguments go below, indented."""
    inline, below = [], []
    for key, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if "\n" in text or len(text) > 100:
            below.append((key, text))
        else:
            inline.append(f"{key}={json.dumps(value, ensure_ascii=False)}")
    yield f"● {name}({', '.join(inline)})"
    for key, text in below:
        yield f"    {key}:"
        yield from indent(text if full else clip(text, INPUT_CHARS), "      ")


def output_lines(output: str, is_error: bool, full: bool) -> Iterator[str]:
    lines = output.rstrip("\n").splitlines() or ["(no output)"]
    shown = lines if full else lines[:OUTPUT_LINES]
    prefix = "  ⎿ error: " if is_error else "  ⎿ "
    yield prefix + shown[0]
    yield from ("    " + line for line in shown[1:])
    if len(shown) < len(lines):
        yield f"    … {len(lines) - len(shown)} more lines (--agent shows a child's in full)"


def status_line(record: SubagentRecord) -> str:
    return f"{record.status} · {plural(record.turns, 'turn')} · {tokens(record.usage.total_tokens)} tokens · {record.seconds:.0f} s"


def block_text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
                     ).strip()


def usage_total(usage: Any) -> int:
    return Usage.from_dict(usage if isinstance(usage, dict) else None).total_tokens


def indent(text: str, prefix: str) -> Iterator[str]:
    for line in text.splitlines() or [""]:
        yield (prefix + line).rstrip()


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def one_line(text: str) -> str:
    return " ".join(text.split())


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def short_path(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home):] if path and path.startswith(home + "/") else path


def local_time(iso: str) -> str:
    try:
        return datetime.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError):
        return "?"
