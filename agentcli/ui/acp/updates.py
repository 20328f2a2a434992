"""The engine's events as ACP ``session/update`` payloads, built with the SDK's own models (``acp.schema``).

Pure functions of an event: the connection (``agent.py``) decides which session they go to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import schema as s

from ...core.content import text_of, typed
from ...core.events import (
    AssistantMessage,
    Event,
    PlanUpdated,
    Preview,
    SubagentFinished,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    Usage,
    UserMessage,
)

OUTPUT_MAX_CHARS = 20_000  # of a tool's output shown in the tool call; the model got it all

# agentcli's tool kinds (and a search, by its tool's preview) as ACP's ToolKind. A task call delegates an errand: ACP
# has no kind for that, and "think" is the model's own reasoning (an editor folds it away as such), so "other".
KINDS: dict[str, s.ToolKind] = {"read": "read", "edit": "edit", "exec": "execute"}

STOP_REASONS: dict[str, s.StopReason] = {
    "done": "end_turn",
    "capped": "max_turn_requests",
    "refused": "refusal",
    "cancelled": "cancelled",
    "interrupted": "cancelled",
}


def message_chunk(text: str) -> s.AgentMessageChunk:
    return s.AgentMessageChunk(session_update="agent_message_chunk", content=s.TextContentBlock(type="text", text=text))


def thought_chunk(text: str) -> s.AgentThoughtChunk:
    return s.AgentThoughtChunk(session_update="agent_thought_chunk", content=s.TextContentBlock(type="text", text=text))


def tool_kind(event: ToolCallStarted) -> s.ToolKind:
    if event.preview == "search":
        return "search"
    return KINDS.get(event.kind, "other")


def title(event: ToolCallStarted) -> str:
    return f"{event.name} {event.summary}".strip() if event.summary else event.name


def locations(event: ToolCallStarted, root: Path) -> list[s.ToolCallLocation] | None:
    """The file a call reads or changes, as an absolute path (what an editor opens), with its line if known."""
    path = event.input.get("path")
    if not isinstance(path, str) or not path or event.preview == "search":
        return None
    offset = event.input.get("offset")
    line = offset if isinstance(offset, int) and offset >= 0 else None
    return [s.ToolCallLocation(path=str((root / path) if not Path(path).is_absolute() else Path(path)), line=line)]


def edit_diff(preview: Preview, args: dict[str, Any], root: Path) -> list[Any] | None:
    """An edit's change as ACP diff content: edit_file's old and new strings, write_file's whole file."""
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return None
    full = str(root / path) if not Path(path).is_absolute() else path
    if preview == "edit" and isinstance(args.get("new_string"), str):
        old = args.get("old_string") if isinstance(args.get("old_string"), str) else None
        return [s.FileEditToolCallContent(type="diff", path=full, old_text=old, new_text=args["new_string"])]
    if preview == "write" and isinstance(args.get("content"), str):
        return [
            s.FileEditToolCallContent(
                type="diff", path=full, old_text=current_text(Path(full)), new_text=args["content"]
            )
        ]
    return None


def current_text(path: Path) -> str | None:
    """A file's text as it is before a write (None: there is none, or it is not text)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(OUTPUT_MAX_CHARS * 10 + 1)
        return data.decode("utf-8") if len(data) <= OUTPUT_MAX_CHARS * 10 else None
    except (OSError, UnicodeDecodeError):
        return None


def tool_call(event: ToolCallStarted, root: Path, extra: list[Any] | None = None) -> s.ToolCallStart:
    content = (edit_diff(event.preview, event.input, root) if event.kind == "edit" else None) or []
    return s.ToolCallStart(
        session_update="tool_call",
        tool_call_id=event.id,
        title=title(event),
        kind=tool_kind(event),
        status="in_progress",
        content=[*content, *(extra or [])] or None,
        locations=locations(event, root),
        raw_input=event.input,
    )


def text_content(text: str) -> s.ContentToolCallContent:
    return s.ContentToolCallContent(type="content", content=s.TextContentBlock(type="text", text=text))


def shown(output: str) -> str:
    """A tool's output as the call shows it: at most OUTPUT_MAX_CHARS."""
    return (
        output
        if len(output) <= OUTPUT_MAX_CHARS
        else (output[:OUTPUT_MAX_CHARS] + f"\n… {len(output) - OUTPUT_MAX_CHARS} more characters")
    )


