"""The view model every front end renders: one reducer fed live or replayed engine events.

``SessionView.apply(event, now)`` folds each event into plain state: the main transcript (messages,
tool calls with their output, subagents starting and ending, notes and dividers), the subagents
(status, turns, tokens, time, tool calls, changed files, their own transcript and events), the
facts of the status bar (tokens, cost, context fill, tokens kept out of the main context), each
agent's latest model call and run of retries, every agent's calls (the open ones, the refused ones).
The transcripts are ``ui/transcript.py``'s. Front ends fold each event here first and draw from what
it holds, so no renderer counts the same events again. It knows no framework; ``now`` is the
caller's clock (a replay passes each record's time), so the same events give the same view in a
test, the TUI, line mode, stream-json and ``agentcli sessions show``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.events import (
    FINISHED,
    MAIN,
    ApprovalsWaiting,
    AttemptsCompared,
    Compacted,
    Event,
    HistoryCleared,
    LanguageServerWorking,
    PlanUpdated,
    ReplyStarted,
    Retrying,
    Status,
    SubagentCancelling,
    SubagentFinished,
    SubagentReport,
    SubagentResultDelivered,
    SubagentStarted,
    SubagentWrappingUp,
    TextDelta,
    TextReset,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageUpdated,
    kept_out,
)
from .change import Change, Quiet, change_of
from .escapes import visible, visible_event
from .format import money, seconds, tokens
from .plan import PlanStep, plan_steps
from .retry import Retry
from .transcript import Divider, Said, ToolView, Transcript, progress_text

if TYPE_CHECKING:
    from ..core.door import SubagentRecord

__all__ = [
    "SessionView",
    "StatusFacts",
    "Subagent",
    "ToolView",
    "Transcript",
    "latest_context",
    "progress_text",
    "seconds",
    "tokens",
]

STALL_SECONDS = 60.0  # a running subagent this long without any event is flagged (the setting's default)


def latest_context(events: list[Event]) -> int:
    """How much an agent's context held at its latest model call, from its events (0 before its first)."""
    return kept_out(events)


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
    report: SubagentReport | None = None  # once finished: its answer and receipt, as the engine built them
    transcript: Transcript = field(default_factory=Transcript)
    files_changed: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # everything it did, for the transcript
    retrying: Retry | None = None  # while its model call is being retried
    output_chars: int = 0  # tool output it read, which never reached the parent
    cancelling: bool = False  # the user cancelled it; it is summing up before it finishes
    wrapping_up: bool = False  # asked to finish now (by the user, the main agent or a budget): it answers next
    token_budget: int = 0  # tokens at which it is asked to wrap up (0: none); ``tokens`` is its use against it
    cost_budget: float = 0.0  # likewise in USD, against ``cost``
    cost: float = 0.0  # what it has spent so far, where the price is known
    summarized: bool = False  # cut off, it made one more call (not a turn) to sum up
    last_progress: float = 0.0  # the caller's clock at its latest event: stream data, a tool call, a turn
    context_tokens: int = 0  # how much its own context held at its latest model call (real count)
    background: bool = False  # its latest run was started with run_in_background
    segment: int = 1  # which run: 2, 3 … after each `task resume` (the same entry, a new segment)
    calls: list[str] = field(default_factory=list)  # the task call ids of all its runs
    turns_before: int = 0  # turns of its earlier runs: a resume counts on from them
    run_calls: int = 0  # tool calls of its latest run alone (a resume counts from 0 again)
    run_tokens: int = 0  # tokens of its latest run's model calls alone
    seconds_before: float = 0.0  # time of its earlier runs
    plan: list[PlanStep] = field(default_factory=list)  # its latest todo_write
    waiting_for_you: bool = False  # a call of its waits in the approval inbox
    model: str = ""  # the model id it runs on (a task call may choose one)

    @classmethod
    def started_by(cls, event: SubagentStarted, now: float) -> Subagent:
        return cls(
            id=event.id,
            type=event.subagent_type,
            description=event.description,
            prompt=event.prompt,
            tool_use_id=event.parent_tool_use_id,
            max_turns=event.max_turns,
            started=now,
            last_progress=now,
            background=event.background,
            token_budget=event.token_budget,
            cost_budget=event.cost_budget,
            model=event.model,
            calls=[c for c in [event.parent_tool_use_id] if c],
            status="queued",
        )  # until its first turn: it may wait for a free slot

    @classmethod
    def from_record(cls, record: SubagentRecord) -> Subagent:
        """A subagent restored by resume: its events replayed, then its final facts from the record."""
        agent = cls(
            id=record.id,
            type=record.type,
            description=visible(record.description),
            prompt=visible(record.prompt),
            tool_use_id=record.tool_use_id,
            max_turns=record.max_turns,
            background=record.background,
            model=record.model,
        )
        for event in record.events:
            agent.apply(visible_event(event), 0.0)
        agent.status = record.status
        agent.result = visible(record.result or "") or agent.result
        agent.report = record.report or agent.report
        agent.turn = max(agent.turn, record.turns)
        agent.tokens = record.usage.total_tokens or agent.tokens
        agent.seconds = record.seconds
        return agent

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def retry(self) -> str:
        """ "retrying 3/8" while its model call is being retried; "" otherwise."""
        return self.retrying.word if self.retrying is not None else ""

    @property
    def mark(self) -> str:
        """ "unverified" or "no answer" once its report says so; "" otherwise."""
        return self.report.mark if self.report is not None and self.finished else ""

    @property
    def tools(self) -> dict[str, ToolView]:
        """Its tool calls by id, in the order it made them."""
        return self.transcript.calls

    @property
    def latest_call(self) -> str:
        """The latest tool call it made, as name and summary; "" before its first."""
        latest = next(reversed(self.tools.values()), None)
        return f"{latest.name} {latest.summary}".strip() if latest else ""

    @property
    def tokens_kept_out(self) -> int:
        """The engine's one number (``core.events.kept_out``): what its own context held at its latest call."""
        return self.context_tokens

    def stalled_for(self, now: float, after: float = STALL_SECONDS) -> float | None:
        """Seconds without stream data or tool progress, once that is at least ``after``; None otherwise.

        A tool call still running is progress (tools have their own time limits), and so is waiting for a slot
        or for the user's answer to an approval.
        """
        if (
            self.status != "running"
            or self.cancelling
            or self.wrapping_up
            or self.waiting_for_you
            or any(t.status == "running" for t in self.tools.values())
        ):
            return None
        quiet = now - self.last_progress
        return quiet if quiet >= after else None

    def state(self, now: float, stall_after: float = STALL_SECONDS) -> str:
        """Its state in words for an entry: 'cancelling…', 'retrying 3/8', 'no progress for 75s', or its status."""
        if self.cancelling and not self.finished:
            return "cancelling…"
        if self.wrapping_up and not self.finished:
            return "wrapping up…"
        if self.retry:
            return self.retry
        if self.waiting_for_you and not self.finished:
            return "waiting for you"
        quiet = self.stalled_for(now, stall_after)
        if quiet is not None:
            return f"no progress for {seconds(quiet)}"
        return f"{self.status} · {self.mark}" if self.mark else self.status

    def elapsed(self, now: float) -> float:
        return self.seconds if self.seconds is not None else self.seconds_before + max(0.0, now - self.started)

    def recent_tools(self, n: int = 5) -> list[ToolView]:
        return list(self.tools.values())[-n:]

    def resume(self, event: SubagentStarted, now: float) -> None:
        """A later run of this child (``task resume``): the same entry, counting on from the earlier runs."""
        self.segment, self.background = event.segment, event.background  # the brief stays the first run's
        self.status, self.result, self.retrying, self.report = "queued", "", None, None
        self.cancelling = self.summarized = self.wrapping_up = False
        self.token_budget, self.cost_budget = event.token_budget, event.cost_budget
        self.turns_before, self.seconds_before = self.turn, self.elapsed(now)
        self.run_calls = self.run_tokens = 0
        self.started, self.seconds = now, None
        self.tool_use_id = event.parent_tool_use_id
        if event.parent_tool_use_id and event.parent_tool_use_id not in self.calls:
            self.calls.append(event.parent_tool_use_id)

    def apply(self, event: Event, now: float) -> None:
        self.events.append(event)
        if not isinstance(event, (SubagentStarted, SubagentFinished)):  # its own transcript starts at the brief
            self.transcript.apply(event, now)
        self.last_progress = now
        self.retrying = Retry.fold(self.retrying, event)
        match event:
            case SubagentStarted() as started if started.segment > 1:
                self.transcript.items.append(Divider("rerun", description=started.description))
                self.resume(started, now)
            case SubagentStarted() as started:
                if started.parent_tool_use_id and not self.calls:
                    self.calls.append(started.parent_tool_use_id)
            case SubagentCancelling():
                self.cancelling = True
            case SubagentWrappingUp():
                self.wrapping_up = True
            case ToolCallStarted():
                self.run_calls += 1
            case UsageUpdated() as used:
                self.run_tokens += used.usage.total_tokens
                self.tokens = used.total.total_tokens
                self.cost = used.total.cost or 0.0
                self.context_tokens = used.usage.context_tokens
            case PlanUpdated() as planned:
                self.plan = plan_steps(planned)
            case TurnStarted() as turn:
                self.turn = self.turns_before + turn.turn
                self.max_turns = self.turns_before + turn.max_turns if turn.max_turns else self.max_turns
                if self.status == "queued":
                    self.status = "running"
            case ToolCallFinished() as finished:
                self.output_chars += len(finished.output)
                tool = self.tools[finished.id]
                path = tool.input.get("path")
                if tool.kind == "edit" and not finished.is_error and path and str(path) not in self.files_changed:
                    self.files_changed.append(str(path))
            case SubagentFinished() as ended:
                self.status = ended.status
                self.result = ended.result
                self.report = ended.report
                self.turn = max(self.turn, ended.turns)
                self.tokens = ended.usage.total_tokens or self.tokens
                self.seconds = ended.seconds
                self.summarized = ended.summarized
            case _:
                pass  # in its transcript only


