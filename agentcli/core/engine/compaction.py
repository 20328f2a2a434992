"""Auto-compaction: when an agent's context fills up, older turns become a summary.

The new history keeps the first user message, then the summary, then agentcli's own ledger of what
the conversation did (files read and changed, commands and their exit codes, subagents), each an
agentcli note, then the most recent turns, cut at a point where every tool_use keeps its tool_result.

The summarizer call is the conversation's own next request (the same tools, system prompt and messages)
with agentcli's ask at its end and tool_choice "none", so it repeats the cached prefix rather than paying
the whole conversation again. When that request cannot fit (the API refused the conversation as too
long), it is one tool-less call shown the older turns rendered as text, whole up to a share of the
context window; past that, the longest blocks are cut to their head and tail, the short ones kept whole.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..content import NOTE_OPEN, Message, agentcli_note, append_user, as_blocks, text_of
from ..events import Compacted, Event, Notice, Usage
from ..model.llm import LLM, LLMError, ModelReply, context_window, estimate_tokens
from ..units import tokens

if TYPE_CHECKING:  # config.py reads this module's shares: the tools load with a session
    from ..tools.base import ToolContext

MANUAL = "asked for"  # the reason of a compaction the user asked for (/compact)
FULL = "the context was nearly full"  # the reason of one at compact_threshold, before a model call
TOO_LONG = "the prompt was too long"  # the API refused the request: its size, not our count, says it is full
MAX_IN_A_ROW = 3  # compactions that refill at once before we give up
RECENT_SHARE = 0.25  # of the window, kept verbatim as recent turns
# The lowest compact_threshold that can work: the recent turns kept verbatim fill up to RECENT_SHARE of the
# window, so below this a compaction cannot bring the context under the threshold (config.py refuses one).
MIN_THRESHOLD = RECENT_SHARE + 0.05
RETRY_GROWTH = 0.25  # of the window: after a compaction that could not free enough, how much more before another
SUMMARIZER_SHARE = 0.5  # of the window: how much of the older turns the summarizer is shown
CHARS_PER_TOKEN = 3  # a cautious rate for code, to turn that share into characters
MIN_BLOCK = 400  # characters a block keeps, head and tail, however tight the budget
LEDGER_COMMANDS = 40  # the latest commands the ledger lists

SUMMARIZER = """\
Compress this coding agent's conversation so that the agent can continue its work with less context: \
the summary replaces the older turns (the latest ones stay verbatim after it). Do not call tools; answer \
with the summary alone.
Write it for the agent itself: the user's goals and constraints, decisions made, files and symbols \
involved (with paths and line numbers), results of commands and searches that still matter, and what \
remains to be done. Be specific and concise. Plain Markdown, no preamble."""
RENDERED_SYSTEM = "You summarize a coding agent's conversation, shown as text, for the agent to continue from."
NO_TOOLS = {"type": "none"}  # the summarizer's request offers the conversation's tools, so its prefix repeats

SUMMARY_HEADER = "[Summary of the earlier conversation, compacted to save context]"
LEDGER_HEADER = "What this conversation did before it was compacted, as agentcli recorded it (not a summary):"
EXIT_CODE = re.compile(r"exit code (\d+)")
NUMBERED_LINE = re.compile(r"^\s*(\d+)\t", re.MULTILINE)  # read_file's numbered lines


class ContextThrash(LLMError):
    """Compaction does not free enough room: every compacted context refills at once."""


class Agent(Protocol):
    """What compaction reads and changes of an agent: the seam to the loop (``loop.Agent`` matches it), declared
    here so that compaction, which the loop calls, never imports the loop."""

    llm: LLM
    ctx: ToolContext
    model: str
    effort: str | None
    system: str
    messages: list[Message]
    last_usage: Usage  # of the latest call: how full the context is
    compact_threshold: float
    compact_hold: int
    compactions_in_a_row: int
    ledger: Ledger

    def offered(self) -> list[dict[str, Any]]: ...  # the next request's tools (the summarizer's request repeats them)
    def request_system(self) -> str: ...
    def emit(self, event_type: type[Event], **fields: Any) -> None: ...
    def count(self, reply: ModelReply) -> None: ...  # the summarizer's usage joins the agent's


def context_tokens(agent: Agent) -> int:
    """How full the agent's context is, by the API's latest usage, or an estimate without one."""
    used = agent.last_usage.context_tokens + agent.last_usage.output_tokens
    return used or estimate_tokens(agent.system, agent.messages, agent.offered())


