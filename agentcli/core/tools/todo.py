"""``todo_write``: the agent's plan, which the user sees (Claude Code's ``TodoWrite``, in its input shape).

Each call replaces the whole list: ``todos`` is every item in order, each ``{"content", "status",
"activeForm"}`` with status ``pending``, ``in_progress`` or ``completed``. The tool checks the list and
emits it as a ``PlanUpdated`` event (front ends draw it, the store keeps it, so a resumed session shows
it again); it changes nothing on disk, so it never asks. When to keep a plan is said in the system
prompt (``context.PLAN_GUIDANCE``).
"""

from __future__ import annotations

import typing
from typing import Any

from ..errors import ToolError
from ..events import PlanUpdated, StepStatus
from .base import Tool, ToolContext

STATUSES: tuple[StepStatus, ...] = typing.get_args(StepStatus)
MAX_ITEMS = 100
MAX_ITEM_CHARS = 1_000


class TodoWrite(Tool):
    name = "todo_write"
    role = "plan"  # the plan the user sees: a prompt speaks of planning only to an agent given it
    built_in_types = ("bash",)
    list_place = 13  # its place when a built-in agent type's tools are listed
    claude_name = "TodoWrite"
    on_demand = False  # the plan the prompt asks for
    description = (
        "Write your plan as a todo list the user sees. Each call replaces the whole list: every item, in order, "
        "with its status. Keep one item in_progress, and mark each completed as soon as it is done."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The whole plan, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The step: 'Run the tests'."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "description": "As it is done: 'Running the tests'."},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    }
    kind = "read"  # writes nothing: free in every permission mode

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        items = plan_items(args["todos"])
        ctx.emit(PlanUpdated(items=items, agent_id=ctx.agent_id, parent_tool_use_id=ctx.parent_tool_use_id))
        done = sum(item["status"] == "completed" for item in items)
        if not items:
            return "The plan is now empty."
        return (
            f"The plan has {len(items)} item{'s' if len(items) != 1 else ''}, {done} completed; the user "
            "sees it. Keep it current as you work: mark each item completed as soon as it is done."
        )

    def summary(self, args: dict[str, Any]) -> str:
        todos = args.get("todos")
        if not isinstance(todos, list):
            return ""
        done = sum(isinstance(t, dict) and t.get("status") == "completed" for t in todos)
        return f"{len(todos)} item{'' if len(todos) == 1 else 's'}, {done} completed"


def plan_items(todos: Any) -> list[dict[str, str]]:
    """The plan as checked items (``content``, ``status``, ``active_form``); ToolError names what is wrong.
    Claude Code's older fields (``id``, ``priority``) are accepted and left out."""
    if len(todos) > MAX_ITEMS:
        raise ToolError(f"todo_write takes at most {MAX_ITEMS} items, not {len(todos)}; group small steps.")
    items: list[dict[str, str]] = []
    for number, todo in enumerate(todos, 1):
        if not isinstance(todo, dict):
            raise ToolError(f"todo_write: item {number} must be an object with content and status.")
        content, status, active = todo.get("content"), todo.get("status"), todo.get("activeForm", "")
        if not isinstance(content, str) or not content.strip():
            raise ToolError(f"todo_write: item {number} needs a non-empty 'content' string.")
        if status not in STATUSES:
            raise ToolError(f"todo_write: item {number} has status {status!r}; use one of {', '.join(STATUSES)}.")
        if not isinstance(active, str):
            raise ToolError(f"todo_write: item {number}'s 'activeForm' must be a string.")
        items.append({"content": _one_line(content), "status": status, "active_form": _one_line(active)})
    return items


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ITEM_CHARS else text[: MAX_ITEM_CHARS - 1] + "…"
