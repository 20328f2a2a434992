"""Transcripts as readable text, for `agentcli sessions show` and line mode's /transcript.

Drawn from the view model (``ui/view.py``): a stored session is replayed into a ``SessionView``
first, a live one already is one, so there is one renderer for both.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Iterator
from typing import Any

from .format import seconds, tokens
from .transcript import TO_MODEL, CallEnded, ChildMark, Divider, Item, Note, Said, ToModel, ToolView
from .view import SessionView, Subagent

OUTPUT_LINES = 12  # lines of each tool output shown in a main transcript; a subagent's are shown in full
INPUT_CHARS = 200  # characters of each long tool argument shown in a main transcript


def main_lines(view: SessionView, *, live: bool) -> Iterator[str]:
    """The main agent's transcript, tool output cut short, and the children that never finished."""
    unfinished = [
        f"  ▪ {agent.id} {'running' if live else 'interrupted: the process stopped while it worked'}"
        for agent in view.subagents.values()
        if not agent.finished
    ]
    yield from item_lines(view.transcript.items, full=False, live=live, unfinished=unfinished)


def subagent_lines(agent: Subagent, *, live: bool, now: float, where: str = "") -> Iterator[str]:
    """A subagent's whole transcript: the brief, every message, each tool call in full, the result."""
    yield f"{agent.id} · {agent.type} · {agent.description}" + (f"  ({where})" if where else "")
    yield f"Status: {status_line(agent, now)}"
    yield ""
    yield "Brief:"
    yield from indent(agent.prompt, "  ")
    yield from item_lines(agent.transcript.items, full=True, live=live, brief=agent.prompt.strip())
    yield ""
    if agent.result and agent.result == agent.transcript.last_reply:
        yield "Result: the last message above."
    else:
        yield "Result:"
        yield from indent(agent.result or "(none)", "  ")
    if agent.report is not None and agent.finished:  # the whole receipt: the task result has it capped
        yield ""
        yield from indent(agent.report.receipt(cap=1_000_000), "")


def item_lines(
    items: Iterable[Item], *, full: bool, live: bool, brief: str | None = None, unfinished: Iterable[str] = ()
) -> Iterator[str]:
    """The readable lines of one transcript: prompts, replies, tool calls and their output, children.

    Each call's output is under its call, also when calls ran in parallel and their results came in
    another order; a task's result comes where it arrived, after its child's lines, naming its task, and
    so does the line of a task that has none (yet), after its child's end (``unfinished``: the end lines of
    children whose end was never recorded, said last)."""
    shown_last: ToolView | None = None  # the call whose lines are the latest ones
    no_result: list[str] = []  # tasks without a result: said after a child's end, or before what follows
    for item in items:
        latest, shown_last = shown_last, item if isinstance(item, ToolView) else None
        if no_result and (isinstance(item, Divider) or isinstance(item, Said) and item.role == "user"):
            yield from no_result
            no_result.clear()
        if isinstance(item, Said) and item.role == "user":
            if item.text != brief:
                yield ""
                yield from indent(item.text, "> ")
            brief = None  # only the first user message can be the brief
        elif isinstance(item, Said):
            yield ""
            yield item.text
        elif isinstance(item, ToolView):
            yield ""
            yield from call_lines(item.name, item.input, full)
            if item.status == "running":
                unanswered = "  ⎿ (running)" if live else "  ⎿ interrupted: no result was recorded"
                if item.preview == "delegate":  # its child's start and end come first
                    no_result.append(unanswered)
                else:
                    yield unanswered
            elif item.preview != "delegate":
                yield from output_lines(item.output, item.status == "error", full)
        elif isinstance(item, CallEnded) and item.call.preview == "delegate":
            if latest is not item.call:
                yield f"  ↳ the result of task {json.dumps(item.call.input.get('description', ''), ensure_ascii=False)}:"
            yield from output_lines(item.call.output, item.call.status == "error", full)
        elif isinstance(item, ChildMark) and not full:
            if item.status is None:
                yield f"  ▸ {item.id} started · {item.subagent_type} · {item.description}"
            else:
                turns = plural(item.turns, "turn") + (" + summary" if item.summarized else "")
                yield f"  ▪ {item.id} {item.status} · {turns} · {tokens(item.tokens)} tokens · {seconds(item.seconds)}"
                if no_result:
                    yield no_result.pop(0)
        elif isinstance(item, Note):
            yield f"! {item.text}"
        elif isinstance(item, ToModel):
            yield ""
            yield from indent(item.text, f"{TO_MODEL} ")
        elif isinstance(item, Divider):
            yield ""
            yield {
                "resumed": f"── resumed {local_time(item.at)}",
                "cleared": "── /clear: the conversation started afresh",
                "compacted": f"── compacted {item.messages} older messages into a summary",
                "rerun": f"── resumed ({item.description}): a new run with the history above",
                "interrupted": "── interrupted: the user stopped this turn",
            }[item.kind]
    yield from unfinished
    yield from no_result


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


def status_line(agent: Subagent, now: float) -> str:
    mark = f" · {agent.mark}" if agent.mark else ""
    return (
        f"{agent.status}{mark} · {plural(agent.turn, 'turn')} · {tokens(agent.tokens)} tokens · "
        f"{seconds(agent.elapsed(now))}"
    )


def indent(text: str, prefix: str) -> Iterator[str]:
    for line in text.splitlines() or [""]:
        yield (prefix + line).rstrip()


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def local_time(iso: str) -> str:
    try:
        return datetime.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError):
        return "?"
