"""Messages the engine's sink and the widgets post to the app; the app's handlers act on them."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from textual.app import App
from textual.message import Message

from ...core.events import Event

AnApp = TypeVar("AnApp", bound=App[Any])
AMessage = TypeVar("AMessage", bound=Message)


def unless_closing(
    handler: Callable[[AnApp, AMessage], Awaitable[None]],
) -> Callable[[AnApp, AMessage], Awaitable[None]]:
    """For the app's handlers of what the engine, its workers and its threads post, which arrive on their own
    time: once the app is closing, nobody is there to be shown anything, so they do nothing.

    Closing is ``not app.is_running``. Textual turns it off first thing in ``App._shutdown``, before it closes
    the screens; Pilot's teardown (the end of ``run_test``, without ``exit()``) closes them while the message
    loop still runs, and then lets it drain its queue with no screen left, where mounting and querying raised.
    (``_closing`` comes only once the screens are gone, and ``_exit`` only with ``exit()``.) After ``exit()``
    (ctrl+q, ctrl+c twice) the app is running until its loop ends, on a whole screen: nothing changes there."""

    @functools.wraps(handler)
    async def handle(app: AnApp, message: AMessage) -> None:
        if app.is_running:
            await handler(app, message)

    return handle


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
