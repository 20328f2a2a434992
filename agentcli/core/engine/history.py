"""Rebuilding an agent's state from its stored records, and repairing it into a history the API accepts.

Pure functions of the records; the session applies them on resume and the `sessions` command reads
with them. A crash can leave a ``tool_use`` without its result, a torn last record, or a child that
never finished: the history gets a synthetic ``is_error`` result marked interrupted, a message left
with no usable content is dropped, and the child is marked ``interrupted``.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
from dataclasses import dataclass, field
from functools import cache
from sys import intern
from typing import Any

from ..content import Message, append_user, as_blocks, typed
from ..events import (
    MAIN,
    AssistantMessage,
    Event,
    Origin,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UserMessage,
    event_from_dict,
)
from ..tools import ToolRegistry, default_tools
from .loop import BROKEN_OFF, CUT_OFF, final_text
from .subagent_record import SubagentRecord, report_of
from .task_tool import TaskTool

INTERRUPTED_RESULT = "Interrupted: agentcli stopped before this tool call finished, so its result was lost."
INTERRUPTED_CHILD = "(Interrupted: agentcli stopped while this subagent was working.)"
SHORT = 64  # a replayed event's text fields this long or shorter are interned: its agent, tool name, call id, model,
# stop reason, origin are the same few strings over and over, parsed each time (about 0.3 MiB of a 500-turn session's)
HISTORY_RESETS = ("compacted", "history_cleared", "rewound")  # records after which the history starts again


@dataclass
class AgentState:
    """What resuming gives back to an agent."""

    messages: list[Message] = field(default_factory=list)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)  # running total
    last_usage: Usage = field(default_factory=Usage)  # of the latest call: how full the context was
    model: str = ""
    ledger: dict[str, Any] = field(default_factory=dict)  # compaction's ledger, as the latest compaction left it


def agent_state(records: list[dict[str, Any]], agent_id: str = MAIN) -> AgentState:
    """One agent's history, turns and usage, rebuilt from its records and repaired."""
    state = AgentState()
    messages: list[Message] = []
    for record in records:
        if record.get("agent_id", MAIN) != agent_id:
            continue
        kind = record.get("type")
        if kind == "user_message":
            append_user(messages, as_blocks(record.get("content")))
        elif kind == "assistant_message":
            messages.append({"role": "assistant", "content": as_blocks(record.get("content"))})
        elif kind in HISTORY_RESETS:
            messages = copy.deepcopy(record.get("messages") or [])
            state.ledger = copy.deepcopy(record.get("ledger") or {})  # cleared or rewound: none
            state.last_usage = Usage(input_tokens=int(record.get("tokens_after") or 0))
        elif kind == "turn_started":
            state.turns = max(state.turns, int(record.get("turn") or 0))
        elif kind == "usage_updated":
            state.usage = Usage.from_dict(record.get("total"))
            state.last_usage = Usage.from_dict(record.get("usage"))
            state.model = record.get("model") or state.model
    state.messages = repair(messages)
    return state


@dataclass
class Prompt:
    """A message the user typed to the main agent: its number (from 1, in file order) and text (as typed, without
    what its @-mentions attached)."""

    number: int
    text: str
    ts: str
    index: int  # of its record


def user_prompts(records: list[dict[str, Any]]) -> list[Prompt]:
    """The user's prompts to the main agent, numbered in the order they were sent."""
    prompts: list[Prompt] = []
    for index, record in enumerate(records):
        if record.get("type") != "user_message" or record.get("agent_id", MAIN) != MAIN:
            continue
        content = as_blocks(record.get("content"))
        if record.get("origin", legacy_origin(content)) != "user":
            continue
        prompts.append(Prompt(len(prompts) + 1, typed(content), str(record.get("ts", "")), index))
    return prompts


def history_before(records: list[dict[str, Any]], number: int) -> list[Message]:
    """The main agent's history as it was just before prompt ``number`` was sent."""
    prompts = user_prompts(records)
    if not 1 <= number <= len(prompts):
        raise ValueError(f"there is no prompt {number}")
    return agent_state(records[: prompts[number - 1].index]).messages


