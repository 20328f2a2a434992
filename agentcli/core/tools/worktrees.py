"""The main agent's worktree tools: the diff of an isolated subagent's worktree, and merging or discarding it."""

from __future__ import annotations

import asyncio
from typing import Any

from ..storage.worktrees import act, diff, find
from .base import Tool, ToolContext


class WorktreeDiff(Tool):
    name = "worktree_diff"
    brief = "a worktree subagent's changes"  # its line in the index of tools on demand (on_demand.py)
    main_only = True
    description = (
        "Show the changes an isolated subagent (task with isolation: worktree) made in its own "
        "worktree, as a unified diff. Read-only."
    )
    input_schema = {
        "type": "object",
        "properties": {"id": {"type": "string", "description": "The subagent's id, such as sa-3."}},
        "required": ["id"],
        "additionalProperties": False,
    }
    kind = "read"
    key_arg = "id"

    def __init__(self, session: str) -> None:
        self.session = session

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return await asyncio.to_thread(lambda: diff(find(ctx.workspace.root, args["id"], self.session)))


class WorktreeAction(Tool):
    name = "worktree"
    brief = "merge or discard a subagent's worktree"  # its line in the index of tools on demand (on_demand.py)
    main_only = True
    description = (
        "Merge an isolated subagent's worktree into the user's working tree (a three-way apply that "
        "refuses, changing nothing, when a file changed on both sides in overlapping places), or "
        "discard it. Either way its worktree and branch are removed. Only when the user asks."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["merge", "discard"]},
            "id": {"type": "string", "description": "The subagent's id, such as sa-3."},
        },
        "required": ["action", "id"],
        "additionalProperties": False,
    }
    kind = "edit"
    key_arg = "id"

    def __init__(self, session: str) -> None:
        self.session = session

    def summary(self, args: dict[str, Any]) -> str:
        return f"{args.get('action', '')} {args.get('id', '')}".strip()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        running = ctx.subagents.is_running if ctx.subagents is not None else None
        return await asyncio.to_thread(act, ctx.workspace.root, args["action"], args["id"], self.session, running)
