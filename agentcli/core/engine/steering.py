"""Steering: messages sent to an agent while it works, read at its next turn boundary (after the tool results
it waits for), so it can change course without being interrupted.

One mailbox for every agent: a running subagent's (``/steer``, ``m`` in the panel, the ``message_subagent``
tool; its boundary is ``subagent_finish.boundary``) and the main agent's (the user's "steer" key in the front ends;
the loop reads it before each model call, after the tool results). Each message reaches the model in the same
words (STEER), naming who sent it.
"""

from __future__ import annotations

from typing import Any

from ..content import FROM_AGENTCLI, agentcli_note

STEER = "A message from the {source} while you work (not a tool result; take it into account):\n\n{text}"
# Who a subagent's note names as its writer when it carries the user's words: "From agentcli, not the user"
# before "A message from the user" read as a contradiction to a model playing the child (issue 38).
RELAYED = "From agentcli, passing on the user's words: "


class Steers:
    """Messages waiting for an agent's next turn boundary, oldest first, each with who sent it."""

    def __init__(self) -> None:
        self.waiting: list[tuple[str, str]] = []  # (source, text)
        self.delivered: list[tuple[str, str]] = []  # what take_notes handed to the model, oldest first

    def __bool__(self) -> bool:
        return bool(self.waiting)

    def add(self, text: str, source: str = "user") -> str:
        """Queue ``text`` from ``source`` ("user" or "main agent"); "" when queued, else why not."""
        if not text.strip():
            return "The message is empty; say what the agent should know."
        self.waiting.append((source, text.strip()))
        return ""

    def from_user(self) -> tuple[tuple[str, bool], ...]:
        """What the user (not the main agent, which knows what it sent) told this agent: each text, and
        whether the model read it (False: it came after the agent's last turn boundary)."""
        return tuple(
            (text, read)
            for read, messages in ((True, self.delivered), (False, self.waiting))
            for source, text in messages
            if source == "user"
        )

    def take(self) -> list[str]:
        """The texts waiting, and an empty mailbox (what a front end gives back when the turn ended first)."""
        texts, self.waiting = [text for _, text in self.waiting], []
        return texts

    def take_notes(self, users_own: bool = False) -> list[dict[str, Any]]:
        """The messages waiting as the model reads them (one text block each, in STEER's words, in agentcli's markup,
        which no tool result can write: content.quoted), and an empty mailbox. Each says who wrote it
        (``said_by``)."""
        waiting, self.waiting = self.waiting, []
        self.delivered += waiting
        return [
            agentcli_note(STEER.format(source=source, text=text), said_by=said_by(source, users_own))
            for source, text in waiting
        ]


def said_by(source: str, users_own: bool) -> str:
    """Who a steering note says wrote it: nobody for the main agent's own user, agentcli passing on the user's
    words to a child, agentcli alone for the main agent's messages."""
    if source != "user":
        return FROM_AGENTCLI
    return "" if users_own else RELAYED