def live_output(event: ToolOutput) -> s.ToolCallProgress:
    """A running command's output so far, as the call's content (replaced by each report, then by the result)."""
    return s.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=event.id,
        status="in_progress",
        content=[text_content(shown(event.text))],
    )


def tool_call_done(event: ToolCallFinished, extra: list[Any] | None = None) -> s.ToolCallProgress:
    output = shown(event.output)
    return s.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=event.id,
        status="failed" if event.is_error else "completed",
        content=[*(extra or []), text_content(output)] if output else extra or None,
        raw_output=event.output,
    )


PLAN_STATUSES = ("pending", "in_progress", "completed")


def plan_update(event: PlanUpdated) -> s.AgentPlanUpdate:
    """``todo_write``'s plan as ACP's: every entry, in order. agentcli's items have no priority (todo_write
    drops Claude Code's), so each is ``medium``; an unknown status reads as ``pending``."""
    return s.AgentPlanUpdate(
        session_update="plan",
        entries=[
            s.PlanEntry(
                content=str(item.get("content") or ""),
                priority="medium",
                status=item["status"] if item.get("status") in PLAN_STATUSES else "pending",  # type: ignore[arg-type]  # checked against PLAN_STATUSES
            )
            for item in event.items
        ],
    )


def replayed(event: Event, root: Path) -> Any:
    """A stored event as the update that shows it again (session/load), or None: the user's prompts, the
    answers, the tool calls and the plan; streaming deltas are not stored, their whole messages are."""
    if isinstance(event, UserMessage) and event.origin == "user" and (said := typed(event.content)):
        return s.UserMessageChunk(
            session_update="user_message_chunk", content=s.TextContentBlock(type="text", text=said)
        )
    if isinstance(event, AssistantMessage) and (said := text_of(event.content)):
        return message_chunk(said)
    if isinstance(event, ToolCallStarted):
        return tool_call(event, root)
    if isinstance(event, ToolCallFinished):
        return tool_call_done(event)
    if isinstance(event, PlanUpdated):
        return plan_update(event)
    return None


def background_result(call: str, event: SubagentFinished) -> s.ToolCallProgress:
    """A background child's result, shown in the task call that started it (which said it started)."""
    footer = event.report.footer if event.report is not None else f"[{event.id} · {event.status}]"
    return s.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=call,
        status="failed" if event.status == "failed" else "completed",
        content=[text_content(f"{event.result}\n\n{footer}" if event.result else footer)],
    )


def usage_update(used: int, size: int, total: Usage) -> s.UsageUpdate:
    cost = s.Cost(amount=total.cost, currency="USD") if total.cost is not None else None
    return s.UsageUpdate(session_update="usage_update", used=used, size=size, cost=cost)


def mode_update(mode: str) -> s.CurrentModeUpdate:
    return s.CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode)


MODE_TEXT = {
    "default": ("Default", "Reads run freely; edits and commands ask first."),
    "acceptEdits": ("Accept edits", "Edits in the workspace run without asking; commands ask."),
    "plan": ("Plan", "Read-only: explore and plan, change nothing."),
    "bypassPermissions": ("Bypass permissions", "Everything runs without asking (deny rules still hold)."),
}


def modes(current: str, names: tuple[str, ...]) -> s.SessionModeState:
    return s.SessionModeState(
        current_mode_id=current,
        available_modes=[
            s.SessionMode(
                id=name, name=MODE_TEXT.get(name, (name, ""))[0], description=MODE_TEXT.get(name, ("", None))[1]
            )
            for name in names
        ],
    )


def commands_update(commands: list[tuple[str, str, str]]) -> s.AvailableCommandsUpdate:
    """``commands``: (name, description, argument hint) each."""
    return s.AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            s.AvailableCommand(
                name=name,
                description=description or name,
                input=s.AvailableCommandInput(root=s.UnstructuredCommandInput(hint=hint)) if hint else None,
            )
            for name, description, hint in commands
        ],
    )
