"""Messages the engine's sink and the widgets post to the app; the app's handlers act on them."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from ...core.events import Event


class EngineEvent(Message):
    """One engine event, carried onto the app's message queue."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class TurnEnded(Message):
    """The worker running a user message stopped: done, capped, error, no_key or interrupted."""

    def __init__(self, status: str, detail: str = "") -> None:
        super().__init__()
        self.status = status
        self.detail = detail


class AboutSubagent(Message):
    """A key on a subagent's entry (or the transcript's): what the app should do about ``agent_id``."""

    def __init__(self, agent_id: str) -> None:
        super().__init__()
        self.agent_id = agent_id


class OpenTranscript(AboutSubagent):
    """enter on its entry or its task call: its transcript."""


class CancelSubagent(AboutSubagent):
    """x: cancel it; it sums up what it found."""


class SteerSubagent(AboutSubagent):
    """m on an entry: the input gets "/steer ID ", for the line of text to send that subagent."""


class WrapUpSubagent(AboutSubagent):
    """w: ask it to finish now with what it has."""


class SessionOpened(Message):
    """The session the app works on is open (the worker that opened it after the first screen); or it
    could not be: ``error`` says why, in one sentence."""

    def __init__(self, session: Any, error: str = "") -> None:
        super().__init__()
        self.session = session
        self.error = error