@dataclass(frozen=True)
class StatusFacts:
    """What a status bar shows: what the user chose (model, mode, busy) and what the events said."""

    model: str
    mode: str
    tokens: int
    cost: str
    context_used: int
    context_window: int
    kept_out: int
    busy: bool = False
    no_key: bool = False
    servers_working: str = ""  # what a language server says it works on: "indexing: python 40 %"


@dataclass
class SessionView:
    """A session as its front ends show it: the main transcript, the subagents, the status-bar facts."""

    subagents: dict[str, Subagent] = field(default_factory=dict)
    transcript: Transcript = field(default_factory=Transcript)  # the main agent's
    main_usage: Usage = field(default_factory=Usage)  # the main agent's running total
    context_used: int = 0  # tokens the main context held at its latest call
    model: str = ""
    stall_after: float = STALL_SECONDS  # the subagent_stall_seconds setting
    # Background children that finished and whose result the main agent has not read yet. While the main
    # agent is idle and this is not empty, a front end starts a turn with Session.read_results().
    results_waiting: list[str] = field(default_factory=list)
    plan: list[PlanStep] = field(default_factory=list)  # the main agent's latest todo_write; /clear drops it
    servers_working: str = ""  # the latest LanguageServerWorking's text
    # The approval inbox: who waits for the user's answer, in the order they asked, and their errands.
    approvals: list[tuple[str, str]] = field(default_factory=list)
    latest_usage: dict[str, UsageUpdated] = field(default_factory=dict)  # each agent's latest model call, by id
    streamed: int = 0  # characters the main agent's current model call has streamed (0 between calls)
    # Since when the main agent's model call waits for the server's reply to begin (None: it began, or no call);
    # the caller's clock, as ``apply``'s ``now``. A retry waits anew from the end of its pause.
    awaiting_reply: float | None = None
    main_retry: Retry | None = None  # while the main agent's model call is being retried
    retried: tuple[str, Retry] | None = None  # the run of retries the latest event ended: (agent id, the run)
    status_changed: bool = False  # the latest event changed what a status bar or line shows
    change: Change = field(default_factory=lambda: Quiet(Event()))  # what the latest event changed, for renderers
    calls: dict[str, ToolView] = field(default_factory=dict)  # every agent's calls by id, in the order they started
    refused: list[ToolView] = field(default_factory=list)  # every agent's refused calls, in the order they ended
    comparisons: list[AttemptsCompared] = field(default_factory=list)  # best-of-N errands' comparisons (-p json)

    def apply(self, event: Event, now: float) -> Subagent | None:
        """Fold one event in; returns the subagent it concerned, if any.

        A subagent's start and end go into the main transcript too; the main agent's events into it and
        the session's facts (``main_facts``); a subagent's into its own ``Subagent``; every agent's tool calls
        into ``calls`` and ``refused`` too. Afterwards ``retried`` says whether the event ended an agent's run
        of retries, ``status_changed`` whether it changed the status facts: the tokens and cost (any
        agent's model call, a child's end), the main context, which subagents run; and ``change`` what kind of
        change it is for the renderers (``ui/change.py``)."""
        self.retried = None
        self.status_changed = isinstance(event, (UsageUpdated, SubagentStarted, SubagentFinished))
        concerned = self.fold(event, now)
        self.change = change_of(event, self.status_changed)
        return concerned

    def fold(self, event: Event, now: float) -> Subagent | None:
        """``apply``'s fold of the event into the view's state; returns the subagent it concerned, if any."""
        match event:
            case ApprovalsWaiting() as waiting:
                self.approvals = list(zip(waiting.agents, waiting.descriptions, strict=False))
                for agent in self.subagents.values():
                    waits = agent.id in waiting.agents
                    if agent.waiting_for_you and not waits:
                        agent.last_progress = now  # the wait was the user's: the stall clock starts again
                    agent.waiting_for_you = waits
                return self.subagents.get(waiting.agent_id)
            case SubagentStarted() as started:
                self.transcript.apply(started)
                if started.id not in self.subagents:
                    self.subagents[started.id] = Subagent.started_by(started, now)
                    return self.subagents[started.id]
                if started.id in self.results_waiting:
                    self.results_waiting.remove(
                        started.id
                    )  # resumed before its result was read: this run's replaces it
            case SubagentFinished() as ended:
                known = self.subagents.get(ended.id)
                if known is not None and known.background:
                    self.results_waiting.append(ended.id)
                if ended.agent_id != MAIN:
                    self.transcript.apply(ended)
            case SubagentResultDelivered(id=agent_id) if agent_id in self.results_waiting:
                self.results_waiting.remove(agent_id)
            case UsageUpdated() as used:
                self.latest_usage[used.agent_id] = used
            case _:
                pass  # the main agent's or a subagent's own, below
        if event.agent_id == MAIN:
            self.transcript.apply(event, now)
            run, self.main_retry = self.main_retry, Retry.fold(self.main_retry, event)
            self.main_facts(event, now)
            self.retried = (MAIN, run) if run is not None and self.main_retry is None else None
            self.call_facts(event, self.transcript)
            return None
        child = self.subagents.get(event.agent_id)
        if child is not None:
            run = child.retrying
            child.apply(event, now)
            self.retried = (child.id, run) if run is not None and child.retrying is None else None
            self.call_facts(event, child.transcript)
        return child

    @classmethod
    def replaying(cls, events: Sequence[Event]) -> SessionView:
        """A fresh view to replay past ``events`` into, each subagent they are of known from the first: a
        subagent's own events (its transcript's) lack the start its parent saw."""
        view = cls()
        for agent_id in dict.fromkeys(event.agent_id for event in events if event.agent_id != MAIN):
            view.subagents[agent_id] = Subagent(agent_id, "", "")
        return view

    def call_facts(self, event: Event, transcript: Transcript) -> None:
        """A call the agent's transcript now holds, started or ended: into the session's own lists."""
        if isinstance(event, (ToolCallStarted, ToolCallFinished)):
            call = self.calls[event.id] = transcript.calls[event.id]
            if isinstance(event, ToolCallFinished) and call.denied:
                self.refused.append(call)

    def open_calls(self, agent_id: str | None = None) -> list[ToolView]:
        """Calls started and not finished, of every agent or of ``agent_id``, in the order they started."""
        return [call for call in self.calls.values() if call.status == "running" and agent_id in (None, call.agent_id)]

    def said_since(self, items: int) -> list[str]:
        """The main agent's texts in its transcript from the ``items``-th item on (a front end's mark)."""
        return [
            item.text for item in self.transcript.items[items:] if isinstance(item, Said) and item.role == "assistant"
        ]

    def main_facts(self, event: Event, now: float = 0.0) -> None:
        """The main agent's event, into the status bar's facts, the working line's count and wait, and its plan."""
        match event:
            case UsageUpdated() as used:
                self.main_usage, self.context_used = used.total, used.usage.context_tokens
                self.model = used.model or self.model
                self.streamed = 0  # counted now
            case TextDelta(text=text):
                self.streamed += len(text)
            case TextReset():
                self.streamed = 0
            case TurnStarted():
                self.streamed, self.awaiting_reply = 0, now
            case TurnFinished():
                self.streamed, self.awaiting_reply = 0, None
            case Retrying(delay=delay):  # the next try waits anew, after the pause
                self.awaiting_reply = now + delay
            case ReplyStarted():
                self.awaiting_reply = None
            case Compacted(tokens_after=after):
                self.context_used, self.status_changed = after, True
            case HistoryCleared():  # and Rewound
                self.context_used, self.plan, self.status_changed = 0, [], True
            case PlanUpdated() as planned:
                self.plan = plan_steps(planned)
            case AttemptsCompared() as compared:
                self.comparisons.append(compared)
            case LanguageServerWorking(text=text):
                self.servers_working, self.status_changed = text, True
            case _:
                pass  # no fact of the status bar (the front end reads the mode from the session)

    def status(
        self, *, model: str, mode: str, context_window: int, busy: bool = False, no_key: bool = False
    ) -> StatusFacts:
        """The status bar: the settings the front end passes, and the counts from the events."""
        usage = self.usage
        return StatusFacts(
            model=model,
            mode=mode,
            tokens=usage.total_tokens,
            cost=money(usage),
            context_used=self.context_used,
            context_window=context_window,
            kept_out=self.tokens_kept_out,
            busy=busy,
            no_key=no_key,
            servers_working=self.servers_working,
        )

    def restore(self, records: list[SubagentRecord], main_events: Sequence[Event] = ()) -> None:
        """A resumed session: the subagents from their records, the main agent from its events."""
        for record in records:
            self.subagents[record.id] = Subagent.from_record(record)
        for event in main_events:
            self.apply(event, 0.0)

    def for_call(self, tool_use_id: str) -> Subagent | None:
        """The subagent started by the task call ``tool_use_id``."""
        return next(
            (
                agent
                for agent in self.subagents.values()
                if agent.tool_use_id == tool_use_id or tool_use_id in agent.calls
            ),
            None,
        )

    def inbox_line(self) -> str:
        """The approval inbox in one line, "" when it is empty: "2 approvals wait: sa-1 (Find auth), main agent"."""
        if not self.approvals:
            return ""
        who = ", ".join(
            "main agent" if agent == MAIN else f"{agent} ({errand})" if errand else agent
            for agent, errand in self.approvals
        )
        count = len(self.approvals)
        return f"{count} approval{'s' if count > 1 else ''} wait{'s' if count == 1 else ''}: {who}"

    @property
    def retries(self) -> dict[str, Retry]:
        """Every agent whose model call is being retried now, by id: the main agent first."""
        runs = {MAIN: self.main_retry} if self.main_retry is not None else {}
        return runs | {agent.id: agent.retrying for agent in self.subagents.values() if agent.retrying is not None}

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

    @property
    def subagent_context(self) -> int:
        """What the subagents' own contexts held: had the main agent done their work, its context would hold it."""
        return self.tokens_kept_out
