"""A subagent's hidden transcript as plain text, and a pager to read it in."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess

from ...core.events import (AssistantMessage, Notice, SubagentFinished, ToolCallFinished, ToolCallStarted,
                            TurnStarted)
from ...core.subagents import SubagentRecord
from ..slash import tokens


def rule(title: str, width: int = 72) -> str:
    return f"── {title} " + "─" * max(3, width - len(title) - 4)


def transcript_text(record: SubagentRecord) -> str:
    """The brief, each assistant message, each tool call with input and output, and the result."""
    turns = f"{record.turns} turn{'' if record.turns == 1 else 's'}"
    out = [f"{record.id} · {record.type} · {record.description}",
           f"status: {record.status} · {turns} · {tokens(record.usage.total_tokens)} tokens · {record.seconds:.0f} s",
           "", rule("Brief"), record.prompt.rstrip(), ""]
    finished = False
    for event in record.events:
        if isinstance(event, TurnStarted):
            out += [rule(f"Turn {event.turn}" + (f" of {event.max_turns}" if event.max_turns else "")), ""]
        elif isinstance(event, AssistantMessage):
            text = "\n".join(b["text"] for b in event.content if b.get("type") == "text" and b.get("text"))
            if text.strip():
                out += ["Assistant:", text.rstrip(), ""]
        elif isinstance(event, ToolCallStarted):
            out += [f"Tool call {event.name}:", json.dumps(event.input, indent=2, ensure_ascii=False), ""]
        elif isinstance(event, ToolCallFinished):
            label = "error" if event.is_error else "output"
            out += [f"{event.name} {label} ({event.seconds:.1f} s):", event.output.rstrip() or "(no output)", ""]
        elif isinstance(event, Notice):
            out += [f"[{event.level}] {event.text}", ""]
        elif isinstance(event, SubagentFinished):
            finished = True
            out += [rule(f"Result · {event.status}"), event.result.rstrip() or "(no result)", ""]
    if not finished:
        out += [rule(f"Still {record.status}"), ""]
    return "\n".join(out)


def pager_command() -> list[str] | None:
    """$PAGER, else less when it is installed; None when there is nothing to page with."""
    configured = os.environ.get("PAGER", "").strip()
    if configured:
        try:
            return shlex.split(configured)
        except ValueError:
            return None
    found = shutil.which("less")
    return [found] if found else None


def page(text: str, command: list[str]) -> bool:
    """Show ``text`` in the pager; False when the pager could not be run."""
    env = dict(os.environ)
    env.setdefault("LESS", "FR")  # quit at once if it fits on one screen; keep colors
    try:
        subprocess.run(command, input=text, text=True, env=env, check=False)
    except OSError:
        return False
    return True
