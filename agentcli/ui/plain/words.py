"""How line mode words what it prints on one line, for the lines of the main agent and of its subagents alike:
a child's end mark, a notice's style, a plan, a compaction, a text cut to a width."""

from __future__ import annotations

from rich.text import Text

from ...core.events import Compacted, Status
from ..format import tokens
from ..plan import PlanStep, plan_title

STATUS_MARKS: dict[Status, tuple[str, str]] = {
    "done": ("✓", "green"),
    "capped": ("◆", "yellow"),
    "timed_out": ("◆", "yellow"),
    "failed": ("✗", "red"),
    "cancelled": ("■", "yellow"),
    "interrupted": ("■", "yellow"),
    "refused": ("✗", "red"),
}
NOTICE_STYLES = {"info": "dim", "warning": "yellow", "error": "red"}


def plan_lines(steps: list[PlanStep], indent: str = "  ") -> Text:
    """A plan as a short list: its title, then one line per step (done dim, the current one bold)."""
    text = Text(plan_title(steps), style="dim")
    for step in steps:
        text += Text(f"\n{indent}{step.line}", style=PLAN_STYLES.get(step.status, ""))
    return text


PLAN_STYLES = {"completed": "dim", "in_progress": "bold"}


def compacted(event: Compacted) -> str:
    why = f" ({event.reason})" if event.reason else ""
    return (
        f"compacted {event.messages_summarized} older messages into a summary{why}: "
        f"about {tokens(event.tokens_before)} → {tokens(event.tokens_after)} tokens"
    )


def cut(text: str, width: int = 120) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
