"""Subagents as ACP child sessions: the one module that reads and sends what the SDK predates.

Child sessions are an unstable part of ACP: the newest official schema (npm ``@agentclientprotocol/sdk``
2.4.0, ``schema.unstable.json``) has the client's ``subagents`` capability and the ``subagent_update``
session update, marked UNSTABLE, and no way for a tool call to name its child (its tool call content has
no ``session`` type, so content that held one failed a strict client's validation, the child's answer
with it). ``agent-client-protocol`` 0.12.1 models none of it. So, and only here:

- the capability is read from the raw ``initialize`` message (``opted_in``, a connection observer);
- ``subagent_update`` and each update of a parent's ``task`` call that names its child (as the child
  starts, ``Children.announce``; as the call ends, ``Children.finish_call``, with the child's answer as
  text content) go out as raw JSON-RPC notifications, on the same transport and in the same order as the
  SDK's own. The child is named in the update's ``_meta`` (``agentcli.subagentSessionId``), which every
  schema allows, never in its content.

Each child of parent session ``P`` is the session ``P:sa-N``, for good: a resumed child (or a child of a
loaded session, replayed) keeps it. Its own events (messages, thinking, tool calls, plan) are ordinary
SDK updates bearing that id (``agent.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp import schema as s

from ...core.events import SubagentFinished, SubagentStarted

if TYPE_CHECKING:
    from ..view import SessionView

# The ``subagent_update`` fields agentcli sends, of the unstable schema's: the child's sessionId (required),
# title, description, capabilities (``cancel``), state.
UPDATE_FIELDS = ("sessionUpdate", "sessionId", "title", "description", "capabilities", "state")
# A child's state as it runs and as it ended; agentcli's status says how it ended.
RUNNING, IDLE = "running", "idle"
STOP_REASONS = {
    "done": "end_turn",
    "capped": "max_turn_requests",
    "timed_out": "max_turn_requests",
    "cancelled": "cancelled",
    "interrupted": "cancelled",
    "failed": "refusal",
    "refused": "refusal",
}

SendRaw = Callable[[dict[str, Any]], Awaitable[None]]


def opted_in(message: dict[str, Any]) -> bool | None:
    """Whether a raw incoming ``initialize`` request says the client takes child sessions
    (``clientCapabilities.subagents`` is an object); None for any other message."""
    if message.get("method") != "initialize":
        return None
    params = message.get("params")
    caps = params.get("clientCapabilities") if isinstance(params, dict) else None
    return isinstance(caps, dict) and isinstance(caps.get("subagents"), dict)


def child_session_id(parent: str, child: str) -> str:
    return f"{parent}:{child}"


def subagent_update(parent: str, event: SubagentStarted | SubagentFinished) -> dict[str, Any]:
    """The ``session/update`` params announcing (or updating) a child on its parent."""
    update: dict[str, Any] = {"sessionUpdate": "subagent_update", "sessionId": child_session_id(parent, event.id)}
    if isinstance(event, SubagentStarted):
        update.update(
            title=event.description,
            description=f"{event.subagent_type} subagent {event.id}",
            capabilities={"cancel": {}},
            state={"state": RUNNING},
        )
    else:
        update.update(
            capabilities=None,
            state={
                "state": IDLE,
                "stopReason": STOP_REASONS.get(event.status, "end_turn"),
                "_meta": {"agentcli": {"status": event.status, "turns": event.turns}},
            },
        )
    assert set(update) <= set(UPDATE_FIELDS)
    return {"sessionId": parent, "update": update}


def link_meta(parent: str, child: str) -> dict[str, Any]:
    """The ``_meta`` of a ``task`` call's update that names the child session it runs in."""
    return {"agentcli": {"subagentSessionId": child_session_id(parent, child)}}


def session_link(parent: str, tool_call_id: str, child: str) -> dict[str, Any]:
    """A ``tool_call_update`` on the parent's ``task`` call that names the child session."""
    return {
        "sessionId": parent,
        "update": {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, "_meta": link_meta(parent, child)},
    }


class Children:
    """The child sessions of one parent session: one for each subagent of its view (``ui/view.py``, which knows
    each child's latest task call and whether that run is in the background). A child keeps its session for
    good: a resume (a new task call, the same subagent id) patches the same ``subagent_update`` and links the
    new call to it."""

    def __init__(self, parent: str, send_raw: SendRaw, view: SessionView) -> None:
        self.parent, self.send_raw, self.view = parent, send_raw, view

    def session_of(self, agent_id: str) -> str | None:
        return child_session_id(self.parent, agent_id) if agent_id in self.view.subagents else None

    def owns(self, session_id: str) -> str | None:
        """The subagent id whose child session ``session_id`` is, if it is one of these."""
        return next(
            (child for child in self.view.subagents if child_session_id(self.parent, child) == session_id), None
        )

    def background_call(self, event: SubagentFinished) -> str | None:
        """The parent's task call of a background run that just ended, if it was one."""
        child = self.view.subagents.get(event.id)
        return child.tool_use_id or None if child is not None and child.background else None

    async def announce(self, event: SubagentStarted | SubagentFinished) -> None:
        """A run starting (announce, or patch to ``running``, and link its task call) or ending; the view folded
        it first."""
        if event.id not in self.view.subagents:
            return  # never started here: nothing to announce or update
        await self.send_raw(subagent_update(self.parent, event))
        if isinstance(event, SubagentStarted) and event.parent_tool_use_id:  # the run's call links to its child
            await self.send_raw(session_link(self.parent, event.parent_tool_use_id, event.id))

    async def finish_call(self, update: s.ToolCallProgress) -> bool:
        """A task call of a child ending: sent raw, naming its child as it did when it started; its content is
        the child's answer and footer as text, which any client shows. False when the call is no child's; the
        caller sends it."""
        child = next(
            (agent.id for agent in self.view.subagents.values() if agent.tool_use_id == update.tool_call_id), None
        )
        if child is None:
            return False
        params = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        params["_meta"] = {**params.get("_meta", {}), **link_meta(self.parent, child)}
        await self.send_raw({"sessionId": self.parent, "update": params})
        return True
