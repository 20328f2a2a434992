"""Transcripts as readable text, for `agentcli sessions show` and line mode's /transcript.

Works on stored records (event dicts); live events become records with ``event.to_dict()``.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Iterator

from ..core.content import text_of
from ..core.events import Retrying, Usage, event_from_dict
from ..core.subagents import SubagentRecord
from .format import seconds, tokens

OUTPUT_LINES = 12  # lines of each tool output shown in a main transcript; a subagent's are shown in full
INPUT_CHARS = 200  # characters of each long tool argument shown in a main transcript


def subagent_lines(record: SubagentRecord, records: list[dict[str, Any]], *, live: bool, where: str = ""
                   ) -> Iterator[str]:
    """A subagent's whole transcript: the brief, every message, each tool call in full, the result."""
    yield f"{record.id} · {record.type} · {record.description}" + (f"  ({where})" if where else "")
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
        elif kind == "subagent_started" and full and int(record.get("segment") or 1) > 1:
            yield ""
            yield f"── resumed ({record.get('description')}): a new run with the history above"
        elif kind == "subagent_started" and not full:
            yield f"  ▸ {record.get('id')} started · {record.get('subagent_type')} · {record.get('description')}"
        elif kind == "subagent_finished" and not full:
            yield f"  ▪ {record.get('id')} {record.get('status')} · {plural(record.get('turns', 0), 'turn')} · " \
                  f"{tokens(usage_total(record.get('usage')))} tokens · {seconds(float(record.get('seconds') or 0))}"
        elif kind == "notice" and record.get("level") in ("warning", "error"):
            yield f"! {record.get('text', '')}"
        elif kind == "retrying" and isinstance(retrying := event_from_dict(record), Retrying):
            yield f"! {retrying.text}"
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
    return f"{record.status} · {plural(record.turns, 'turn')} · {tokens(record.usage.total_tokens)} tokens · {seconds(record.seconds)}"


def block_text(content: Any) -> str:
    return text_of(content).strip()


def usage_total(usage: Any) -> int:
    return Usage.from_dict(usage if isinstance(usage, dict) else None).total_tokens


def indent(text: str, prefix: str) -> Iterator[str]:
    for line in text.splitlines() or [""]:
        yield (prefix + line).rstrip()


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def local_time(iso: str) -> str:
    try:
        return datetime.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError):
        return "?"