def needed(agent: Agent) -> bool:
    """Whether the context passed the threshold, and is past ``agent.compact_hold`` (set when the last
    compaction could not free enough)."""
    used = context_tokens(agent)
    return used >= agent.compact_threshold * context_window(agent.model) and used >= agent.compact_hold


async def when_full(agent: Agent) -> None:
    """Before a model call: compact when the context is past the threshold. When that cannot bring it under
    (the summary freed nothing and was dropped, or freed too little), say so once and wait until the context
    has grown by RETRY_GROWTH of the window, rather than send the same summarizer call before every step."""
    if not needed(agent):
        return
    window = context_window(agent.model)
    before = context_tokens(agent)
    kept = await compact(agent, reason=FULL)
    after = context_tokens(agent)
    if kept and after < agent.compact_threshold * window:
        return
    agent.compact_hold = before + int(window * RETRY_GROWTH)
    agent.emit(
        Notice,
        level="warning",
        text=(
            f"Compaction could not bring the context under {agent.compact_threshold:.0%} of the window "
            f"({tokens(before)} tokens before, "
            + (f"{tokens(after)} after" if kept else "and a summary would free none")
            + f"); agentcli tries again at "
            f"{tokens(agent.compact_hold)} tokens. /compact compacts now."
        ),
    )


def split_point(messages: list[Message], keep_tokens: int) -> int | None:
    """Where the recent part begins: an assistant message, after at least one older exchange."""
    kept = 0
    cut = None
    for i in range(len(messages) - 1, 1, -1):
        kept += estimate_tokens(messages[i])
        if messages[i]["role"] == "assistant":
            if kept > keep_tokens and cut is not None:
                break
            cut = i
    return cut


def render(messages: list[Message], budget: int) -> str:
    """Older messages as plain text for the summarizer (no tool blocks, so no tools needed), at most about
    ``budget`` characters: every block whole if they fit, else the longest ones cut to head and tail."""
    entries: list[tuple[str, str]] = []
    for message in messages:
        for block in as_blocks(message["content"]):
            if block["type"] == "text":
                entries.append((f"{message['role'].upper()}: ", block["text"]))
            elif block["type"] == "tool_use":
                entries.append((f"TOOL CALL {block['name']}: ", json.dumps(block["input"], ensure_ascii=False)))
            elif block["type"] == "tool_result":
                error = " (error)" if block.get("is_error") else ""
                entries.append((f"TOOL RESULT{error}: ", text_of(block.get("content", ""), " ")))
    cap = fair_share([len(text) for _, text in entries], budget - sum(len(label) + 2 for label, _ in entries))
    return "\n\n".join(label + head_and_tail(text, cap) for label, text in entries)


def fair_share(lengths: list[int], budget: int) -> int | None:
    """The largest length that each block may keep so that all fit in ``budget`` (a short block keeps all
    of its own); None when nothing needs cutting."""
    if sum(lengths) <= budget:
        return None
    left = max(budget, 0)
    ordered = sorted(lengths)
    for index, length in enumerate(ordered):
        share = left // (len(ordered) - index)
        if length > share:
            return max(share, MIN_BLOCK)
        left -= length
    return None


def head_and_tail(text: str, cap: int | None) -> str:
    """``text``, or its beginning and end with what was cut between them said, when it is over ``cap``."""
    if cap is None or len(text) <= cap:
        return text
    head = cap * 2 // 3
    return f"{text[:head]}\n[… {len(text) - cap:,} characters cut here …]\n{text[len(text) - (cap - head) :]}"


