"""A saved session as one document to attach to a pull request or an issue (`/export`, `agentcli sessions
export ID`): the conversation in Markdown, or as JSON, with each subagent's transcript and receipt where its
run ended, the tool outputs cut short, and every secret this process holds redacted as a stored notice is
(``secret_env.redact``: the held variables' values, keys met elsewhere, URL passwords)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from ..core.content import readable
from ..core.door import (
    SessionError,
    SubagentRecord,
    child_records,
    read_records,
    redact,
    replay_events,
    session_info,
    subagent_record,
)
from ..core.events import (
    MAIN,
    AssistantMessage,
    Compacted,
    Event,
    Notice,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    UserMessage,
)
from ..core.units import dollars, tokens
from .escapes import visible

FORMATS = ("markdown", "json")
OUTPUT_CAP = 2_000  # characters of one tool output in the Markdown; the JSON keeps them whole
SHOWN_ORIGINS = ("user", "steered")  # the user's own messages; the rest (tool results, notes) show their own way


def export(path: Path, fmt: str = "markdown", running: Collection[str] = ()) -> str:
    """The session whose main file is ``path``, in ``fmt`` (one of FORMATS), secrets redacted; ``running``: the
    ids of its subagents still at work (an open session's), each shown as running with what it did so far.
    Raises SessionError with one sentence when its file cannot be read."""
    if fmt not in FORMATS:
        raise SessionError(f"Unknown export format {fmt!r}; use markdown or json.")
    records, warnings = read_records(path)
    if not records and warnings:  # nothing readable: the file is gone, unreadable or all damaged
        raise SessionError(warnings[0])
    children, _ = child_records(path)
    if fmt == "json":
        return json.dumps(redacted(as_data(path, records, children, running)), indent=2, ensure_ascii=False) + "\n"
    return redact("\n".join(markdown(path, records, children, running)) + "\n")


def write_export(path: Path, document: str) -> Path:
    """Write ``document`` to ``path`` (a new file, or one replaced whole); SessionError saying why it cannot."""
    try:
        path.expanduser().write_text(document, encoding="utf-8")
    except OSError as exc:
        raise SessionError(f"Cannot write {path}: {(exc.strerror or str(exc)).lower()}.") from None
    return path.expanduser()


def redacted(value: Any) -> Any:
    """``value`` with ``redact`` applied to every string in it (before JSON escapes could split a secret)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redacted(item) for item in value]
    if isinstance(value, dict):
        return {redacted(key): redacted(item) for key, item in value.items()}
    return value


def child_record(own: list[dict[str, Any]], ident: str, running: Collection[str]) -> SubagentRecord | None:
    """A subagent's record from its transcript: one that never finished is interrupted, unless still ``running``."""
    record = subagent_record(own, ident)
    if record is not None and record.status == "interrupted" and ident in running:
        record.status = "running"
    return record


def as_data(
    path: Path, records: list[dict[str, Any]], children: dict[str, list[dict[str, Any]]], running: Collection[str]
) -> dict[str, Any]:
    info = session_info(path)
    subagents = []
    for ident, own in children.items():
        record = child_record(own, ident, running)
        report = record.report if record is not None else None
        subagents.append(
            {
                **(record.to_dict() if record is not None else {"id": ident}),
                "receipt": report.receipt(cap=100_000) if report else "",
                "report": report.to_dict() if report else None,
                "transcript": own,
            }
        )
    return {
        "session": {
            "id": info.id,
            "cwd": info.cwd,
            "started": info.started,
            "model": info.model,
            "turns": info.turns,
            "usage": info.usage.to_dict(),
        },
        "transcript": records,
        "subagents": subagents,
    }


def fence(text: str, info: str = "") -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def cut(text: str, cap: int = OUTPUT_CAP) -> str:
    return text if len(text) <= cap else f"{text[:cap]}\n… ({len(text) - cap:,} more characters in the session file)"


def markdown(
    path: Path, records: list[dict[str, Any]], children: dict[str, list[dict[str, Any]]], running: Collection[str]
) -> Iterator[str]:
    info = session_info(path)
    yield f"# agentcli session {info.id}"
    yield ""
    cost = f" · {dollars(info.usage.cost)}" if info.usage.cost is not None else ""
    yield (
        f"Started {info.started or '?'} · {info.model or 'unknown model'} · {info.turns} turns · "
        f"{tokens(info.usage.total_tokens)} tokens{cost}" + (f" · workspace `{info.cwd}`" if info.cwd else "")
    )
    events = replay_events(records)
    last_run = {e.id: n for n, e in enumerate(events) if isinstance(e, SubagentFinished)}
    delegated = {e.parent_tool_use_id for e in events if isinstance(e, SubagentStarted)}  # its fold says it all
    shown: set[str] = set()
    for number, event in enumerate(events):
        if isinstance(event, SubagentFinished) and last_run.get(event.id) == number and event.id in children:
            shown.add(event.id)
            yield from child_section(event.id, children[event.id], running)
        elif not (isinstance(event, ToolCallFinished) and event.id in delegated):  # a refused task call shows
            yield from event_lines(event, level=2)
    for ident in (i for i in children if i not in shown):  # still running, or its process stopped first
        yield from child_section(ident, children[ident], running)


def event_lines(event: Event, level: int) -> Iterator[str]:
    """One event of a transcript in Markdown; ``level``: the heading level of its messages."""
    head = "#" * level
    if isinstance(event, UserMessage) and event.origin in SHOWN_ORIGINS:
        who = "Brief" if event.agent_id != MAIN else "User" if event.origin == "user" else "User (steered)"
        yield from ("", f"{head} {who}", "", visible(readable(event.content, attachments=False)))
    elif isinstance(event, AssistantMessage) and (said := visible(readable(event.content)).strip()):
        yield from ("", f"{head} {'Assistant' if event.agent_id == MAIN else event.agent_id}", "", said)
    elif isinstance(event, ToolCallStarted):
        yield from ("", f"**{event.name}** {visible(event.summary)}".rstrip())
    elif isinstance(event, ToolCallFinished) and event.output.strip():
        how = "denied" if event.denied else "error" if event.is_error else "output"
        yield from (
            "",
            f"<details><summary>{event.name} {how}</summary>",
            "",
            fence(visible(cut(event.output))),
            "",
            "</details>",
        )
    elif isinstance(event, Compacted):
        yield from ("", f"*Compacted: {event.messages_summarized} messages summarized ({event.reason}).*")
    elif isinstance(event, Notice) and event.level != "info":
        yield from ("", f"> {event.level}: {visible(event.text)}")


def child_section(ident: str, own: list[dict[str, Any]], running: Collection[str]) -> Iterator[str]:
    """A subagent where its (latest) run ended: its model and figures, its transcript, then its receipt."""
    record = child_record(own, ident, running)
    if record is None:
        yield from ("", f"*{ident}: its transcript has no start record.*")
        return
    report = record.report
    cost = f" · {dollars(record.usage.cost)}" if record.usage.cost is not None else ""
    model = f" · {record.model}" if record.model else ""
    summary = f"Subagent {ident} · {record.type}{model} · {record.status} · {record.description}{cost}"
    yield from ("", f"<details><summary>{html.escape(visible(' '.join(summary.split())))}</summary>")
    for event in replay_events(own):
        if event.agent_id == ident:
            yield from event_lines(event, level=4)
    if report is not None and record.status != "running":  # a running child has no receipt yet
        yield from ("", "#### Receipt", "", fence(visible(report.receipt(cap=100_000) + "\n" + report.footer)))
    yield from ("", "</details>")
