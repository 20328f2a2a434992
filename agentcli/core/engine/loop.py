"""The agent loop: one loop for the main agent and every subagent.

Each turn calls the model, streams its events out, runs the tool calls it asked
for, and appends their results. Invariant: every ``tool_use`` gets exactly one
``tool_result`` in the next user message, whatever happens (errors, cancellation,
unknown tools), so the history is always one the API accepts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..content import Block, Message, agentcli_note, append_user, has_tool_use, quoted_all, quoted_kept, text_of
from ..events import (
    AssistantMessage,
    Event,
    Notice,
    Origin,
    RawStreamEvent,
    ReplyStarted,
    Retrying,
    Status,
    SteerDelivered,
    TextDelta,
    TextReset,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageUpdated,
    UserMessage,
)
from ..model.llm import LLM, LLMError, ModelReply, one_line
from ..tools import ToolRegistry, web_search
from ..tools.base import ToolContext, ToolOutcome
from ..tools.on_demand import Offer, refused_by_endpoint
from . import compaction
from .steering import Steers

API_SEARCH_REFUSED = (
    "The model server refused the API's tool search ({error}); agentcli offers its own "
    "tool_search instead for this session."
)

INTERRUPTED = "Interrupted: the user stopped this call before it finished."
CUT_OFF = (
    "Your last reply hit the output token limit in the middle of a tool call, so the call was not run. "
    "Make the call again with less input, for example by splitting the work into smaller steps."
)
# What a reply cut off without a tool call once left in the history (sessions saved before it was asked for again
# whole, llm._with_partial): history.py still reads it as agentcli's.
BROKEN_OFF = "(Your reply above was cut off by a connection error. Continue from where it stopped.)"
STOPPED = "The user interrupted your turn here, before it finished."
REFUSED = "The model declined to answer this request (stop reason: refusal)."


# What one model call means for the loop: an answer, tool calls to run, call again (the model was told
# why: its reply was cut off, or the server paused a long turn), or a refusal.
Outcome = Literal["answer", "tool_calls", "again", "refused"]


@dataclass
class RunResult:
    text: str  # the final assistant text
    status: Status  # done | capped | refused
    turns: int


@dataclass(frozen=True)
class Turn:
    """One model call's reply as appended to history, and what it means for the loop."""

    content: list[dict[str, Any]]
    outcome: Outcome
    refused: dict[str, str] = field(default_factory=dict)  # malformed calls (ToolRegistry.checked), by id


