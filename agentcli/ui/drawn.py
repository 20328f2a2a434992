"""Which events a renderer draws, and which only change facts it reads from the view model.

A renderer dispatches with ``match drawn(event):`` over ``Drawn``, ending in ``assert_never``, so mypy
names each renderer that says nothing about a new kind it might draw. A ``Quiet`` event has nothing
of its own to draw: it changes only facts the view model holds (``ui/view.py`` folds it; its reducers
match over every event), which renderers read from there (a model call's usage, the inbox, a cancel
being summed up), or it is a question (an approval, a server's), which its front end asks in a dialog
of its own before any drawing. ``drawn`` gives None for it, so no renderer lists it. A new event joins one of the two
(``tests/ui/test_one_fold.py`` checks that the two make ``AnyEvent``).
"""

from __future__ import annotations

from typing import Union, cast, get_args

from ..core.events import (ApprovalRequested, ApprovalsWaiting, AssistantMessage, Compacted, ElicitationRequested,
                           Event, HistoryCleared, Notice, PlanUpdated, RawStreamEvent, Retrying, Rewound,
                           SubagentCancelling, SubagentFinished, SubagentResultDelivered, SubagentStarted,
                           SubagentSteered, SubagentWrappingUp, SteerDelivered, TextDelta, TextReset, ThinkingDelta, ToolCallFinished,
                           ToolCallStarted, ToolProgress, TurnFinished, TurnStarted, UsageUpdated, UserMessage)

Quiet = Union[UsageUpdated, ApprovalsWaiting, SubagentCancelling, ApprovalRequested, ElicitationRequested]
Drawn = Union[UserMessage, TurnStarted, TextDelta, ThinkingDelta, RawStreamEvent, TextReset, AssistantMessage,
              ToolCallStarted, ToolCallFinished, ToolProgress, SubagentStarted, SubagentFinished, SubagentSteered,
              SubagentWrappingUp, SubagentResultDelivered, PlanUpdated, Notice, Retrying, TurnFinished, Compacted,
              HistoryCleared, Rewound, SteerDelivered]
QUIET: tuple[type[Event], ...] = get_args(Quiet)


def drawn(event: Event) -> Drawn | None:
    """The event as a renderer draws it; None when it has nothing to draw (its facts are in the view model)."""
    return None if isinstance(event, QUIET) else cast(Drawn, event)