@dataclass
class Ledger:
    """What an agent did, as agentcli saw its tool calls (not as the model remembers them): the files read,
    with the lines shown, the files changed, the commands run and how they ended. It outlives
    compactions (each adds the calls it summarizes), and the compacted history lists it after the summary."""

    reads: dict[str, list[list[int]]] = field(default_factory=dict)  # path: [first, last] line ranges shown
    changed: dict[str, list[str]] = field(default_factory=dict)  # path: the tools that changed it
    commands: list[list[str]] = field(default_factory=list)  # [command, how it ended]

    def add(self, messages: list[Message]) -> None:
        """Record the tool calls of ``messages`` that have their result there."""
        calls = {
            b["id"]: b
            for m in messages
            if m["role"] == "assistant"
            for b in as_blocks(m["content"])
            if b.get("type") == "tool_use"
        }
        for message in messages:
            for block in as_blocks(message["content"]):
                call = calls.get(block.get("tool_use_id", "")) if block.get("type") == "tool_result" else None
                if call is not None and isinstance(call.get("input"), dict):
                    self.record(
                        call["name"],
                        call["input"],
                        text_of(block.get("content", ""), "\n"),
                        bool(block.get("is_error")),
                    )

    def record(self, name: str, args: dict[str, Any], output: str, is_error: bool) -> None:
        from .tool_catalogue import catalogue  # what the tool says a receipt keeps of it

        path, kept = str(args.get("path") or ""), catalogue().receipt(name)
        if kept == "reads" and path and not is_error:
            numbers = [int(n) for n in NUMBERED_LINE.findall(output)]
            ranges = self.reads.setdefault(path, [])
            if numbers and [numbers[0], numbers[-1]] not in ranges:
                ranges.append([numbers[0], numbers[-1]])
        elif kept == "changes" and path and not is_error:
            tools = self.changed.setdefault(path, [])
            if name not in tools:
                tools.append(name)
        elif kept == "command" and isinstance(args.get("command"), str):
            if args.get("run_in_background") and not is_error:
                ended = "started in the background"
            elif not is_error:
                ended = "exit code 0"
            else:
                code = EXIT_CODE.search(output[:300])
                ended = f"exit code {code.group(1)}" if code else "failed: " + output.strip().split("\n")[0][:120]
            self.commands = (self.commands + [[args["command"], ended]])[-LEDGER_COMMANDS:]

    def render(self, subagents: list[str]) -> str:
        """The ledger as agentcli's note for the compacted history; "" when it holds nothing."""

        def ranges(spans: list[list[int]]) -> str:
            return ", ".join(f"{a}-{b}" for a, b in sorted(spans)) if spans else "no lines"

        def quoted(text: str) -> str:  # on one line, whatever a path or command holds
            return json.dumps(text, ensure_ascii=False)

        sections = [
            ("Files read (lines shown)", [f"{quoted(p)}: lines {ranges(r)}" for p, r in self.reads.items()]),
            ("Files changed", [f"{quoted(p)} ({', '.join(t)})" for p, t in self.changed.items()]),
            (
                f"Commands run (the latest {LEDGER_COMMANDS} at most)",
                [f"{quoted(c)}: {ended}" for c, ended in self.commands],
            ),
            ("Subagents (continue one with task resume: its id)", subagents),
        ]
        body = "\n\n".join(
            title + ":\n" + "\n".join(f"- {item}" for item in items) for title, items in sections if items
        )
        return f"{LEDGER_HEADER}\n\n{body}" if body else ""

    def to_dict(self) -> dict[str, Any]:
        return {"reads": self.reads, "changed": self.changed, "commands": self.commands}

    @classmethod
    def from_dict(cls, data: Any) -> Ledger:
        """A stored ledger; a damaged one starts empty."""
        data = data if isinstance(data, dict) else {}
        reads, changed, commands = data.get("reads"), data.get("changed"), data.get("commands")
        return cls(
            reads if isinstance(reads, dict) else {},
            changed if isinstance(changed, dict) else {},
            commands if isinstance(commands, list) else [],
        )


def subagent_lines(agent: Agent) -> list[str]:
    """The children of this agent's session, each with its id, type, errand and status."""
    records = agent.ctx.subagents.records.values() if agent.ctx.subagents is not None else []
    return [f"{r.id} ({r.type}, {json.dumps(r.description)}): {r.status}" for r in records]


def is_carried(block: dict[str, Any]) -> bool:
    """A block of an earlier compaction's head: its summary or its ledger, which the new ones replace (a
    summary of an older session's stands unmarked)."""
    text = str(block.get("text", ""))
    return text.startswith((SUMMARY_HEADER, NOTE_OPEN + SUMMARY_HEADER, NOTE_OPEN + LEDGER_HEADER))


