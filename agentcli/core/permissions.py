"""Who may run what: permission modes, and approval requests to the user.

The engine asks ``Permissions.authorize`` before every tool call. In a front end
with a user, calls that need a yes become an ``ApprovalRequested`` event whose
future the front end resolves; headless runs refuse them, naming the flag that
would allow them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .events import ALLOW_ALWAYS, ALLOW_ONCE, ALLOW_SESSION, ApprovalRequested

if TYPE_CHECKING:
    from .tools.base import Tool, ToolContext

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")

# What each mode lets run without asking, by tool kind.
_FREE: dict[str, set[str]] = {
    "default": {"read", "task"},
    "acceptEdits": {"read", "task", "edit"},
    "plan": {"read", "task"},
    "bypassPermissions": {"read", "task", "edit", "exec"},
}


@dataclass
class Permissions:
    mode: str = "default"
    interactive: bool = False  # a user is there to answer approval requests
    session_allowed: set[str] = field(default_factory=set)  # tool names allowed for this session

    async def authorize(self, tool: "Tool", args: dict[str, Any], ctx: "ToolContext") -> str | None:
        """None when the call may run; otherwise the sentence the model gets back."""
        if tool.kind in _FREE.get(self.mode, _FREE["default"]) or tool.name in self.session_allowed:
            return None
        if self.mode == "plan":
            return f"{tool.name} is not allowed in plan mode, which only reads and searches."
        if not self.interactive:
            flag = "acceptEdits" if tool.kind == "edit" else "bypassPermissions"
            return (f"{tool.name} needs approval, and no one can approve it in this mode; "
                    f"run with --permission-mode {flag} to allow it.")
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        ctx.emit(ApprovalRequested(tool=tool.name, input=args, description=ctx.agent_description, future=future,
                                   agent_id=ctx.agent_id, parent_tool_use_id=ctx.parent_tool_use_id))
        answer = await future
        if answer in (ALLOW_SESSION, ALLOW_ALWAYS):
            self.session_allowed.add(tool.name)
        if answer in (ALLOW_ONCE, ALLOW_SESSION, ALLOW_ALWAYS):
            return None
        return f"The user denied this {tool.name} call. Do not retry it; ask or take another approach."