class Agent:
    """A model, a history, tools and budgets. Subagents are Agents with their own state."""

    def __init__(
        self,
        *,
        llm: LLM,
        tools: ToolRegistry,
        ctx: ToolContext,
        system: str,
        max_turns: int,
        model: str | None = None,
        messages: list[Message] | None = None,
        turns: int = 0,
        usage: Usage | None = None,
        compact_threshold: float,
        effort: str | None = None,
    ) -> None:
        self.llm, self.tools, self.ctx, self.system = llm, tools, ctx, system
        self.max_turns = max_turns
        self.model = model or llm.model
        self.effort = effort  # its own effort level (a subagent's, from task); None: the session's (--effort)
        self.messages: list[Message] = messages if messages is not None else []
        self.turns = turns  # model calls made, over the agent's whole life
        self.usage = usage or Usage()
        self.last_usage = Usage()  # of the latest call: how full the context is
        self.compact_threshold = compact_threshold  # share of the window that triggers compaction
        self.compactions_in_a_row = 0
        self.compact_hold = 0  # no automatic compaction below this many tokens (compaction.when_full)
        self.ledger = compaction.Ledger()  # what compactions summarized, as agentcli recorded it
        # What to add as a user message before each model call: the results of background subagents.
        self.inbox: Callable[[], list[dict[str, Any]]] | None = None
        # What to tell the model before each call of a change in the session (mode_note.py): the main agent's.
        self.notes: Callable[[Agent], list[dict[str, Any]]] | None = None
        # What the user sent into the running turn (steering.py), read after the tool results: the main agent's.
        self.steers = Steers()
        self.offer = Offer()  # the tools its requests carry, and those it loaded on demand (tools/on_demand.py)
        # What a SubagentStop hook reads besides the answer (its transcript, its receipt so far): a child's.
        self.stop_fields: Callable[[str], dict[str, Any]] | None = None

    # The one place a request's system prompt and tools are made (the summarizer's too, compaction.py): what outside
    # text they carry (an instruction file, an MCP server's or an agent file's descriptions) is quoted here.
    def offered(self) -> list[dict[str, Any]]:
        """The ``tools`` of this agent's next request: its core, and the rest as its route reaches them."""
        if web_search.NAME in self.tools and (why := web_search.withheld_by(self.ctx.permissions, self.ctx.hooks)):
            self.tools.remove(web_search.NAME)  # a rule that names it came mid-session (/permissions): from now on
            self.llm.web_search_off = why
        tools: list[dict[str, Any]] = quoted_all(
            self.offer.request_tools(self.tools, self.llm.tool_search, self.messages)
        )
        return tools

    def request_system(self) -> str:
        """The ``system`` of this agent's next request: its prompt, and the index of the tools its route defers."""
        index = self.offer.system_index(self.tools, self.llm.tool_search)
        return quoted_kept("\n\n".join(part for part in (self.system, index) if part))

    @property
    def agent_id(self) -> str:
        return self.ctx.agent_id

    def emit(self, event_type: type[Event], **fields: Any) -> None:
        self.ctx.emit(event_type(agent_id=self.ctx.agent_id, parent_tool_use_id=self.ctx.parent_tool_use_id, **fields))

    async def run(
        self, prompt: str | None, context: tuple[str, ...] = (), attachments: list[dict[str, Any]] | None = None
    ) -> RunResult:
        """Work on ``prompt`` (with the image blocks attached, and ``context``, notes of what hooks added) until the
        model answers without tools and no Stop hook objects, or the turn cap. None: no new user text; the
        inbox holds what there is to read (background results)."""
        if prompt is not None:
            typed = [{"type": "text", "text": prompt}] if prompt or not attachments else []  # images alone: no text
            self.add_user([*typed, *(attachments or []), *(agentcli_note(text) for text in context)])
        try:
            return await self.turns_until_answer()
        except asyncio.CancelledError:
            self.add_user([agentcli_note(STOPPED)], origin="interrupt")  # so the next call knows it was stopped
            raise

    async def turns_until_answer(self) -> RunResult:
        stop_hook_active = False
        for _ in range(self.max_turns):
            turn = await self.call_model()
            if turn.outcome == "refused":
                return RunResult(REFUSED, "refused", self.turns)
            if turn.outcome == "answer":
                hooks = self.ctx.hooks  # a Stop hook may send the model back to work, once
                answer = final_text(turn.content)
                extra = functools.partial(self.stop_fields, answer) if self.stop_fields else None  # a child's receipt
                objection = await hooks.objection(self.ctx.depth > 0, stop_hook_active, answer, extra) if hooks else ""
                if not objection:
                    return RunResult(final_text(turn.content), "done", self.turns)
                stop_hook_active = True
                self.add_user([agentcli_note(objection)], origin="engine")
            if turn.outcome == "tool_calls" and await self.run_tools(
                [b for b in turn.content if b["type"] == "tool_use"], turn.refused
            ):
                return RunResult(self.last_text(), "done", self.turns)  # a hook said "continue": false
        return RunResult(self.last_text(), "capped", self.turns)

    async def call_model(
        self,
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        counted: bool = True,
    ) -> Turn:
        """One model call: streams text out and appends the assistant message. Uncounted: not a turn.
        ``tools``: these instead of the agent's own (``offered``). What changed since the last call goes after the
        latest message, so the request repeats that call's beginning."""
        if self.notes is not None and (said := self.notes(self)):
            self.add_user(said, origin="state")
        if joined := self.offer.joined(self.tools, self.llm.tool_search):  # a note, so the tools stay as cached
            self.add_user([agentcli_note(joined)], origin="state")
        if carried := self.offer.carried(self.tools, self.llm.tool_search, self.messages):  # likewise
            self.add_user([agentcli_note(carried)], origin="state")
        if self.inbox is not None and (arrived := self.inbox()):
            self.add_user(arrived, origin="subagent")
        if self.steers:
            self.emit(SteerDelivered, texts=tuple(text for _, text in self.steers.waiting))
            self.add_user(self.steers.take_notes(users_own=True), origin="steered")
        await compaction.when_full(self)
        if counted:  # a cut-off subagent's closing summary is not one of its turns
            self.turns += 1
            self.emit(TurnStarted, turn=self.turns, max_turns=self.max_turns)
        try:
            reply = await self.stream(tools, tool_choice)
            if reply.stop_reason == "max_tokens" and has_tool_use(reply.content):
                # Never run a call whose input was cut off; retry once with room to finish it.
                if final_text(reply.content):
                    self.emit(TextReset)
                reply = await self.stream(tools, tool_choice, max_tokens=self.llm.max_tokens * 2)
        except asyncio.CancelledError:
            self.emit(TurnFinished, stop_reason="cancelled")
            raise
        except LLMError:
            self.emit(TurnFinished, stop_reason="error")
            raise
        if not compaction.needed(self):
            self.compactions_in_a_row = 0
        if reply.stop_reason == "max_tokens" and has_tool_use(reply.content):
            kept = [b for b in reply.content if b["type"] != "tool_use"] or [{"type": "text", "text": "…"}]
            self.add_assistant(kept, reply.stop_reason)
            self.add_user([agentcli_note(CUT_OFF)], origin="engine")
            return Turn(kept, "again")
        reply.content, refused = self.tools.checked(reply.content, self.messages)
        self.add_assistant(reply.content or [{"type": "text", "text": "(no answer)"}], reply.stop_reason)
        if reply.stop_reason == "refusal":
            self.emit(Notice, level="error", text=REFUSED)
        if reply.stop_reason == "refusal":
            return Turn(reply.content, "refused")
        if has_tool_use(reply.content):
            return Turn(reply.content, "tool_calls", refused)
        return Turn(reply.content, "again" if reply.stop_reason == "pause_turn" else "answer")

    async def stream(
        self, tools: list[dict[str, Any]] | None, tool_choice: dict[str, Any] | None, max_tokens: int | None = None
    ) -> ModelReply:
        """Stream one reply; compact and try again if the prompt no longer fits."""
        streamed = False

        def streaming(kind: type[TextDelta] | type[ThinkingDelta]) -> Callable[[str], None]:
            def on_piece(text: str) -> None:  # answer text or thinking: a retry must take it back
                nonlocal streamed
                streamed = True
                self.emit(kind, text=text)

            return on_piece

        on_text, on_thinking = streaming(TextDelta), streaming(ThinkingDelta)

        def on_event(event: dict[str, Any]) -> None:
            self.emit(RawStreamEvent, event=event)

        def on_retry(retrying: Retrying) -> None:
            nonlocal streamed
            if streamed:
                self.emit(TextReset)
                streamed = False
            self.ctx.emit(
                dataclasses.replace(
                    retrying, agent_id=self.ctx.agent_id, parent_tool_use_id=self.ctx.parent_tool_use_id
                )
            )

        while True:
            try:
                reply = await self.llm.stream(
                    system=self.request_system(),
                    messages=self.messages,
                    tools=self.offered() if tools is None else quoted_all(tools),
                    on_text=on_text,
                    on_retry=on_retry,
                    on_thinking=on_thinking,
                    on_notice=lambda text: self.emit(Notice, level="warning", text=text),
                    model=self.model,
                    effort=self.effort,
                    tool_choice=tool_choice,
                    max_tokens=max_tokens,
                    on_event=on_event if self.llm.raw_events else None,
                    on_reply=lambda: self.emit(ReplyStarted),
                )
            except LLMError as exc:
                if (
                    self.llm.tool_search == "api"
                    and self.llm.tool_search_fallback
                    and refused_by_endpoint(exc.status, str(exc))
                ):
                    self.llm.tool_search, self.llm.tool_search_fallback = "agentcli", False
                    self.emit(Notice, level="warning", text=API_SEARCH_REFUSED.format(error=str(exc).rstrip(".")))
                    continue
                if web_search.NAME in self.tools and web_search.refused_by_endpoint(exc.status, str(exc)):
                    self.tools.remove(web_search.NAME)  # the session's registry: its later children go without too
                    self.llm.web_search_off = f"the endpoint refused it ({one_line(exc, 160).rstrip('.')})"
                    self.emit(
                        Notice, level="warning", text=f"Web search is off for this session: {self.llm.web_search_off}."
                    )
                    continue
                if not exc.overflow or not await compaction.compact(self, reason=compaction.TOO_LONG):
                    raise
                continue
            self.count(reply)
            if reply.stop_reason != "model_context_window_exceeded":
                return reply
            # The reply filled the context window before it was done: drop it, compact, ask again.
            if streamed:
                self.emit(TextReset)
                streamed = False
            if not await compaction.compact(self, reason="the reply filled the context window"):
                raise LLMError(
                    "The reply filled the model's context window, and the conversation "
                    "cannot be compacted further. Start a new session."
                )

    def count(self, reply: ModelReply) -> None:
        self.usage = self.usage + reply.usage
        self.last_usage = reply.usage
        self.emit(UsageUpdated, usage=reply.usage, total=self.usage, model=reply.model)

    async def run_tools(self, calls: list[dict[str, Any]], refused: dict[str, str] | None = None) -> bool:
        """Run one message's tool calls and append one result for each, even when cancelled; a call in
        ``refused`` is not run: its result is the sentence there. True: a hook ended the turn (its reason
        was said to the user)."""
        results: dict[str, ToolOutcome] = {}
        stop_reason = "cancelled"
        self.offer.after_calls(self.tools, calls, self.llm.tool_search)  # a deferred tool called by name is loaded
        try:
            for batch in self.batches(calls):
                await asyncio.gather(*(self.run_tool(call, results, (refused or {}).get(call["id"])) for call in batch))
            stop_reason = "tool_use"
        finally:
            self.add_user(
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "is_error": outcome.is_error,
                        "content": outcome.content(),
                    }
                    for call in calls
                    for outcome in [results.get(call["id"], ToolOutcome(INTERRUPTED, True))]
                ],
                origin="tool_results",
            )
            self.emit(TurnFinished, stop_reason=stop_reason)
        stops = [outcome.stop for outcome in results.values() if outcome.stop]
        if stops and self.ctx.hooks:
            self.ctx.hooks.warn(f"A hook ended the turn: {stops[0]}")
        return bool(stops)

    def batches(self, calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        """Consecutive read-only and task calls run together; writes and bash run alone, in order."""
        batches: list[list[dict[str, Any]]] = []
        for call in calls:
            if (
                self.tools.runs_concurrently(call["name"])
                and batches
                and self.tools.runs_concurrently(batches[-1][0]["name"])
            ):
                batches[-1].append(call)
            else:
                batches.append([call])
        return batches

    async def run_tool(self, call: dict[str, Any], results: dict[str, ToolOutcome], refusal: str | None = None) -> None:
        tools = self.offer.registry(self.tools, self.llm.tool_search)  # with this agent's tool_search, if it has one
        self.emit(
            ToolCallStarted,
            id=call["id"],
            name=call["name"],
            input=call["input"],
            **tools.described(call["name"], call["input"]),
        )
        started = time.monotonic()
        outcome = ToolOutcome(INTERRUPTED, True)
        try:
            outcome = (
                ToolOutcome(refusal, True)
                if refusal
                else await tools.call(call["name"], call["input"], self.ctx.for_call(call["id"]))
            )
        finally:
            results[call["id"]] = outcome
            self.emit(
                ToolCallFinished,
                id=call["id"],
                name=call["name"],
                output=outcome.output,
                is_error=outcome.is_error,
                seconds=max(0.0, time.monotonic() - started - outcome.waited),
                denied=outcome.denied,
            )  # the call's own time: an approval's wait is not its

    def add_user(self, content: list[dict[str, Any]], origin: Origin = "user") -> None:
        """Append a user message, merged into the previous one when that is a user message too."""
        content = list(content)  # at its size (``add_assistant``)
        append_user(self.messages, content)
        self.emit(UserMessage, content=content, origin=origin)

    def add_assistant(self, content: list[dict[str, Any]], stop_reason: str | None) -> None:
        content = list(content)  # at its size: a list grown by appends keeps room for more, in every message kept
        self.messages.append({"role": "assistant", "content": content})
        self.emit(AssistantMessage, content=content, stop_reason=stop_reason)
        if not has_tool_use(content):
            self.emit(TurnFinished, stop_reason=stop_reason)

    def last_text(self) -> str:
        for message in reversed(self.messages):
            if message["role"] == "assistant":
                text = final_text(message["content"])
                if text:
                    return text
        return ""


def final_text(content: str | list[Block]) -> str:
    return text_of(content).strip()
