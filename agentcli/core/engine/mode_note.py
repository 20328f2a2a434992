"""The permission mode reaches the model at the end of a request, never by rewriting its beginning.

The API's prompt cache serves the part of a request that repeats an earlier one's beginning (tools, then
the system prompt, then the messages). The system prompt names the mode the session started in; a change
afterwards (/permissions, shift+tab, plan mode on or off) becomes a note after the latest message, so the
prompt and the conversation before it stay the prefix the cache already holds. Before the model has
replied once there is nothing cached to keep: the prompt itself is made to name the mode then.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..content import NOTE_OPEN, Message, agentcli_note, as_blocks
from ..policy.permissions import Permissions
from .context import MODE_MEANING, current_mode

if TYPE_CHECKING:
    from .loop import Agent

MODE_NOTE = (
    "The permission mode is now {mode} (--permission-mode {mode}); it replaces the mode the system prompt "
    "and any earlier note name. {meaning}"
)
_TOLD = re.compile(r"The permission mode is now (\w+) \(--permission-mode")
_NAMED = re.compile(r"^Permission mode: (\w+) \(--permission-mode", re.M)


def mode_note(mode: str) -> dict[str, Any]:
    return agentcli_note(MODE_NOTE.format(mode=mode, meaning=MODE_MEANING.get(mode, "")).rstrip())


def told_mode(agent: Agent) -> str | None:
    """The mode the model was last told: by the latest note in the history, else by the system prompt; None
    when the prompt names none (--system-prompt replaced it) and no note did."""
    for message in reversed(agent.messages):
        if message.get("role") != "user":
            continue
        for block in reversed(as_blocks(message.get("content"))):
            text = block.get("text")
            if isinstance(text, str) and text.startswith(NOTE_OPEN) and (told := _TOLD.search(text)):
                return told.group(1)
    named = _NAMED.search(agent.system)
    return named.group(1) if named else None


class ModeNews:
    """What the main agent hears of a mode change, asked before each of its model calls (``Agent.notes``)."""

    def __init__(self, permissions: Permissions) -> None:
        self.permissions = permissions
        self._told: str | None = None  # the mode last told, for the history below (the usual call reads nothing)
        self._messages: list[Message] | None = None

    def __call__(self, agent: Agent) -> list[dict[str, Any]]:
        mode = self.permissions.mode
        if mode == self._told and agent.messages is self._messages:
            return []
        told, self._told, self._messages = told_mode(agent), mode, agent.messages
        if told is None or told == mode:
            return []
        if not any(message.get("role") == "assistant" for message in agent.messages):
            agent.system = current_mode(agent.system, mode, self.permissions.interactive)  # nothing cached yet
            return []
        return [mode_note(mode)]
