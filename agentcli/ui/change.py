"""What one event changed, in the few kinds the front ends draw: the view model says it as it folds the event.

``SessionView.apply`` folds each event and then holds, in ``change``, one of these kinds with the event in it.
A renderer matches the kinds, and within a kind the events it draws; a last ``case _`` arm leaves the rest.
So an event that changes only facts the view holds (a cancel being summed up, a reply beginning, the mode) is
``Quiet`` or ``Status`` and is named in no renderer at all: a front end reads what it changed from the view
when it next draws (a status bar its tokens, the panel a child's state). An event a front end draws as it comes
is named once below, in the kind it is, and in the arm of each renderer that draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.events import (
    ApprovalRequested,
    ApprovalsWaiting,
    AssistantMessage,
    AttemptsCompared,
    Compacted,
    ElicitationRequested,
    Event,
    HistoryCleared,
    Notice,
    PlanUpdated,
    RawStreamEvent,
    Retrying,
    SteerDelivered,
    SubagentFinished,
    SubagentResultDelivered,
    SubagentStarted,
    SubagentSteered,
    SubagentWrappingUp,
    TextDelta,
    TextReset,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    ToolProgress,
    TurnFinished,
    TurnStarted,
    UserMessage,
)

__all__ = ["Asked", "Change", "Line", "Quiet", "Status", "Streamed", "Updated", "change_of"]


@dataclass(frozen=True)
class Quiet:
    """Nothing to draw as it comes: what the event changed, if anything, the view holds."""

    event: Event


@dataclass(frozen=True)
class Status:
    """The status bar's facts changed (tokens and cost, what a language server works on), and nothing else."""

    event: Event


@dataclass(frozen=True)
class Streamed:
    """A piece of the reply being streamed: its text or its thinking."""

    event: TextDelta | ThinkingDelta


@dataclass(frozen=True)
class Line:
    """Something new in an agent's conversation: a message, a call's start or end, a note, a divider, a child
    starting or ending, a plan, a table of attempts, the API's raw stream event."""

    event: Event


@dataclass(frozen=True)
class Updated:
    """Something already drawn changes: a call's progress or live output, a reply withdrawn for a retry, a turn
    beginning or ending."""

    event: Event


@dataclass(frozen=True)
class Asked:
    """The user is asked (an approval, an MCP server's question), or who waits for an answer changed."""

    event: ApprovalRequested | ElicitationRequested | ApprovalsWaiting


Change = Quiet | Status | Streamed | Line | Updated | Asked


def change_of(event: Event, status: bool = False) -> Change:
    """The kind of change ``event`` is; ``status``: its fold changed the status bar's facts."""
    match event:
        case TextDelta() | ThinkingDelta():
            return Streamed(event)
        case ApprovalRequested() | ElicitationRequested() | ApprovalsWaiting():
            return Asked(event)
        case ToolProgress() | ToolOutput() | TextReset() | TurnStarted() | TurnFinished():
            return Updated(event)
        case (
            UserMessage()
            | AssistantMessage()
            | RawStreamEvent()
            | ToolCallStarted()
            | ToolCallFinished()
            | Notice()
            | Retrying()
            | Compacted()
            | HistoryCleared()
            | SteerDelivered()
            | PlanUpdated()
            | AttemptsCompared()
            | SubagentStarted()
            | SubagentFinished()
            | SubagentSteered()
            | SubagentWrappingUp()
            | SubagentResultDelivered()
        ):
            return Line(event)
        case _:
            return Status(event) if status else Quiet(event)
