"""Auto-compaction: when an agent's context fills up, older turns become a summary.

The new history keeps the first user message (with the summary appended to it) and
the most recent turns, cut at a point where every tool_use keeps its tool_result.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .content import as_blocks, text_of
from .events import Compacted
from .llm import LLMError, context_window, estimate_tokens

if TYPE_CHECKING:
    from .loop import Agent

MAX_IN_A_ROW = 3  # compactions that refill at once before we give up
RECENT_SHARE = 0.25  # of the window, kept verbatim as recent turns
BLOCK_CAP = 2_000  # characters of each block shown to the summarizer

SUMMARIZER = """\
You compress a coding agent's conversation so that it can continue its work with less context.
Write a summary for the agent itself: the user's goals and constraints, decisions made, files and
symbols involved (with paths and line numbers), results of commands and searches that still matter,
and what remains to be done. Be specific and concise. Plain Markdown, no preamble."""

SUMMARY_HEADER = "[Summary of the earlier conversation, compacted to save context]"


class ContextThrash(LLMError):
    """Compaction does not free enough room: every compacted context refills at once."""


def context_tokens(agent: "Agent") -> int:
    """How full the agent's context is, by the API's latest usage, or an estimate without one."""
    used = agent.last_usage.context_tokens + agent.last_usage.output_tokens
    return used or estimate_tokens(agent.system, agent.messages, agent.tools.schemas())


def needed(agent: "Agent") -> bool:
    return context_tokens(agent) >= agent.compact_threshold * context_window(agent.model)


def split_point(messages: list[dict[str, Any]], keep_tokens: int) -> int | None:
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


def render(messages: list[dict[str, Any]]) -> str:
    """Older messages as plain text for the summarizer (no tool blocks, so no tools needed)."""
    lines = []
    for message in messages:
        for block in as_blocks(message["content"]):
            if block["type"] == "text":
                lines.append(f"{message['role'].upper()}: {_cap(block['text'])}")
            elif block["type"] == "tool_use":
                lines.append(f"TOOL CALL {block['name']}: {_cap(json.dumps(block['input']))}")
            elif block["type"] == "tool_result":
                content = block.get("content", "")
                text = text_of(content, " ")
                error = " (error)" if block.get("is_error") else ""
                lines.append(f"TOOL RESULT{error}: {_cap(text)}")
    return "\n\n".join(lines)


def _cap(text: str) -> str:
    return text if len(text) <= BLOCK_CAP else text[:BLOCK_CAP] + f" … [{len(text) - BLOCK_CAP} more characters]"


async def compact(agent: "Agent", focus: str = "", reason: str = "") -> bool:
    """Replace older turns with a summary. False when there is nothing old enough to summarize, or when
    the summary would free nothing (then the history stays, and no Compacted event tells of it)."""
    if agent.compactions_in_a_row >= MAX_IN_A_ROW:
        raise ContextThrash(f"Stopped: the context refilled right after {MAX_IN_A_ROW} compactions in a row. "
                            "Start a fresh conversation (/clear) or narrow the task.")
    window = context_window(agent.model)
    before = context_tokens(agent)
    cut = split_point(agent.messages, int(window * RECENT_SHARE))
    if cut is None:
        return False
    older, recent = agent.messages[:cut], agent.messages[cut:]
    summary = await summarize(agent, older, focus)
    first = agent.messages[0]["content"]
    first_blocks = [b for b in (first if isinstance(first, list) else [{"type": "text", "text": first}])
                    if b["type"] == "text"] or [{"type": "text", "text": "(earlier request)"}]
    head = {"role": "user", "content": first_blocks + [{"type": "text", "text": f"{SUMMARY_HEADER}\n\n{summary}"}]}
    compacted = [head] + recent
    after = await agent.llm.count_tokens(system=agent.system, messages=compacted, tools=agent.tools.schemas(),
                                         model=agent.model) or estimate_tokens(agent.system, compacted,
                                                                                 agent.tools.schemas())
    if after >= before:  # the summary frees nothing: keep the history, and say nothing was compacted
        return False
    agent.messages = compacted  # only now: a cancel above leaves the history as it was
    agent.last_usage = type(agent.last_usage)(input_tokens=after)
    agent.compactions_in_a_row += 1
    agent.emit(Compacted, messages_summarized=len(older), tokens_before=before, tokens_after=after,
               summary=summary, messages=list(agent.messages), reason=reason)
    return True


async def summarize(agent: "Agent", older: list[dict[str, Any]], focus: str) -> str:
    """One tool-less call; if even that overflows, drop the oldest turns and try again."""
    while True:
        ask = "Summarize this conversation so far." + (f" Focus on: {focus}" if focus else "")
        prompt = f"{render(older)}\n\n---\n{ask}"
        try:
            reply = await agent.llm.stream(system=SUMMARIZER, messages=[{"role": "user", "content": [
                {"type": "text", "text": prompt}]}], tools=[], on_text=lambda _: None, model=agent.model)
        except LLMError as exc:
            if not exc.overflow or len(older) <= 2:
                raise
            older = older[2:]  # the oldest exchange goes
            continue
        agent.count(reply)
        text = text_of(reply.content).strip()
        return text or "(The summarizer returned nothing.)"