async def compact(agent: Agent, focus: str = "", reason: str = "") -> bool:
    """Replace older turns with a summary. False when there is nothing old enough to summarize, or when
    the summary would free nothing by our count (then the history stays, and no Compacted event tells of
    it); after the API refused a prompt as too long, our count is no measure, so it compacts anyway."""
    if agent.compactions_in_a_row >= MAX_IN_A_ROW:
        raise ContextThrash(
            f"Stopped: the context refilled right after {MAX_IN_A_ROW} compactions in a row. "
            "Start a fresh conversation (/clear) or narrow the task."
        )
    window = context_window(agent.model)
    before = context_tokens(agent)
    cut = split_point(agent.messages, int(window * RECENT_SHARE))
    if cut is None:
        return False
    older, recent = agent.messages[:cut], agent.messages[cut:]
    hooks = agent.ctx.hooks
    if hooks:
        await hooks.pre_compact("manual" if reason == MANUAL else "auto", focus)
    summary = await summarize(
        agent, older, focus, int(window * SUMMARIZER_SHARE) * CHARS_PER_TOKEN, shared=reason != TOO_LONG, kept=recent[0]
    )  # a conversation the API refused would be refused again
    ledger = Ledger.from_dict(agent.ledger.to_dict())
    ledger.add(older)
    first = agent.messages[0]["content"]
    first_blocks = [
        b
        for b in (first if isinstance(first, list) else [{"type": "text", "text": first}])
        if b["type"] == "text" and not is_carried(b)
    ] or [{"type": "text", "text": "(earlier request)"}]
    listed = ledger.render(subagent_lines(agent))
    started = await hooks.session_start("compact") if hooks and agent.ctx.depth == 0 else ()  # the main agent's
    head: Message = {
        "role": "user",
        "content": first_blocks
        + [agentcli_note(f"{SUMMARY_HEADER}\n\n{summary}")]
        + ([agentcli_note(listed)] if listed else [])
        + [agentcli_note(text) for text in started],
    }
    compacted: list[Message] = [head] + recent
    after = await agent.llm.count_tokens(
        system=agent.system, messages=compacted, tools=agent.offered(), model=agent.model
    ) or estimate_tokens(agent.system, compacted, agent.offered())
    if after >= before and reason != TOO_LONG:  # it frees nothing: keep the history, and say nothing
        return False
    agent.messages, agent.ledger = compacted, ledger  # only now: a cancel above leaves the history as it was
    agent.last_usage = Usage(input_tokens=after)
    agent.compactions_in_a_row += 1
    agent.emit(
        Compacted,
        messages_summarized=len(older),
        tokens_before=before,
        tokens_after=after,
        summary=summary,
        messages=list(agent.messages),
        reason=reason,
        trigger="manual" if reason == MANUAL else "auto",
        ledger=ledger.to_dict(),
    )
    return True


async def summarize(
    agent: Agent, older: list[Message], focus: str, budget: int, shared: bool = True, kept: Message | None = None
) -> str:
    """The summary: asked at the end of the conversation's own request (``shared``), so that it repeats the
    cached prefix, naming the message from which the turns stay verbatim (``kept``); when that does not fit,
    in one tool-less call on at most ``budget`` characters of ``older``, dropping the oldest turns while even
    that overflows."""
    ask = SUMMARIZER + (f"\nFocus on: {focus}" if focus else "")
    while True:
        if shared:
            messages = list(agent.messages)
            where = (
                f"\nSummarize only what comes before {first_words(kept)}: it and all after it stay verbatim."
                if kept
                else ""
            )
            append_user(messages, [agentcli_note(ask + where)])
            system, tools, choice = agent.request_system(), agent.offered(), NO_TOOLS
        else:
            prompt = f"{render(older, budget)}\n\n---\n{ask}"
            messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
            system, tools, choice = RENDERED_SYSTEM, [], None
        try:
            reply = await agent.llm.stream(
                system=system,
                messages=messages,
                tools=tools,
                tool_choice=choice,
                on_text=lambda _: None,
                model=agent.model,
                effort=agent.effort,
            )
        except LLMError as exc:
            if shared and (exc.overflow or exc.status == 400):  # too long, or an endpoint without tool_choice none
                shared = False
                continue
            if not exc.overflow or len(older) <= 2:
                raise
            older = older[2:]  # the oldest exchange goes
            continue
        agent.count(reply)
        text = text_of(reply.content).strip()
        return text or "(The summarizer returned nothing.)"


def first_words(message: Message) -> str:
    """The first message kept verbatim (an assistant one), as the summarizer is told of it: shown the whole
    conversation, it would otherwise summarize the turns that follow its summary anyway, out of order."""
    for block in as_blocks(message.get("content")):
        if block.get("type") == "text" and block["text"].strip():
            return f'your reply that begins "{" ".join(block["text"].split())[:80]}"'
        if block.get("type") == "tool_use":
            return f"your {block['name']} call with {json.dumps(block.get('input'), ensure_ascii=False)[:80]}"
    return "your latest reply"
