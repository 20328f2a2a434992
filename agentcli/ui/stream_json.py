"""Claude Code's script shapes, rendered from the typed events: the ``json`` result object and the
``stream-json`` lines (``system/init``, ``assistant``, ``user``, ``system`` task and ``compact_boundary``
lines, ``stream_event``, ``result``), as ``claude -p --output-format stream-json --verbose`` prints them.

Field sets follow Claude Code 2.1's output (a recorded run) and what the ``claude-agent-sdk``
parser requires. agentcli's own extras (``subagents``, ``tokens_kept_out``)
ride along as additional fields of the result.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..core.events import (
    MAIN,
    AssistantMessage,
    AttemptsCompared,
    Compacted,
    Event,
    RawStreamEvent,
    SubagentFinished,
    SubagentStarted,
    ToolCallStarted,
    Usage,
    UserMessage,
)
from .change import Line

if TYPE_CHECKING:
    from ..core.door import SessionSurface
    from .prompt_mark import Mark
    from .view import SessionView, Subagent

# Result subtypes, as Claude Code's -p names them; how a run ended goes to ``terminal_reason``.
SUBTYPES = {
    "done": "success",
    "capped": "error_max_turns",
    "budget": "error_max_budget_usd",
    "unformed": "error_max_structured_output_retries",
}
TERMINAL_REASONS = {
    "done": "completed",
    "capped": "max_turns",
    "budget": "max_budget_usd",
    "unformed": "max_structured_output_retries",
    "interrupted": "interrupted",
    "refused": "refusal",
    "error": "error",
}
# A subagent's status as a task notification says it.
TASK_STATUSES = {"done": "completed", "cancelled": "stopped", "interrupted": "stopped"}


def api_usage(usage: Usage) -> dict[str, Any]:
    """Token counts under the API's own field names."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }


def model_usage(session: SessionSurface) -> dict[str, dict[str, Any]]:
    """The session's usage per model, the main agent's and each subagent's, in Claude Code's ``modelUsage``."""
    by_model: dict[str, Usage] = {session.model: session.main_usage}
    for child in session.children:
        model = child.model or session.model
        by_model[model] = by_model.get(model, Usage()) + child.usage
    return {
        model: {
            "inputTokens": u.input_tokens,
            "outputTokens": u.output_tokens,
            "cacheReadInputTokens": u.cache_read_tokens,
            "cacheCreationInputTokens": u.cache_write_tokens,
            "costUSD": round(u.cost or 0.0, 6),
        }
        for model, u in by_model.items()
    }


def usage_since(now: Usage, before: Usage) -> Usage:
    cost = None if now.cost is None else now.cost - (before.cost or 0.0)
    return Usage(
        now.input_tokens - before.input_tokens,
        now.output_tokens - before.output_tokens,
        now.cache_read_tokens - before.cache_read_tokens,
        now.cache_write_tokens - before.cache_write_tokens,
        cost,
    )


def result_message(
    session: SessionSurface,
    mark: Mark,
    *,
    text: str,
    status: str,
    is_error: bool,
    denials: list[dict[str, Any]] | None = None,
    errors: list[str] | None = None,
    structured: dict[str, Any] | None = None,
    attempts: list[AttemptsCompared] | None = None,
) -> dict[str, Any]:
    """The result object of one prompt, in Claude Code's shape (``--output-format json``, and the last
    stream-json line of each turn). ``denials``: the calls refused (``tool_name``, ``tool_use_id``,
    ``tool_input``); ``errors``: why a run that is an error ended, which the Agent SDK's exception shows;
    ``structured``: the answer that matched --json-schema (``structured_output``); ``attempts``: the best-of-N
    comparisons of the prompt (an object each: the errand, its check, and one entry per attempt)."""
    usage = usage_since(session.usage, mark.usage)
    subagents = [r.to_dict() for r in session.children]
    for child in subagents:
        child["cost_usd"] = round(child["usage"].get("cost") or 0.0, 6)
        child["usage"] = api_usage(Usage.from_dict(child["usage"]))
    by_type = {
        kind: {"subagents": count, "cost_usd": round(usage.cost or 0.0, 6), "usage": api_usage(usage)}
        for kind, (count, usage) in session.usage_by_type().items()
    }
    return {
        "type": "result",
        "subtype": SUBTYPES.get(status, "error_during_execution"),
        "is_error": is_error,
        "duration_ms": round((time.monotonic() - mark.started) * 1000),
        "duration_api_ms": round((session.api_seconds - mark.api_seconds) * 1000),
        "num_turns": session.turns - mark.turns,
        "result": text,
        "stop_reason": "end_turn" if status == "done" else None,
        "session_id": session.id,
        "total_cost_usd": round(usage.cost or 0.0, 6),
        "usage": api_usage(usage),
        "permission_denials": list(denials or []),
        "terminal_reason": TERMINAL_REASONS.get(status, status),
        "uuid": str(uuid.uuid4()),
        "model": session.model,
        "modelUsage": model_usage(session),  # the session so far, per model: the main agent's and its subagents'
        "tokens_kept_out": session.tokens_kept_out,
        "subagents": subagents,
        "subagent_types": by_type,  # per agent type, the session so far (total_cost_usd holds them too)
        **({"errors": [e for e in errors if e]} if errors and any(errors) else {}),
        **({"structured_output": structured} if structured is not None and status == "done" else {}),
        **(
            {
                "attempts": [
                    {
                        "description": c.description,
                        "check": c.check or None,
                        "attempts": [a.as_dict() for a in c.attempts],
                    }
                    for c in attempts
                ]
            }
            if attempts
            else {}
        ),
    }


