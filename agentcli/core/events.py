"""The event vocabulary between the engine and its front ends.

Every event is plain, frozen data. The engine emits them through one sink (a
plain callable); front ends render them and the session store writes them.
Subagent events carry the child's id in ``agent_id`` and the parent's
``tool_use`` id in ``parent_tool_use_id``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from .content import Message
from .subagent_report import SubagentReport as SubagentReport  # a child's one report, which SubagentFinished carries
from .usage import Usage as Usage  # tokens and cost, on events and reports
from .vocabulary import FINISHED as FINISHED
from .vocabulary import STATUSES as STATUSES
from .vocabulary import NoticeLevel as NoticeLevel
from .vocabulary import Origin as Origin
from .vocabulary import Preview as Preview
from .vocabulary import Status as Status
from .vocabulary import StepStatus as StepStatus
from .vocabulary import ToolKind as ToolKind

if TYPE_CHECKING:
    from .comparison import Attempt  # loaded by a saved best-of-N comparison (from_dict) or by attempts.py

MAIN = "main"


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Event:
    """What every event carries: the agent it comes from and, for a subagent's, the task call that started it."""

    agent_id: str = MAIN
    parent_tool_use_id: str | None = None

    # Every event compares, hashes and prints by its compared fields as a dataclass does, through these three
    # written once, not three generated for each class (eq=False, repr=False below): each generated method is a
    # compile at import, which cost the TUI's first screen about 6 ms for the 35 events.
    def __eq__(self, other: object) -> bool:
        return _compared(self) == _compared(other) if other.__class__ is self.__class__ else NotImplemented

    def __hash__(self) -> int:
        return hash(_compared(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
        return f"{self.__class__.__qualname__}({shown})"

    @classmethod
    def event_type(cls) -> str:
        """The snake_case name used as ``"type"`` in JSON: ``ToolCallStarted`` → ``tool_call_started``."""
        return _snake(cls.__name__)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, used by stream-json output and the session store."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.metadata.get("transient"):
                continue
            value = getattr(self, f.name)
            out[f.name] = value.to_dict() if isinstance(value, (Usage, SubagentReport)) else value
        return {"type": self.event_type(), **out}


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class UserMessage(Event):
    """A user-role message appended to an agent's history: the prompt, tool results, or an engine note."""

    content: list[dict[str, Any]]
    origin: Origin = "user"


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class TurnStarted(Event):
    """An agent's turn (one model call and the tools it asks for) begins."""

    turn: int = 1
    max_turns: int = 0


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class TextDelta(Event):
    """A piece of the answer the model is writing."""

    text: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ThinkingDelta(Event):
    """A piece of the model's extended thinking, as it streams (the AssistantMessage keeps it whole)."""

    text: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class RawStreamEvent(Event):
    """One event of the model's response stream as the API sent it (only when ``LLM.raw_events`` is on)."""

    event: dict[str, Any]


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ReplyStarted(Event):
    """The model API began its reply to the agent's model call (its status and headers came): until then the
    call waits for the server's first byte. Each try of a call has its own (a Retrying comes between)."""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class TextReset(Event):
    """The model call is being retried: drop the text streamed so far for this message."""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class AssistantMessage(Event):
    """The final content blocks of one assistant message, as appended to history."""

    content: list[dict[str, Any]]
    stop_reason: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ToolCallStarted(Event):
    """The model asked for a tool call; it runs now (or waits for the user's yes)."""

    id: str
    name: str
    input: dict[str, Any]
    kind: ToolKind | Literal[""] = ""  # "" for a tool that does not exist
    summary: str = ""  # the call on one line: the path, the pattern, the command, the description
    preview: Preview = ""  # how the call reads for people, as its tool declares it


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ToolCallFinished(Event):
    """A tool call ended, with what the model reads of it."""

    id: str
    name: str
    output: str
    is_error: bool
    seconds: float
    denied: bool = False  # the call never ran: a permission rule, the user, a hook or -p refused it


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ToolProgress(Event):
    """A running call's progress, as its MCP server reports it: ``progress`` of ``total`` (0 when the
    server gives none), and what it is doing."""

    id: str  # the call's tool_use id
    progress: float
    total: float = 0.0
    message: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ToolOutput(Event):
    """A running command's output so far (bash), cut as its result would be: for a front end that shows it live
    (ACP). Not stored: the call's result holds it all."""

    id: str  # the call's tool_use id
    text: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class UsageUpdated(Event):
    """Usage of one model call (``usage``) and the agent's running total (``total``)."""

    usage: Usage
    total: Usage
    model: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class SubagentStarted(Event):
    """A subagent began an errand (the task tool)."""

    id: str
    subagent_type: str  # the agent type, e.g. "general-purpose"
    description: str
    prompt: str
    max_turns: int = 0
    background: bool = False  # task run_in_background: the parent went on without waiting
    segment: int = 1  # 1 for the first run; 2, 3 … each time `task resume` continues this child
    token_budget: int = 0  # tokens (as its footer counts them) at which it is asked to wrap up; 0: none
    cost_budget: float = 0.0  # likewise in USD; 0: none
    model: str = ""  # the model id it runs on; effort: its own effort level ("": the session's)
    effort: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class SubagentFinished(Event):
    """A subagent ended its errand, with its answer."""

    id: str
    status: Status
    result: str  # the child's answer, clean: the footer the model sees is added to the tool result only
    turns: int
    usage: Usage
    seconds: float
    summarized: bool = False  # cut off (turns, time, cancel), it made one more call to sum up what it found
    wrapped_up: bool = False  # asked to wrap up (by the user, the main agent or a budget), it answered without tools
    report: SubagentReport | None = None  # the whole report, receipt included (None in older sessions)


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class AttemptsCompared(Event):
    """The attempts of one best-of-N errand (task with ``attempts``: engine/attempts.py) side by side, once all ended."""

    description: str
    check: str  # the command each ran in its own worktree ("" for none)
    attempts: tuple[Attempt, ...]


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class SubagentCancelling(Event):
    """The user asked to cancel subagent ``id``: it stops, and sums up what it found, before it finishes."""

    id: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class SubagentSteered(Event):
    """A message for running subagent ``id``, from ``source`` ("user" or "main agent"): it reads it at its
    next turn boundary."""

    id: str
    source: str
    text: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class SteerDelivered(Event):
    """What the user sent into the main agent's running turn (``texts``, as typed) was added to its history
    after the tool results, before its next model call; the ``UserMessage`` (origin "steered") that follows
    carries it as the model reads it."""

    texts: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class SubagentWrappingUp(Event):
    """Subagent ``id`` is asked to finish now: at its next turn boundary it answers, without tools, with
    what it has. ``reason`` says who asked or which budget it reached."""

    id: str
    reason: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class SubagentResultDelivered(Event):
    """A background child's result was added to the main agent's history, before its next model call.

    Emitted by the main agent (``agent_id`` "main") just before the ``UserMessage`` (origin "subagent")
    that carries the result; front ends draw it as a line where the result arrived.
    """

    id: str
    status: Status
    description: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ApprovalRequested(Event):
    """A tool call waits for the user. The front end resolves ``future`` with an Approval.

    The engine asks one question at a time (it keeps the queue): the next comes only after this
    ``future`` is done, answered by the front end or cancelled because the call was."""

    tool: str
    input: dict[str, Any]
    description: str = ""
    reason: str = ""  # why it needs a yes, e.g. "files in .git/ are protected"; "" when nothing unusual
    rules: tuple[str, ...] = ()  # what allow-for-session / always-allow record; empty: they count once
    diff: tuple[str, ...] = ()  # the file change it would make, as ``core.tools.preview.file_diff`` lines
    tool_use_id: str = ""  # the call that asks
    preview: Preview = ""  # how the call reads for people, as its tool declares it (ToolCallStarted.preview)
    future: asyncio.Future[str | Approval] | None = field(default=None, compare=False, metadata={"transient": True})


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ElicitationRequested(Event):
    """An MCP server asks the user something (elicitation). The front end resolves ``future`` with a
    dict of the answer's fields (accept), or with "decline" or "cancel".

    ``fields``: the answer's fields from the server's schema, each (name, type, title, required, choices):
    type is string, number, integer or boolean; choices lists an enum's values. ``url``: in URL mode,
    the page the user is asked to open; there are no fields then."""

    server: str
    message: str
    fields: tuple[tuple[str, str, str, bool, tuple[str, ...]], ...] = ()
    url: str = ""
    future: asyncio.Future[dict[str, Any] | str] | None = field(
        default=None, compare=False, metadata={"transient": True}
    )


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class PlanUpdated(Event):
    """An agent wrote its plan (``todo_write``): every item, in order, each a dict of ``content``,
    ``status`` (pending | in_progress | completed) and ``active_form`` (the item as it is being done)."""

    items: list[dict[str, str]]


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ApprovalsWaiting(Event):
    """The approval inbox changed: ``agents`` are the agents whose calls wait for the user, in the order
    they asked (the first is the question shown now), with ``descriptions`` their errands ("" for the
    main agent). Empty when none waits. Front ends show the count and mark those children "waiting for
    you"; it is not stored (``agent_id`` is the agent whose call joined or left)."""

    agents: tuple[str, ...] = ()
    descriptions: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class LanguageServerWorking(Event):
    """What a language server says it works on (LSP's ``$/progress``): "indexing: python 40 %"; "" when it
    has nothing left in progress. Front ends show it in the status line; it is not stored."""

    text: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Notice(Event):
    """A line for the user: information, a warning or an error."""

    level: NoticeLevel
    text: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Retrying(Event):
    """A model call failed in a way worth another try; the next one comes after ``delay`` seconds."""

    attempt: int
    retries: int
    delay: float
    error: str

    @property
    def text(self) -> str:
        return f"{self.error} Retrying in {self.delay:.0f} s ({self.attempt}/{self.retries})."


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class HistoryCleared(Event):
    """/clear: the conversation starts afresh; ``messages`` is the new (empty) history."""

    messages: list[Message] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Rewound(HistoryCleared):
    """/rewind of the conversation: ``messages`` is the history as it was before prompt ``to_prompt``,
    whose text ``prompt`` front ends offer back for editing."""

    to_prompt: int = 0
    prompt: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ModeChanged(Event):
    """The permission mode became ``mode`` (/permissions, shift+tab, an editor's mode picker). Stored, so a
    session loaded again in an editor (ACP's session/load) goes on in the mode it had."""

    mode: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class TurnFinished(Event):
    """An agent's turn ended, and why."""

    stop_reason: str | None


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Compacted(Event):
    """Older turns were replaced by a summary to free context."""

    messages_summarized: int
    tokens_before: int
    tokens_after: int
    summary: str
    messages: list[Message]  # the whole new history; resume starts from here
    reason: str = ""  # why: "the context was nearly full", "the prompt was too long", "asked for"
    trigger: Literal["auto", "manual"] = "auto"  # manual: the user asked for it (/compact)
    ledger: dict[str, Any] = field(default_factory=dict)  # agentcli's record of the calls so far, for a resume


# The answers a front end may give to an ApprovalRequested future.
ALLOW_ONCE = "allow_once"
ALLOW_SESSION = "allow_session"
ALLOW_AGENT = "allow_agent"  # for the rest of the session, for the asking subagent only
ALLOW_ALWAYS = "allow_always"
DENY = "deny"


@dataclass(frozen=True)
class Approval:
    """An answer with more to it than one of the words above: a host program's (the Agent SDK's
    ``can_use_tool``), which may change the call's input or tell the model why it said no; or a user's
    "no" with the reason they typed (``Approval(DENY, reason=…)``), which the model reads after agentcli's
    sentence that the call was denied."""

    answer: str  # ALLOW_ONCE, ALLOW_SESSION or DENY
    input: dict[str, Any] | None = None  # allowed, with this input instead of the model's
    message: str = ""  # denied: what the model is told (all of it, in place of agentcli's sentence)
    reason: str = ""  # denied: why, in the user's own words


Sink = Callable[[Event], None]

# Every kind of event, which the store reads back by its ``"type"`` (``event_from_dict``): a new event goes here
# (tests/core/test_event_contract.py checks that each subclass does). The view model folds the kinds it holds a
# fact of, and says what kind of change each is to the front ends (ui/change.py); none names the others.
AnyEvent = (
    UserMessage
    | TurnStarted
    | ReplyStarted
    | TextDelta
    | ThinkingDelta
    | RawStreamEvent
    | TextReset
    | AssistantMessage
    | ToolCallStarted
    | ToolCallFinished
    | ToolProgress
    | ToolOutput
    | ElicitationRequested
    | UsageUpdated
    | SubagentStarted
    | SubagentFinished
    | SubagentCancelling
    | SubagentSteered
    | SteerDelivered
    | AttemptsCompared
    | SubagentWrappingUp
    | SubagentResultDelivered
    | ApprovalRequested
    | ApprovalsWaiting
    | PlanUpdated
    | Notice
    | Retrying
    | TurnFinished
    | Compacted
    | HistoryCleared
    | Rewound
    | LanguageServerWorking
    | ModeChanged
)


EVENT_TYPES: dict[str, type[Event]] = {}


def _compared(event: Event) -> tuple[Any, ...]:
    """An event's fields that take part in comparing it, in order (the tuple a dataclass's ``__eq__`` compares)."""
    return tuple(getattr(event, f.name) for f in dataclasses.fields(event) if f.compare)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def _register() -> None:
    for cls in get_args(AnyEvent):
        EVENT_TYPES[_snake(cls.__name__)] = cls


_register()


def event_from_dict(data: dict[str, Any]) -> Event | None:
    """Rebuild an event written by ``Event.to_dict``; None for unknown records."""
    cls = EVENT_TYPES.get(data.get("type", ""))
    if cls is None:
        return None
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("transient"):
            continue
        if f.name in data:
            value = data[f.name]
            if f.name in ("usage", "total"):
                value = Usage.from_dict(value)
            elif f.name == "report":
                value = SubagentReport.from_dict(value)
            elif f.name == "attempts" and isinstance(value, list):
                from .comparison import Attempt

                value = tuple(a for a in map(Attempt.from_dict, value) if a is not None)
            kwargs[f.name] = value
    try:
        return cls(**kwargs)
    except TypeError:
        return None


def kept_out(events: list[Event]) -> int:
    """Tokens a subagent kept out of the main context, from its events: what its own context held at its
    latest model call (0 before its first). The one definition of "kept out of main context"."""
    return next((e.usage.context_tokens for e in reversed(events) if isinstance(e, UsageUpdated)), 0)
