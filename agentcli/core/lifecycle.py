"""A session's beginning and end as its hooks hear of them, and the moments it needs the user.

SessionStart runs before the first prompt goes out (``source`` startup or resume), and again after /clear
(``clear``; SessionEnd with reason ``clear`` first); what its hooks add reaches the model with that prompt.
The compaction of the main agent runs it with ``compact`` itself (engine/compaction.py). SessionEnd runs
when the session closes.

The user is needed, and may not be looking, when a question waits (an approval, a server's question), a
background subagent finishes, or a turn ends: each front end with a terminal is told (``attention``, which
it turns into a terminal notification, ui/notify.py), and the Notification hook runs with Claude Code's
``notification_type``. Only a session with a user there (interactive) has such moments.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from .engine.subagent_record import SubagentRecord
from .events import ApprovalRequested, ElicitationRequested, Event, SubagentFinished
from .policy.hooks import Hooks
from .tool_facts import KNOWN

# Claude Code's notification types, and agentcli's own for a background subagent that finished.
PERMISSION, IDLE, ELICITATION, CHILD_DONE = (
    "permission_prompt",
    "idle_prompt",
    "elicitation_dialog",
    "subagent_finished",
)

T = TypeVar("T")
Attention = Callable[[str, str], None]  # (notification_type, message): a front end's way to reach the user


class Lifecycle:
    def __init__(self, hooks: Hooks, source: str, interactive: bool, children: dict[str, SubagentRecord]) -> None:
        self.hooks, self.interactive, self.children = hooks, interactive, children
        self.due: list[tuple[str, str]] = [("SessionStart", source)]  # what runs before the next prompt
        self.attention: list[Attention] = []  # front ends that reach the user (a terminal notification)
        self.ended = False

    async def starting(self) -> tuple[str, ...]:
        """Run the SessionEnd and SessionStart hooks due before this prompt; the notes of what they add."""
        due, self.due = self.due, []
        added: list[str] = []
        for event, value in due:
            if event == "SessionEnd":
                await self.hooks.session_end(value)
            else:
                added += await self.hooks.session_start(value)
        return tuple(added)

    def cleared(self) -> None:
        """/clear: the conversation that ended and the one that begins, before the next prompt."""
        self.due = [("SessionEnd", "clear"), ("SessionStart", "clear")]

    async def end(self, reason: str) -> None:
        """SessionEnd, once."""
        if not self.ended:
            self.ended = True
            await self.hooks.session_end(reason)

    def saw(self, event: Event) -> None:
        """An event of the session's: one that means the user is needed is said to them."""
        if isinstance(event, ApprovalRequested):
            self.need(PERMISSION, f"agentcli needs your permission to use {KNOWN.claude_name(event.tool)}")
        elif isinstance(event, ElicitationRequested):
            self.need(ELICITATION, f"The MCP server {event.server} asks you a question")
        elif isinstance(event, SubagentFinished) and (child := self.children.get(event.id)) and child.background:
            self.need(CHILD_DONE, f"The background subagent {event.id} finished ({event.status})")

    async def turn(self, work: Awaitable[T]) -> T:
        """A turn of the main agent; once it ended, the session waits for the user."""
        result = await work
        self.need(IDLE, "agentcli is waiting for your input")
        return result

    def need(self, kind: str, message: str) -> None:
        if not self.interactive:
            return
        for reach in self.attention:
            reach(kind, message)
        self.hooks.notify(kind, message)
