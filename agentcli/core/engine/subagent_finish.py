"""How a subagent comes to its final answer: at each turn boundary it reads what was sent to it, is told once
that it nears its turn cap or budget, and is stopped (``WrapUp``) when it is to finish now; then one tool-less
call sums up what it has (``summarize``), or asks once more when its answer was none (``reask``).
``Subagents`` (subagents.py) runs the child and calls these."""

from __future__ import annotations

import asyncio
from typing import Any

from ..content import agentcli_note
from ..events import SubagentWrappingUp
from ..model.llm import LLMError
from ..units import dollars, tokens, turns
from .context import REASK_REQUEST, SUMMARY_REQUEST
from .loop import Agent, final_text
from .subagent_record import SubagentRecord, not_an_answer

SUMMARY_TIMEOUT = 120.0  # seconds for the one last tool-less call
NEAR_TURNS = 3  # a child is told once when this many turns are left of its cap
NEAR_SHARE = 0.8  # ... or when it has used this share of its token or cost budget
WIND_DOWN = 0.9  # at this share of the session's cost budget, children wrap up and no new one starts
NEAR_LIMIT = (
    "You are near {limit}. Finish the step you are on and give your final answer within a turn or "
    "two: what you found (with path:line references) and what is left undone. Start nothing new."
)


class WrapUp(Exception):
    """Raised at a child's turn boundary when it is to finish now: one tool-less call sums up what it has."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason  # completes SUMMARY_REQUEST's "You have run out of …"


def ask_wrap_up(record: SubagentRecord, reason: str) -> None:
    """Have a running child finish at its next turn boundary, told why (completes SUMMARY_REQUEST)."""
    if record.wrap_up:
        return
    record.wrap_up = reason
    if record.emit is not None:
        record.emit(
            SubagentWrappingUp(id=record.id, reason=reason, agent_id=record.id, parent_tool_use_id=record.tool_use_id)
        )


def boundary(record: SubagentRecord, agent: Agent, session_budget: float | None) -> list[dict[str, Any]]:
    """What a child reads before its next model call: the messages sent to it, and once a warning that it
    nears its turn cap or budget. Raises WrapUp when it is to finish now (asked to, or at a budget);
    ``session_budget``: the session's cost budget when the session winds down (children wrap up), else None."""
    used = agent.usage
    if record.token_budget and used.total_tokens >= record.token_budget:
        ask_wrap_up(record, f"your token budget ({tokens(record.token_budget)} tokens)")
    elif record.cost_budget and (used.cost or 0.0) >= record.cost_budget:
        ask_wrap_up(record, f"your cost budget ({dollars(record.cost_budget)})")
    elif session_budget is not None:
        ask_wrap_up(record, f"the session's cost budget ({dollars(session_budget)})")
    if record.wrap_up:
        raise WrapUp(record.wrap_up)
    content = record.steers.take_notes()
    left = record.max_turns - agent.turns  # the next call included
    near = ""
    if record.max_turns > 2 * NEAR_TURNS and left <= NEAR_TURNS:
        near = f"your turn cap: {turns(left)} left of {record.max_turns}"
    elif record.token_budget and used.total_tokens >= NEAR_SHARE * record.token_budget:
        near = f"your token budget: {tokens(used.total_tokens)} of {tokens(record.token_budget)} tokens used"
    elif record.cost_budget and (used.cost or 0.0) >= NEAR_SHARE * record.cost_budget:
        near = f"your cost budget: {dollars(used.cost or 0.0)} of {dollars(record.cost_budget)} spent"
    if near and not record.warned:
        record.warned = True
        content.append(agentcli_note(NEAR_LIMIT.format(limit=near)))
    return content


def user_cancelled(record: SubagentRecord) -> bool:
    """Whether the cancel now arriving is the user's (``cancel``), to be absorbed once."""
    if not record.cancel_requested or record.cancel_absorbed:
        return False
    record.cancel_absorbed = True
    asyncio.current_task().uncancel()  # type: ignore[union-attr]
    return True


async def reask(agent: Agent, record: SubagentRecord) -> str:
    """Its answer was empty or only pointed elsewhere: ask once more, in its own conversation with that
    answer kept, with no tools; failing that, the best text it wrote, marked so."""
    agent.inbox = None  # its run is over: a wrap-up or a message has nothing left to change
    agent.add_user([agentcli_note(REASK_REQUEST)], origin="engine")
    reply_text = ""
    try:
        async with asyncio.timeout(SUMMARY_TIMEOUT):
            reply = await agent.call_model(tool_choice={"type": "none"}, counted=False)
        reply_text = final_text(reply.content)
    except (LLMError, TimeoutError):
        pass
    if not not_an_answer(reply_text):
        record.answer_mark = "re-asked: its first answer was empty or only pointed elsewhere; this is its second."
        return reply_text
    said = [final_text(m["content"]) for m in agent.messages if m["role"] == "assistant"]
    best = next((text for text in reversed(said) if not not_an_answer(text)), "")
    record.answer_mark = "no answer: asked twice, it gave none; " + (
        "the text above is the last it wrote before." if best else "it wrote nothing else either."
    )
    return best or reply_text


async def summarize(agent: Agent, reason: str, record: SubagentRecord) -> str:
    """One last call with no tools, so the parent always receives a text."""
    agent.inbox = None  # nothing more reaches it: this call is its last
    agent.add_user([*record.steers.take_notes(), agentcli_note(SUMMARY_REQUEST.format(reason=reason))], origin="engine")
    found = agent.last_text()
    try:
        async with asyncio.timeout(SUMMARY_TIMEOUT):
            reply = await agent.call_model(tool_choice={"type": "none"}, counted=False)
        record.summarized = True
        return final_text(reply.content) or found
    except (LLMError, TimeoutError) as exc:
        return f"{found}\n\n(No final summary: {exc})" if found else f"(No final summary: {exc})"
    except asyncio.CancelledError:
        if not user_cancelled(record):
            raise
        record.status = "cancelled"
        return (
            f"{found}\n\n(The user cancelled the final summary.)"
            if found
            else "(The user cancelled the subagent before it summarized.)"
        )
