"""Opening the session after the first screen is drawn.

Importing the engine and opening the session (its store, agent files, tools, a resumed transcript)
cost more than drawing the whole screen, so the input, the status line and the footer come first
and a thread opens the session. Whatever the user sends meanwhile waits in the queue under the
conversation and goes out, in order, once the session is open; a resumed conversation is drawn then.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.worker import WorkerCancelled, WorkerFailed

from ...core.door import in_thread, project_dir, writable_folder
from .. import slash
from ..notify import Notifier
from .base import AppBase
from .messages import SessionOpened
from .resume import SessionError, open_session, show_restored
from .widgets.prompt import PromptBar

RESUME_WIDGETS = 40  # messages and tool calls drawn when a session is resumed; scrolling up loads more

if TYPE_CHECKING:
    from ...core.door import LLM, EngineSettings, SessionSurface


@dataclass(frozen=True)
class Opening:
    """What the session is opened from: a new one, or the one ``resume`` / ``continue_`` name."""

    settings: EngineSettings
    root: Path
    llm: LLM | None = None
    interactive: bool = True
    resume: str | None = None
    continue_: bool = False

    @property
    def new(self) -> bool:
        """A new conversation: its welcome line needs no session, so it is part of the first screen."""
        return self.resume is None and not self.continue_

    def open(self, post: Callable[[SessionOpened], object]) -> SessionSurface | None:
        """Runs in a thread: open the session and post it (or the sentence saying why it could not)."""
        try:
            session, _ = open_session(
                self.settings,
                self.root,
                llm=self.llm,
                interactive=self.interactive,
                resume=self.resume,
                continue_=self.continue_,
            )
        except SessionError as exc:
            post(SessionOpened(None, str(exc)))
            return None
        except Exception as exc:  # a bug: said in one line all the same, as the app closes
            post(SessionOpened(None, f"the session could not open: {type(exc).__name__}: {exc}"))
            return None
        post(SessionOpened(session))
        return session


def cannot_save(root: Path) -> str:
    """Why sessions cannot be saved for ``root`` (one sentence), or "": the one failure of opening that is
    worth telling before the screen is drawn rather than just after."""
    try:
        writable_folder(project_dir(root))
    except SessionError as exc:
        return str(exc)
    return ""


def open_after_paint(app: AppBase, opening: Opening) -> None:
    """Start opening the session in a thread (called once the first screen is up); ``app.opener`` is its
    future, which quitting waits for, to close the session all the same."""
    app.opener = in_thread(lambda: opening.open(app.post_message), "open-session")  # errors too: quitting
    # never waits for nothing


async def attach(app: AppBase, session: SessionSurface) -> None:
    """The app now works on ``session``: its events, its commands, and what a resumed one holds."""
    app.session = session
    app.turns.mailbox = session.steering  # what the user steers into a running turn
    session.asks_user = True  # a server's question comes as ElicitationRequested; screens/elicitation.py asks it
    session.subscribe(app.deliver)  # first the warnings it gave while opening: kept until restored
    session.add_attention(Notifier(session.settings.notifications, os.environ, app.signal))
    bar = app.query_one(PromptBar)
    bar.commands, bar.mention_choices = (
        (lambda: slash.session_commands(session)),
        session.mention_choices,
    )  # read on each key:
    # an MCP server that connects later adds its prompts
    app.refresh_status()
    await show_restored(app, RESUME_WIDGETS)
    app.refresh_status()  # the panel's context bars, now that the subagents are back


async def session_opened(app: AppBase, message: SessionOpened) -> bool:
    """The session is open: attach it and warm up; True, for the app to send what the user sent meanwhile.
    Or it could not open: the app closes and run_tui says why."""
    if message.session is None:
        app.open_error = message.error
        app.exit(1)
        return False
    await attach(app, message.session)
    app.warm_up()
    return True


async def close(app: AppBase) -> None:
    """Quitting mid-turn: stop the engine first, so its last records are written, then close the session
    (one that was still opening too)."""
    work = app.turns.work
    if work is not None and not work.is_finished:
        work.cancel()
        try:
            await asyncio.wait_for(work.wait(), timeout=5)
        except (WorkerCancelled, WorkerFailed, TimeoutError):
            pass
    if app.session is None and app.opener is not None:
        try:
            app.session = await asyncio.wrap_future(app.opener)
        except Exception:  # it never opened: nothing to close
            return
    if app.session is not None:
        await app.session.aclose("prompt_input_exit")  # SessionEnd's reason: the user quit
