"""Line mode's lines of subagents: indented lines for each one's start, tool calls and end, in a colour of its own.

Tool lines of one child come at most once per ``CHILD_LINE_EVERY`` seconds; calls in between are summed up on
the next line, so three children working at once stay readable. A part of ``Display`` (display.py), which prints
them and holds every other fact of a child in its view model.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.text import Text

from ...core.events import Compacted, Event, Notice, PlanUpdated, SubagentFinished, SubagentStarted, ToolCallStarted
from ..calls import call_line
from ..format import seconds, tokens, turns
from ..view import SessionView
from .words import NOTICE_STYLES, STATUS_MARKS, compacted, cut, plan_lines

CHILD_LINE_EVERY = 1.0  # seconds between two tool lines of one subagent
CHILD_COLORS = ("cyan", "magenta", "yellow", "blue", "green")


@dataclass
class ChildLines:
    """How line mode draws one subagent: its colour and the pacing of its lines. Whether it runs, and
    every other fact of it, is the view model's ``Subagent``; a finished child keeps its colour, so a line
    that arrives after its prompt closed is drawn in it."""

    color: str
    pending: list[tuple[str, str]] = field(default_factory=list)  # (tool name, summary) not yet shown
    last_line: float = float("-inf")
    flush: asyncio.TimerHandle | None = None


class SubagentLines:
    """Display's part that draws its subagents' lines (those after the prompt closed too)."""

    view: SessionView
    clock: Callable[[], float]
    children: dict[str, ChildLines]  # every subagent started here, by id
    children_seen: int

    if TYPE_CHECKING:  # Display's

        def line(self, *texts: Text | str) -> None: ...
        def say(self, text: RenderableType, style: str = "") -> None: ...
        def refresh(self) -> None: ...

    def _child_event(self, event: Event) -> None:
        if isinstance(event, SubagentStarted):
            color = CHILD_COLORS[self.children_seen % len(CHILD_COLORS)]
            self.children_seen += 1
            self.children.pop(event.id, None)  # a resumed child: a new colour, its live line last
            self.children[event.id] = ChildLines(color)
            how = (
                (" · background" if event.background else "")
                + (" · resumed" if event.segment > 1 else "")
                + (f" · {event.model}" if event.model else "")
            )
            self.line(
                self._child_prefix(event.id)
                + Text(" ▸ ", style="dim")
                + Text(event.description)
                + Text(f" · {event.subagent_type}{how}", style="dim")
            )
            return
        agent_id = event.agent_id
        if agent_id not in self.children:
            return
        match event:
            case ToolCallStarted() as started:
                self._child_tool(
                    agent_id, started.name, cut(call_line(started.preview, started.input, started.summary))
                )
            case Notice(level=level, text=text):
                self.line(self._child_prefix(agent_id) + Text(f" ! {text}", style=NOTICE_STYLES.get(level, "")))
            case Compacted() as compaction:
                self.say(self._child_prefix(agent_id) + Text(f" · {compacted(compaction)}", style="dim"))
            case PlanUpdated() if (agent := self.view.subagents.get(agent_id)) is not None:
                self.say(self._child_prefix(agent_id) + " " + plan_lines(agent.plan, indent="    "))
            case SubagentFinished() as ended:
                prefix = self._child_prefix(agent_id)
                self._flush_child(agent_id)
                mark, style = STATUS_MARKS.get(ended.status, ("·", ""))
                counted = turns(ended.turns)
                counted += " + summary" if ended.summarized else ""
                unverified = ended.report.mark if ended.report else ""  # "unverified" or "no answer"
                self.line(
                    prefix
                    + Text(f" {mark} {ended.status}", style=style)
                    + Text(f" · {unverified}" if unverified else "", style="yellow")
                    + Text(
                        f" · {counted} · {tokens(ended.usage.total_tokens)} tokens · {seconds(ended.seconds)}",
                        style="dim",
                    )
                )
            case _:
                pass  # a child's live line shows it (from the view), or line mode leaves it out

    def _child_prefix(self, agent_id: str) -> Text:
        return Text("  ") + Text(agent_id, style=f"bold {self.children[agent_id].color}")

    def _child_tool(self, agent_id: str, name: str, summary: str) -> None:
        child = self.children[agent_id]
        child.pending.append((name, summary))
        if child.flush is not None:
            return
        wait = child.last_line + CHILD_LINE_EVERY - self.clock()
        if wait <= 0:
            self._flush_child(agent_id)
        else:
            child.flush = asyncio.get_running_loop().call_later(wait, self._flush_child, agent_id)

    def _flush_child(self, agent_id: str) -> None:
        child = self.children.get(agent_id)
        if child is None:
            return
        if child.flush is not None:
            child.flush.cancel()
            child.flush = None
        if not child.pending:
            return
        (name, summary), rest = child.pending[0], child.pending[1:]
        child.pending, child.last_line = [], self.clock()
        line = self._child_prefix(agent_id) + Text(" · ", style="dim") + Text(name, style="bold")
        if summary:
            line += Text(f" {summary}")
        if rest:
            counts = Counter(n for n, _ in rest)
            names = ", ".join(n if k == 1 else f"{n} ×{k}" for n, k in counts.items())
            line += Text(f"  +{len(rest)} more: {names}", style="dim")
        self.line(line)
        self.refresh()