# An MCP server's state in Claude Code's words (the init line, the mcp_status control request).
MCP_STATUS = {
    "ready": "connected",
    "starting": "pending",
    "waiting": "pending",
    "failed": "failed",
    "exited": "failed",
    "stopped": "disabled",
}
# The Claude Code release whose stream-json and control protocol agentcli speaks, for the Agent SDK's
# version check (below 2.1.248, so the SDK knows agentcli ignores ``verbatim_prompts``).
CLAUDE_CODE_VERSION = "2.1.0"


def init_message(session: SessionSurface) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "init",
        "cwd": str(session.workspace.root),
        "session_id": session.id,
        "tools": session.tools.names(),
        "model": session.model,
        "mcp_servers": [
            {"name": name, "status": MCP_STATUS.get(server.state, "failed")}
            for name, server in session.mcp_servers.servers.items()
        ],
        "permissionMode": session.permission_mode,
        "slash_commands": sorted(session.commands),
        "apiKeySource": "none",
        "claude_code_version": CLAUDE_CODE_VERSION,
        "agentcli_version": __version__,
        "output_style": "default",
        "agents": sorted(session.agent_types),
        "uuid": str(uuid.uuid4()),
    }


def task_usage(agent: Subagent | None) -> dict[str, int]:
    """What a task line reports of a subagent's latest run (its view, on ``time.monotonic``'s clock)."""
    if agent is None:
        return {"total_tokens": 0, "tool_uses": 0, "duration_ms": 0}
    return {
        "total_tokens": agent.run_tokens,
        "tool_uses": agent.run_calls,
        "duration_ms": round((time.monotonic() - agent.started) * 1000),
    }


