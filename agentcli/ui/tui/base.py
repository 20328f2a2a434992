"""The app's parts and its small verbs: what the helper modules (commands.py, controls.py, opening.py, resume.py)
are handed, as an ``AppBase``.

The app (app.py) runs those helpers, from its key bindings, message handlers and commands; they take this base
class, never the app, so no helper imports app.py back. Turn state is the turn controller's (ui/turns.py).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.worker import Worker, WorkerCancelled, WorkerFailed

from ...core.door import context_window
from ...core.events import Event
from .. import plugin_slash, slash
from ..escapes import visible_event
from ..slash import still_running
from ..turns import Turns
from ..view import SessionView
from .messages import EngineEvent
from .sink import MergingSink
from .theme import AGENTCLI_THEME, start_in
from .widgets.conversation import Conversation
from .widgets.plan import PlanBlock
from .widgets.prompt import PromptInput
from .widgets.queue import QueuedMessages
from .widgets.side_panel import SidePanel
from .widgets.status_bar import StatusBar
from .widgets.status_line import StatusLine
from .widgets.working import WorkingLine
from .work import report, warm_up_import

if TYPE_CHECKING:
    from ...core.door import EngineSettings, SessionSurface


class AppBase(App[int]):
    def __init__(
        self,
        settings: EngineSettings,
        root: Path,
        *,
        session: SessionSurface | None = None,
        testing: bool = False,
        clock: Callable[[], float] = time.monotonic,
        credentials_missing: bool = False,
    ) -> None:
        super().__init__()
        self.engine_settings = settings  # what the user chose: what the status bar says until the session is open
        self.root = session.workspace.root if session is not None else root
        self.session: SessionSurface = session  # type: ignore[assignment]  # None until opened (see ready())
        self.opener: Future[SessionSurface | None] | None = None  # the session opening after the first screen
        self.open_error = ""  # why the session could not open, said once the app has closed
        self.welcomed = False
        self.testing = testing  # no blinking cursor, no animation, no clock times: stable snapshots
        self.clock = clock
        self.no_key = credentials_missing
        self.opened: list[Event] | None = []  # events until restore() shows the session: its opening warnings
        self.view = SessionView(stall_after=settings.subagent_stall_seconds)
        self.switch_to: str | None = None  # a session picked with /resume: run_tui opens it next
        self.subagents = self.view.subagents  # by id
        self.first_paint_without_sdk: bool | None = None
        self.sink = MergingSink(lambda event: self.post_message(EngineEvent(visible_event(event))))
        self.last_escape = -10.0  # when esc was pressed on an empty input (esc esc opens /rewind)
        self.conversation = Conversation(show_times=not testing, id="conversation")
        self.conversation.now = clock
        self.conversation.view = self.view
        self.queued = QueuedMessages()
        # busy, the queue, the steered messages, ctrl+c's arming, results to read (ui/turns.py)
        self.turns: Turns[Worker[None]] = Turns(settings.steer_on_enter, self.show_queue)
        self.plan = PlanBlock()  # the main agent's todo_write list, above the prompt
        self.panel = SidePanel(show_times=not testing, stall_after=self.view.stall_after)
        self.panel.now = clock
        self.working = WorkingLine(clock, self.view, animate=not testing)
        self.register_theme(AGENTCLI_THEME)
        start_in(self, settings.theme if settings.theme in self.available_themes else "agentcli")
        if testing:
            self.animation_level = "none"

    @property
    def prompt(self) -> PromptInput:
        return self.screen_stack[0].query_one(PromptInput)

    @property
    def busy(self) -> bool:
        return self.turns.busy

    def ready(self) -> bool:
        """Whether the session is open and shown (until then, what the user sends waits in the queue)."""
        return self.session is not None and self.opened is None

    def warm_up(self) -> None:
        """The session is open: import the SDK in a thread (then freeze what startup and it made), start MCP servers."""
        self.first_paint_without_sdk = "anthropic" not in sys.modules
        self.run_worker(warm_up_import(bool(self.session.restored_events)), thread=True, group="warm-up")
        self.session.start_servers()

    def deliver(self, event: Event) -> None:
        """The session's subscriber: hand the event to the app's message queue (kept until restore() ran)."""
        if self.opened is not None:
            self.opened.append(event)
        else:
            self.sink(event)

    def signal(self, text: str) -> None:
        """Write a terminal notification (ui/notify.py) straight to the terminal, past the screen's drawing."""
        if self._driver is not None:
            self._driver.write(text)
            self._driver.flush()

    # -- turns --

    def start_work(self, work: Coroutine[Any, Any, Any], kind: str) -> None:
        """Run a user message (or /compact) in a worker; it reports back with TurnEnded."""
        self.turns.started(
            self.run_worker(
                report(work, kind, self.post_message), name=kind, group="turn", exclusive=True, exit_on_error=False
            )
        )
        self.working.start()
        self.refresh_status()
        self.refresh_bindings()

    def read_results(self) -> None:
        """A background child's result waits and the main agent is idle: a turn starts by itself."""
        waiting = bool(self.view.results_waiting and self.session.results_waiting) and not self.no_key
        if self.turns.read_results_now(waiting):
            self.start_work(self.session.read_results(), "turn")

    async def refuse_while_busy(self) -> bool:
        if not self.busy:
            return False
        self.notify("The agent is still working: wait for it, or press esc to interrupt.", severity="warning")
        return True

    def show_queue(self) -> None:
        self.queued.show(self.turns.queued, self.turns.steered)

    def action_interrupt(self) -> None:
        """esc: stop the running turn; queued messages, and steered ones it has not read, go back to the input,
        before any draft it holds (they were typed first), so nothing typed is lost. With no turn running: stop a
        /plugin at work."""
        answering = self.busy
        self.turns.interrupt()
        for worker in [] if answering else self.plugin_at_work():
            self.call_later(self.stop_plugin, worker)
        if text := self.turns.take_back():
            draft = self.prompt.text
            self.prompt.load_text(f"{text}\n{draft}" if draft.strip() else text)
            self.prompt.move_cursor(self.prompt.document.end)

    def plugin_at_work(self) -> list[Worker[None]]:
        """The /plugin command running (commands.plugin), not yet told to stop."""
        return [w for w in self.workers if w.group == "plugin" and w.is_running and not w.is_cancelled]

    async def stop_plugin(self, worker: Worker[None]) -> None:
        """Stop a /plugin: cancelled, it stops its git and removes the clone (``clones.stoppable``); then say so."""
        worker.cancel()
        with contextlib.suppress(WorkerCancelled, WorkerFailed):
            await worker.wait()
        await self.conversation.add_notice(plugin_slash.stopped(worker.name), "warning")

    def disarm_ctrl_c(self) -> None:
        self.turns.disarm()

    # -- what the screen shows --

    def refresh_status(self) -> None:
        bar = self.query_one(StatusBar)
        s, settings = self.session, self.engine_settings  # what the user chose; the counts come from the view
        model, mode = (s.model, s.permission_mode) if s else (settings.model, settings.permission_mode)
        window, used = (s.context_window(), s.context_used()) if s else (context_window(model), 0)
        bar.show(self.view.status(model=model, mode=mode, context_window=window, busy=self.busy, no_key=self.no_key))
        self.panel.show_context(used, used + self.view.subagent_context, window)
        if s:
            self.query_one(StatusLine).changed(s, self.busy)

    def show_panel(self) -> None:
        self.panel.open()

    # -- quitting --

    def request_quit(self) -> None:
        self.run_worker(self._ask_before_quitting(), group="quit", exclusive=True)

    async def _ask_before_quitting(self) -> None:
        from .screens.quit import ask_to_quit  # here, as the other question screens: loaded when first asked

        session = self.session
        left = await slash.unmerged_attempts(session, self.view) if session else []  # best-of-N attempts left
        ask_to_quit(
            self,
            still_running(session) if session else "",
            slash.attempts_question(left) if left else "",
            (lambda: slash.discard_all(session, left)) if session and left else None,
        )