def usable(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    if kind == "text":
        return isinstance(block.get("text"), str) and bool(block["text"].strip())
    if kind == "tool_use":
        return all(isinstance(block.get(k), str) and block[k] for k in ("id", "name")) and isinstance(
            block.get("input"), dict
        )
    if kind == "tool_result":
        return isinstance(block.get("tool_use_id"), str)
    return isinstance(kind, str)


def tool_use_ids(message: Message | None) -> list[str]:
    if not message or message["role"] != "assistant":
        return []
    return [b["id"] for b in as_blocks(message["content"]) if b.get("type") == "tool_use"]


def interrupted_result(tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True, "content": INTERRUPTED_RESULT}


def repair(messages: list[Message]) -> list[Message]:
    """A history the API accepts: user first, roles alternating, every tool_use answered right after.

    Blocks with no usable content are dropped, and so is a message left empty (a partial assistant
    message among them); a tool_use whose id came before (the API wants each once) is dropped; a
    tool_use without a result gets an ``is_error`` "interrupted" one; results that answer nothing
    are dropped.
    """
    out: list[Message] = []
    seen: set[str] = set()  # tool_use ids so far
    for message in messages:
        content = [b for b in as_blocks(message.get("content")) if usable(b)]
        if message.get("role") == "assistant":
            content = [b for b in content if b.get("type") != "tool_use" or first_time(b["id"], seen)]
            if not out:
                continue  # the first message must be the user's
            if out[-1]["role"] == "assistant":
                if tool_use_ids(out[-1]):
                    out.append({"role": "user", "content": [interrupted_result(i) for i in tool_use_ids(out[-1])]})
                elif content:
                    out[-1] = {"role": "assistant", "content": as_blocks(out[-1]["content"]) + content}
                    continue
            if content:
                out.append({"role": "assistant", "content": content})
        elif message.get("role") == "user":
            if out and out[-1]["role"] == "user":  # merge first, so results are checked against one message
                content = as_blocks(out.pop()["content"]) + content
            asked = tool_use_ids(out[-1] if out else None)
            answered: dict[str, dict[str, Any]] = {}
            for b in content:
                if b.get("type") == "tool_result" and b["tool_use_id"] in asked:
                    answered.setdefault(b["tool_use_id"], b)
            others = [b for b in content if b.get("type") != "tool_result"]
            results = [answered.get(i) or interrupted_result(i) for i in asked]
            if results or others:
                out.append({"role": "user", "content": results + others})
    if out and tool_use_ids(out[-1]):
        out.append({"role": "user", "content": [interrupted_result(i) for i in tool_use_ids(out[-1])]})
    return out


def first_time(tool_use_id: str, seen: set[str]) -> bool:
    """Whether ``tool_use_id`` is new (and note it)."""
    if tool_use_id in seen:
        return False
    seen.add(tool_use_id)
    return True


def replay_events(records: list[dict[str, Any]]) -> list[Event]:
    """Stored records as the events a front end saw live (a TextDelta before each message's text)."""
    events: list[Event] = []
    results = _result_texts(records)
    for record in records:
        record = {name: intern(v) if type(v) is str and len(v) <= SHORT else v for name, v in record.items()}
        if record.get("type") == "tool_call_finished" and results.get(record.get("id")) == record.get("output"):
            record["output"] = results[record["id"]]  # one string for the event and the history
        event = event_from_dict(record)
        if event is None:
            continue
        if isinstance(event, UserMessage) and "origin" not in record:  # written before messages had one
            event = dataclasses.replace(event, origin=legacy_origin(event.content))
        if isinstance(event, ToolCallStarted) and (missing := {"kind", "summary", "preview"} - record.keys()):
            known = builtin_tools().described(event.name, event.input)  # written before events carried them
            event = dataclasses.replace(
                event,
                kind=known["kind"] if "kind" in missing else event.kind,
                summary=known["summary"] if "summary" in missing else event.summary,
                preview=known["preview"] if "preview" in missing else event.preview,
            )
        if isinstance(event, AssistantMessage):
            text = final_text(event.content)
            if text:
                events.append(
                    TextDelta(text=text, agent_id=event.agent_id, parent_tool_use_id=event.parent_tool_use_id)
                )
        events.append(event)
    return events


def _result_texts(records: list[dict[str, Any]]) -> dict[Any, str]:
    """The text of each tool result the history holds, by its call's id: a call's ``tool_call_finished`` record
    stores the same output again, parsed into a second string (about 0.5 MiB of a resumed 500-turn session's)."""
    return {
        block.get("tool_use_id"): block["content"]
        for record in records
        if record.get("type") == "user_message" and isinstance(record.get("content"), list)
        for block in record["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(block.get("content"), str)
    }


@cache
def builtin_tools() -> ToolRegistry:
    """The built-in tools, for what records written before events carried a call's kind, summary and preview."""
    return ToolRegistry([*default_tools(), TaskTool()])


def legacy_origin(content: list[dict[str, Any]]) -> Origin:
    """Who a user message stored without an ``origin`` came from."""
    if any(b.get("type") == "tool_result" for b in content):
        return "tool_results"
    texts = [b.get("text", "").strip() for b in content if b.get("type") == "text"]
    return "engine" if texts and all(t in (CUT_OFF, BROKEN_OFF) for t in texts) else "user"


def ended(records: list[dict[str, Any]]) -> bool:
    """Whether a child's latest run (its first, or its latest resume) has a ``subagent_finished`` record."""
    kinds = [r.get("type") for r in records if r.get("type") in ("subagent_started", "subagent_finished")]
    return bool(kinds) and kinds[-1] == "subagent_finished"


def undelivered(main_records: list[dict[str, Any]], agent_id: str) -> bool:
    """Whether a background child's latest run has a result that never reached the main agent: the main
    transcript has no ``subagent_result_delivered`` for it after its latest ``subagent_started``. Its run
    may have finished or been interrupted (by a crash, or by quitting); either way the main agent is due
    its result, once."""
    started: dict[str, Any] | None = None
    delivered = False
    for record in main_records:
        kind = record.get("type")
        if kind == "subagent_started" and record.get("agent_id") == agent_id:
            started, delivered = record, False
        elif kind == "subagent_result_delivered" and record.get("id") == agent_id:
            delivered = True
    return started is not None and started.get("background") is True and not delivered


def subagent_record(records: list[dict[str, Any]], agent_id: str) -> SubagentRecord | None:
    """A child's record rebuilt from its transcript, with its history for a resume; one whose latest run
    never finished is ``interrupted``."""
    events = replay_events([r for r in records if r.get("agent_id") == agent_id])
    runs = [e for e in events if isinstance(e, SubagentStarted)]
    if not runs:
        return None
    started, latest = runs[0], runs[-1]
    record = SubagentRecord(
        id=agent_id,
        type=started.subagent_type,
        description=started.description,
        prompt=started.prompt,
        tool_use_id=latest.parent_tool_use_id or "",
        max_turns=started.max_turns,
        events=events,
        background=latest.background,
        segments=len(runs),
        model=latest.model,
        effort=latest.effort,
    )
    resumed = agent_state(records, agent_id)
    record.messages, record.ledger = resumed.messages, resumed.ledger
    record.tool_output_chars = sum(len(e.output) for e in events if isinstance(e, ToolCallFinished))
    finished = next((e for e in reversed(events) if isinstance(e, SubagentFinished)), None)
    if finished is not None and ended(records):
        record.status, record.result, record.turns = finished.status, finished.result, finished.turns
        record.usage, record.seconds = finished.usage, finished.seconds
        record.summarized = finished.summarized
        record.report = finished.report or report_of(record)  # a session from before reports: rebuilt
        return record
    state = agent_state(records, agent_id)
    said = [final_text(e.content) for e in events if isinstance(e, AssistantMessage)]
    found = next((text for text in reversed(said) if text), "")
    record.status, record.usage = "interrupted", state.usage
    record.turns = (finished.turns if finished is not None else 0) + turns_in_latest_run(records)
    record.result = f"{found}\n\n{INTERRUPTED_CHILD}" if found else INTERRUPTED_CHILD
    record.seconds = span_seconds(records)
    record.report = report_of(record)
    record.events.append(
        SubagentFinished(
            id=agent_id,
            status=record.status,
            result=record.result,
            turns=record.turns,
            usage=record.usage,
            seconds=record.seconds,
            report=record.report,
            agent_id=agent_id,
            parent_tool_use_id=started.parent_tool_use_id,
        )
    )
    return record


def turns_in_latest_run(records: list[dict[str, Any]]) -> int:
    """Model calls a child made in its latest run (turn numbers start again with each run)."""
    runs = [n for n, r in enumerate(records) if r.get("type") == "subagent_started"]
    latest = records[runs[-1] if runs else 0 :]
    return max((int(r.get("turn") or 0) for r in latest if r.get("type") == "turn_started"), default=0)


def span_seconds(records: list[dict[str, Any]]) -> float:
    """Time from the first record to the last."""
    stamps = []
    for record in records:
        try:
            stamps.append(datetime.datetime.fromisoformat(record["ts"]))
        except (KeyError, TypeError, ValueError):
            continue
    return (max(stamps) - min(stamps)).total_seconds() if len(stamps) > 1 else 0.0
