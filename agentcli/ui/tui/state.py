"""What the UI knows about each subagent, built from engine events alone (live or replayed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.events import (FINISHED, AssistantMessage, Event, Retrying, Status, SubagentFinished, SubagentStarted,
                            TextDelta, ToolCallFinished, ToolCallStarted, TurnStarted, UsageUpdated)
from ..escapes import visible, visible_event

if TYPE_CHECKING:
    from ...core.subagents import SubagentRecord

EDIT_TOOLS = ("write_file", "edit_file")


@dataclass
class ToolView:
    """One tool call as the panel lists it."""

    id: str
    name: str
    input: dict[str, Any]
    summary: str = ""
    status: str = "running"  # running | ok | error
    seconds: float | None = None


@dataclass
class SubagentState:
    id: str
    type: str
    description: str
    prompt: str = ""
    tool_use_id: str | None = None
    max_turns: int = 0
    status: Status = "running"
    turn: int = 0
    tokens: int = 0
    started: float = 0.0  # the UI clock when it started
    seconds: float | None = None  # how long it ran, once finished
    result: str = ""
    tools: dict[str, ToolView] = field(default_factory=dict)
    files_changed: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # everything it did, for the transcript viewer
    retry: str = ""  # "retrying 3/8" while its model call is being retried

    @classmethod
    def started_by(cls, event: SubagentStarted, now: float) -> "SubagentState":
        return cls(id=event.id, type=event.subagent_type, description=event.description, prompt=event.prompt,
                   tool_use_id=event.parent_tool_use_id, max_turns=event.max_turns, started=now,
                   status="queued")  # until its first turn: it may wait for a free slot

    @classmethod
    def from_record(cls, record: "SubagentRecord") -> "SubagentState":
        """A subagent restored by resume: its events replayed, then its final facts from the record."""
        state = cls(id=record.id, type=record.type, description=visible(record.description),
                    prompt=visible(record.prompt), tool_use_id=record.tool_use_id, max_turns=record.max_turns)
        for event in record.events:
            state.apply(visible_event(event), 0.0)
        state.status = record.status
        state.result = visible(record.result or "") or state.result
        state.turn = max(state.turn, record.turns)
        state.tokens = record.usage.total_tokens or state.tokens
        state.seconds = record.seconds
        return state

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def elapsed(self, now: float) -> float:
        return self.seconds if self.seconds is not None else max(0.0, now - self.started)

    def recent_tools(self, n: int = 5) -> list[ToolView]:
        return list(self.tools.values())[-n:]

    def apply(self, event: Event, now: float) -> None:
        self.events.append(event)
        if isinstance(event, Retrying):
            self.retry = f"retrying {event.attempt}/{event.retries}"
        elif isinstance(event, (TextDelta, AssistantMessage, ToolCallStarted, UsageUpdated, SubagentFinished)):
            self.retry = ""  # the call got through
        if isinstance(event, TurnStarted):
            self.turn = event.turn
            self.max_turns = event.max_turns or self.max_turns
            if self.status == "queued":
                self.status = "running"
        elif isinstance(event, UsageUpdated):
            self.tokens = event.total.total_tokens
        elif isinstance(event, ToolCallStarted):
            self.tools[event.id] = ToolView(event.id, event.name, event.input if isinstance(event.input, dict) else {},
                                              event.summary)
        elif isinstance(event, ToolCallFinished):
            view = self.tools.get(event.id)
            if view is not None:
                view.status = "error" if event.is_error else "ok"
                view.seconds = event.seconds
                path = view.input.get("path")
                if view.name in EDIT_TOOLS and not event.is_error and path and path not in self.files_changed:
                    self.files_changed.append(str(path))
        elif isinstance(event, SubagentFinished):
            self.status = event.status
            self.result = event.result
            self.turn = max(self.turn, event.turns)
            self.tokens = event.usage.total_tokens or self.tokens
            self.seconds = event.seconds