class StreamJson:
    """Turns engine events into stream-json lines, handed to ``write``. The facts a line reports beyond its
    event (a running child's counts, the latest model call's usage) come from the view model."""

    def __init__(
        self,
        session: SessionSurface,
        write: Callable[[dict[str, Any]], None],
        *,
        partial_messages: bool = False,
        view: SessionView | None = None,
    ) -> None:
        self.session, self.write, self.partial_messages = session, write, partial_messages
        from .view import SessionView  # only stream-json needs it: -p in text or json starts without it

        self.view: SessionView = view if view is not None else SessionView()  # it folds each event in

    def common(self, event: Event) -> dict[str, Any]:
        return {
            "parent_tool_use_id": event.parent_tool_use_id,
            "session_id": self.session.id,
            "uuid": str(uuid.uuid4()),
        }

    def __call__(self, event: Event) -> None:
        self.view.apply(event, time.monotonic())
        # A model call's usage (each assistant line reads it from the view), the inbox and the questions make no
        # line: an approval is asked by a control request of its own (stream_input.py), a server's question refused.
        match self.view.change:
            case Line(event=AssistantMessage() as message):
                self.assistant(message)
            case Line(event=UserMessage() as message) if message.origin != "user" or message.agent_id != MAIN:
                # the prompt itself is not echoed
                self.write(
                    {"type": "user", "message": {"role": "user", "content": message.content}, **self.common(message)}
                )
            case Line(event=RawStreamEvent() as raw) if self.partial_messages:
                self.write({"type": "stream_event", "event": raw.event, **self.common(raw)})
            case Line(event=SubagentStarted() as started):
                self.task_started(started)
            case Line(event=ToolCallStarted() as started_call) if (
                task := self.task(started_call.agent_id)
            ) is not None:
                self.write(
                    {
                        "type": "system",
                        "subtype": "task_progress",
                        "task_id": started_call.agent_id,
                        "tool_use_id": task.tool_use_id,
                        "description": started_call.summary or started_call.name,
                        "subagent_type": task.type,
                        "usage": task_usage(task),
                        "last_tool_name": started_call.name,
                        "uuid": str(uuid.uuid4()),
                        "session_id": self.session.id,
                    }
                )
            case Line(event=SubagentFinished() as ended):
                self.task_finished(ended)
            case Line(event=Compacted() as compaction) if compaction.agent_id == MAIN:  # Claude Code's compaction
                self.write(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "compact_metadata": {"trigger": compaction.trigger, "pre_tokens": compaction.tokens_before},
                        "uuid": str(uuid.uuid4()),
                        "session_id": self.session.id,
                    }
                )
            case _:
                pass  # no line of Claude Code's stream-json says it

    def hook(self, run: dict[str, Any]) -> None:
        """A hook command starting or done (``Hooks.watch``), as Claude Code's hook_started and hook_response."""
        line: dict[str, Any] = {
            "type": "system",
            "subtype": "hook_started" if run["phase"] == "started" else "hook_response",
            "hook_id": run["id"],
            "hook_name": f"{run['event']}:{run['tool']}" if run["tool"] else run["event"],
            "hook_event": run["event"],
        }
        if run["phase"] == "finished":
            line |= {
                "output": run["stdout"] + run["stderr"],
                "stdout": run["stdout"],
                "stderr": run["stderr"],
                **({"exit_code": run["code"]} if run["code"] is not None else {}),
                "outcome": run["outcome"],
            }
        self.write({**line, "uuid": str(uuid.uuid4()), "session_id": self.session.id})

    def assistant(self, event: AssistantMessage) -> None:
        """One line per content block, as Claude Code prints them, each with the whole message's usage."""
        used = self.view.latest_usage.get(event.agent_id)
        message_id = f"msg_{uuid.uuid4().hex[:24]}"
        for block in event.content:
            message = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": used.model if used and used.model else self.session.model,
                "content": [block],
                "stop_reason": event.stop_reason,
                "stop_sequence": None,
                "usage": api_usage(used.usage if used else Usage()),
            }
            line = {"type": "assistant", "message": message, **self.common(event)}
            if event.agent_id != MAIN:
                line["agent_id"] = event.agent_id
            self.write(line)

    def task(self, agent_id: str) -> Subagent | None:
        """The running subagent ``agent_id`` (None for the main agent, an unknown or a finished one)."""
        agent = self.view.subagents.get(agent_id)
        return agent if agent is not None and not agent.finished else None

    def task_started(self, event: SubagentStarted) -> None:
        self.write(
            {
                "type": "system",
                "subtype": "task_started",
                "task_id": event.id,
                "tool_use_id": event.parent_tool_use_id,
                "description": event.description,
                "subagent_type": event.subagent_type,
                "task_type": "local_agent",
                "prompt": event.prompt,
                "uuid": str(uuid.uuid4()),
                "session_id": self.session.id,
            }
        )

    def task_finished(self, event: SubagentFinished) -> None:
        store = self.session.saved
        self.write(
            {
                "type": "system",
                "subtype": "task_notification",
                "task_id": event.id,
                "tool_use_id": event.parent_tool_use_id,
                "status": TASK_STATUSES.get(event.status, "failed"),
                "output_file": str(store.path_for(event.id)) if store else "",
                "summary": event.result,
                "usage": {**task_usage(self.view.subagents.get(event.id)), "total_tokens": event.usage.total_tokens},
                "agentcli_status": event.status,
                **receipt_fields(event),
                "uuid": str(uuid.uuid4()),
                "session_id": self.session.id,
            }
        )


def receipt_fields(event: SubagentFinished) -> dict[str, Any]:
    """agentcli's extras on a task notification: the child's receipt and its mark ("" when verified)."""
    report = event.report
    if report is None:
        return {}
    return {
        "agentcli_receipt": report.receipt(cap=1_000_000),
        "agentcli_mark": report.mark,
        "agentcli_account": report.account(),
    }
