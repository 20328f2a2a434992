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


class OpenTranscript(Message):
    def __init__(self, agent_id: str) -> None:
        super().__init__()
        self.agent_id = agent_id


class CancelSubagent(Message):
    def __init__(self, agent_id: str) -> None:
        super().__init__()
        self.agent_id = agent_id


class SteerSubagent(Message):
    """m on an entry: the input gets "/steer ID ", for the line of text to send that subagent."""

    def __init__(self, agent_id: str) -> None:
        super().__init__()
        self.agent_id = agent_id


class WrapUpSubagent(Message):
    def __init__(self, agent_id: str) -> None:
        super().__init__()
        self.agent_id = agent_id


class SessionOpened(Message):
    """The session the app works on is open (the worker that opened it after the first screen); or it
    could not be: ``error`` says why, in one sentence."""

    def __init__(self, session: Any, error: str = "") -> None:
        super().__init__()
        self.session = session
        self.error = error
