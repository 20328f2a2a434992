"""The view model every front end renders: one reducer fed live or replayed engine events.

``SessionView.apply(event, now)`` folds each event into plain state: the subagents (status, turns,
tokens, time, tool calls, changed files, their own events for the transcript) and the facts of the
status bar (tokens, cost, context fill, tokens kept out of the main context). It knows no framework;
``now`` is the caller's clock, so the same events give the same view in a test, the TUI and line mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.events import (FINISHED, MAIN, AssistantMessage, Event, Retrying, Status, SubagentFinished,
                           SubagentResultDelivered, SubagentStarted, TextDelta, ToolCallFinished, ToolCallStarted, TurnStarted, Usage,
                           UsageUpdated)
from .escapes import visible, visible_event
from .format import seconds, tokens

if TYPE_CHECKING:
    from ..core.subagents import SubagentRecord

__all__ = ["SessionView", "Subagent", "ToolView", "seconds", "tokens"]

CHARS_PER_TOKEN = 4  # how tool output a child read is counted as tokens kept out of the main context


@dataclass
class ToolView:
    """One tool call as the front ends list it."""

    id: str
    name: str
    input: dict[str, Any]
    summary: str = ""
    kind: str = ""  # read | edit | exec | task, as the engine reported it
    status: str = "running"  # running | ok | error
    seconds: float | None = None


@dataclass
class Subagent:
    """One subagent as every front end shows it, built from its events alone."""

    id: str
    type: str
    description: str
    prompt: str = ""
    tool_use_id: str | None = None
    max_turns: int = 0
    status: Status = "running"
    turn: int = 0
    tokens: int = 0
    started: float = 0.0  # the caller's clock when it started
    seconds: float | None = None  # how long it ran, once finished
    result: str = ""
    tools: dict[str, ToolView] = field(default_factory=dict)
    files_changed: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # everything it did, for the transcript
    retry: str = ""  # "retrying 3/8" while its model call is being retried
    output_chars: int = 0  # tool output it read, which never reached the parent
    background: bool = False  # its latest run was started with run_in_background
    segment: int = 1  # which run: 2, 3 … after each `task resume` (the same entry, a new segment)
    calls: list[str] = field(default_factory=list)  # the task call ids of all its runs
    turns_before: int = 0  # turns of its earlier runs: a resume counts on from them
    seconds_before: float = 0.0  # time of its earlier runs
    @classmethod
    def started_by(cls, event: SubagentStarted, now: float) -> "Subagent":
        return cls(id=event.id, type=event.subagent_type, description=event.description, prompt=event.prompt,
                   tool_use_id=event.parent_tool_use_id, max_turns=event.max_turns, started=now,
                   background=event.background, calls=[c for c in [event.parent_tool_use_id] if c],
                   status="queued")  # until its first turn: it may wait for a free slot

    @classmethod
    def from_record(cls, record: "SubagentRecord") -> "Subagent":
        """A subagent restored by resume: its events replayed, then its final facts from the record."""
        agent = cls(id=record.id, type=record.type, description=visible(record.description),
                    prompt=visible(record.prompt), tool_use_id=record.tool_use_id, max_turns=record.max_turns,
                    background=record.background)
        for event in record.events:
            agent.apply(visible_event(event), 0.0)
        agent.status = record.status
        agent.result = visible(record.result or "") or agent.result
        agent.turn = max(agent.turn, record.turns)
        agent.tokens = record.usage.total_tokens or agent.tokens
        agent.seconds = record.seconds
        return agent

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def latest_call(self) -> str:
        """The latest tool call it made, as name and summary; "" before its first."""
        latest = next(reversed(self.tools.values()), None)
        return f"{latest.name} {latest.summary}".strip() if latest else ""

    @property
    def tokens_kept_out(self) -> int:
        return self.output_chars // CHARS_PER_TOKEN

    def elapsed(self, now: float) -> float:
        return self.seconds if self.seconds is not None else self.seconds_before + max(0.0, now - self.started)

    def recent_tools(self, n: int = 5) -> list[ToolView]:
        return list(self.tools.values())[-n:]

    def resume(self, event: SubagentStarted, now: float) -> None:
        """A later run of this child (``task resume``): the same entry, counting on from the earlier runs."""
        self.segment, self.background, self.prompt = event.segment, event.background, event.prompt
        self.status, self.result, self.retry = "queued", "", ""
        self.turns_before, self.seconds_before = self.turn, self.elapsed(now)
        self.started, self.seconds = now, None
        self.tool_use_id = event.parent_tool_use_id
        if event.parent_tool_use_id and event.parent_tool_use_id not in self.calls:
            self.calls.append(event.parent_tool_use_id)

    def apply(self, event: Event, now: float) -> None:
        self.events.append(event)
        if isinstance(event, SubagentStarted) and event.segment > 1:
            self.resume(event, now)
        elif isinstance(event, SubagentStarted) and event.parent_tool_use_id and not self.calls:
            self.calls.append(event.parent_tool_use_id)
        if isinstance(event, Retrying):
            self.retry = f"retrying {event.attempt}/{event.retries}"
        elif isinstance(event, (TextDelta, AssistantMessage, ToolCallStarted, UsageUpdated, SubagentFinished)):
            self.retry = ""  # the call got through
        if isinstance(event, TurnStarted):
            self.turn = self.turns_before + event.turn
            self.max_turns = self.turns_before + event.max_turns if event.max_turns else self.max_turns
            if self.status == "queued":
                self.status = "running"
        elif isinstance(event, UsageUpdated):
            self.tokens = event.total.total_tokens
        elif isinstance(event, ToolCallStarted):
            self.tools[event.id] = ToolView(event.id, event.name, event.input if isinstance(event.input, dict) else {},
                                            event.summary, event.kind)
        elif isinstance(event, ToolCallFinished):
            self.output_chars += len(event.output)
            tool = self.tools.get(event.id)
            if tool is not None:
                tool.status = "error" if event.is_error else "ok"
                tool.seconds = event.seconds
                path = tool.input.get("path")
                if tool.kind == "edit" and not event.is_error and path and str(path) not in self.files_changed:
                    self.files_changed.append(str(path))
        elif isinstance(event, SubagentFinished):
            self.status = event.status
            self.result = event.result
            self.turn = max(self.turn, event.turns)
            self.tokens = event.usage.total_tokens or self.tokens
            self.seconds = event.seconds


@dataclass
class SessionView:
    """A session as its front ends show it: the subagents and the facts of the status bar."""

    subagents: dict[str, Subagent] = field(default_factory=dict)
    main_usage: Usage = field(default_factory=Usage)  # the main agent's running total
    context_used: int = 0  # tokens the main context held at its latest call
    model: str = ""
    # Background children that finished and whose result the main agent has not read yet. While the main
    # agent is idle and this is not empty, a front end starts a turn with Session.read_results().
    results_waiting: list[str] = field(default_factory=list)

    def apply(self, event: Event, now: float) -> Subagent | None:
        """Fold one event in; returns the subagent it concerned, if any."""
        if isinstance(event, SubagentStarted) and event.id not in self.subagents:
            agent = self.subagents[event.id] = Subagent.started_by(event, now)
            return agent
        if isinstance(event, SubagentStarted) and event.id in self.results_waiting:
            self.results_waiting.remove(event.id)  # resumed before its result was read: this run's replaces it
        known = self.subagents.get(event.id) if isinstance(event, SubagentFinished) else None
        if known is not None and known.background:
            self.results_waiting.append(event.id)
        if isinstance(event, SubagentResultDelivered) and event.id in self.results_waiting:
            self.results_waiting.remove(event.id)
        if event.agent_id == MAIN:
            if isinstance(event, UsageUpdated):
                self.main_usage, self.context_used = event.total, event.usage.context_tokens
                self.model = event.model or self.model
            return None
        agent = self.subagents.get(event.agent_id)
        if agent is not None:
            agent.apply(event, now)
        return agent

    def restore(self, records: "list[SubagentRecord]") -> None:
        """The subagents of a resumed session, from their records."""
        for record in records:
            self.subagents[record.id] = Subagent.from_record(record)

    def for_call(self, tool_use_id: str) -> Subagent | None:
        """The subagent started by the task call ``tool_use_id``."""
        return next((agent for agent in self.subagents.values()
                     if agent.tool_use_id == tool_use_id or tool_use_id in agent.calls), None)

    @property
    def running(self) -> list[Subagent]:
        return [agent for agent in self.subagents.values() if not agent.finished]

    @property
    def usage(self) -> Usage:
        """Tokens and cost of the whole session: the main agent and every subagent."""
        total = self.main_usage
        for agent in self.subagents.values():
            finished = next((e for e in reversed(agent.events) if isinstance(e, SubagentFinished)), None)
            latest = next((e for e in reversed(agent.events) if isinstance(e, UsageUpdated)), None)
            if finished is not None:
                total = total + finished.usage
            elif latest is not None:
                total = total + latest.total
        return total

    @property
    def tokens_kept_out(self) -> int:
        return sum(agent.tokens_kept_out for agent in self.subagents.values())
