"""How a front end says, for every kind of event, whether it draws it or leaves it quiet.

Each front end (the TUI, line mode, stream-json, ACP) states two unions beside its renderer (the two
terminal ones share theirs, below):
``Drawn``, the kinds its renderer dispatches on (``match split(event):`` over them, ending in
``assert_never``, so mypy names each renderer that says nothing about a new kind), and ``Quiet``, the
kinds it has nothing of its own to do with: they change only facts the view model holds (``ui/view.py``
folds every event; its reducers match over all of them), which the front end reads from there, as a
status bar reads a model call's usage. What one front end draws another may leave quiet: ACP sends each
model call's usage and asks each approval itself, where line mode reads the usage from the view.
``Split(Drawn, Quiet)`` gives None for a quiet event, so no renderer lists it. A new event joins one of
the two in every front end (``tests/ui/test_one_fold.py`` checks that each pair makes ``AnyEvent``).
"""

from __future__ import annotations

from typing import Generic, TypeVar, cast, get_args

from ..core.events import (ReplyStarted, ApprovalRequested, AttemptsCompared, ApprovalsWaiting, AssistantMessage, Compacted, ElicitationRequested,
                           Event, HistoryCleared, ModeChanged, Notice, ToolOutput, PlanUpdated, RawStreamEvent, Retrying, Rewound, SteerDelivered,
                           SubagentCancelling, SubagentFinished, SubagentResultDelivered, SubagentStarted,
                           SubagentSteered, SubagentWrappingUp, TextDelta, TextReset, ThinkingDelta, ToolCallFinished,
                           ToolCallStarted, ToolProgress, TurnFinished, TurnStarted, UsageUpdated, UserMessage,
                           LanguageServerWorking)

D = TypeVar("D")


class Split(Generic[D]):
    """One front end's ``Drawn`` and ``Quiet`` unions; called with an event, the event as its renderer
    draws it (typed as ``Drawn``), or None when it is quiet there."""

    def __init__(self, drawn: object, quiet: object) -> None:
        self.drawn: tuple[type[Event], ...] = get_args(drawn) or (cast(type[Event], drawn),)
        self.quiet: tuple[type[Event], ...] = get_args(quiet) or (cast(type[Event], quiet),)

    def __call__(self, event: Event) -> D | None:
        return None if isinstance(event, self.quiet) else cast(D, event)


# The two terminal front ends, the TUI (widgets/conversation.py) and line mode (plain/display.py), agree: quiet
# are a model call's usage, its reply beginning, a cancel being summed up and a language server's work, which their status bars, working lines, live lines, panel and task lines
# read from the view; they draw the rest (the questions and the inbox, each front end in a place of its own).
TerminalQuiet = (UsageUpdated | SubagentCancelling | ReplyStarted | LanguageServerWorking | ModeChanged |  # the status bar reads the mode
                      ToolOutput)  # a command's result comes when it ends
TerminalDrawn = (UserMessage | TurnStarted | TextDelta | ThinkingDelta | RawStreamEvent | TextReset | AssistantMessage |
                      ToolCallStarted | ToolCallFinished | ToolProgress | SubagentStarted | SubagentFinished |
                      SubagentSteered | SubagentWrappingUp | SubagentResultDelivered | PlanUpdated | Notice | Retrying |
                      TurnFinished | Compacted | HistoryCleared | Rewound | SteerDelivered | ApprovalsWaiting |
                      ApprovalRequested | ElicitationRequested | AttemptsCompared)
terminal = Split[TerminalDrawn](TerminalDrawn, TerminalQuiet)
