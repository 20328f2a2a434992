"""The full-screen app: a conversation with the main agent, and a live side panel of its subagents.

The session opens after the first screen is drawn (opening.py). The engine runs in a worker on the
app's event loop. Its sink posts each event as an ``EngineEvent`` message; the handlers here route it
to the widgets. Workers never touch widgets.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen

from ...config import Settings
from ...core.door import MISSING_KEY_MESSAGE, MissingCredentials, resolve_credentials
from ...core.events import (
    MAIN,
    ApprovalRequested,
    ApprovalsWaiting,
    ElicitationRequested,
    Event,
    HistoryCleared,
    PlanUpdated,
    SteerDelivered,
    SubagentFinished,
    SubagentStarted,
)
from ...signals import run_until_signal
from .. import slash
from . import controls, keys
from .base import AppBase
from .commands import escape_on_empty_input, palette_commands, run_command
from .messages import (
    CancelSubagent,
    EngineEvent,
    OpenTranscript,
    SessionOpened,
    SteerSubagent,
    TurnEnded,
    WrapUpSubagent,
    unless_closing,
)
from .opening import RESUME_WIDGETS, Opening, attach, cannot_save, close, open_after_paint, session_opened
from .resume import show_tail, welcome
from .screens.layout import OneLayoutScreen
from .screens.transcript import TranscriptScreen
from .widgets.footer import Footer
from .widgets.prompt import PromptBar, PromptInput
from .widgets.status_bar import StatusBar
from .widgets.status_line import StatusLine

if TYPE_CHECKING:
    from ...core.door import LLM, EngineSettings, SessionSurface

__all__ = ["AgentApp", "RESUME_WIDGETS", "make_app", "run_tui"]


class AgentApp(AppBase):
    CSS_PATH = "app.tcss"
    TITLE = "agentcli"
    AUTO_FOCUS = "#prompt, ModalScreen *"  # the prompt first: a later move off the conversation restyles it all
    BINDINGS = [
        Binding("ctrl+c", "ctrl_c", "Interrupt, clear, or quit (press twice)", show=False, priority=True),
        Binding("escape", "interrupt", "Interrupt"),
        Binding("escape", "rewind_on_escape", show=False),  # twice on an empty input: /rewind
        Binding("ctrl+t", "toggle_panel", "Panel"),
        Binding("ctrl+o", "open_transcript", "Transcript"),
        Binding("shift+tab", "cycle_mode", "Mode", priority=True),
        # Before the input's own (its cursor's page and selection keys): the conversation scrolls from anywhere
        # on the main screen. Plain home and end stay the input's, to the start and end of the line.
        *(
            Binding(key, f"scroll_conversation('{how}')", show=False, priority=True)
            for key, how in controls.SCROLL_KEYS.items()
        ),
    ]

    def __init__(
        self,
        opening: Opening,
        *,
        session: SessionSurface | None = None,
        testing: bool = False,
        clock: Callable[[], float] = time.monotonic,
        credentials_missing: bool = False,
        first_prompt: str | None = None,
    ) -> None:
        super().__init__(
            opening.settings,
            opening.root,
            session=session,
            testing=testing,
            clock=clock,
            credentials_missing=credentials_missing,
        )
        self.opening = opening
        self.first_prompt = first_prompt  # `agentcli "question"`: sent once the session is open

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield self.conversation
            yield self.panel
        yield self.working
        yield self.plan
        yield self.queued
        yield PromptBar(self.root, blink=not self.testing)  # its commands come with the session (opening.attach)
        yield StatusLine()  # the statusLine setting's command, under the prompt
        yield StatusBar(id="status")
        yield Footer()

    async def on_mount(self) -> None:
        self.refresh_status()
        if self.session is not None:  # given one (tests): as it will be once opened
            await attach(self, self.session)
        elif self.opening.new:
            await welcome(self)
        else:  # a resumed session's latest part, from its file, while the session opens
            await show_tail(self, self.opening.resume, self.opening.continue_, RESUME_WIDGETS)
        self.prompt.focus()
        self.prompt.to_panel = lambda: controls.focus_panel(self)  # tab on an empty input
        if self.first_prompt:  # waits in the queue until the session is open (without a key: in the input)
            await self.submit(self.first_prompt)
        if self.no_key:
            from .screens.no_key import NoKeyScreen  # here, as the question screens below: few launches draw them

            self.push_screen(NoKeyScreen())
        self.call_after_refresh(self.warm_up if self.session else lambda: open_after_paint(self, self.opening))
        if not self.testing:
            self.set_interval(1.0, self.tick)

    async def on_ready(self) -> None:  # (Textual calls a subclass's on_ready too: the demo's)
        self.conversation.painted()  # the first frame is out: a resumed session's preview draws the rest

    @unless_closing
    async def on_session_opened(self, message: SessionOpened) -> None:
        if await session_opened(self, message):
            for text in self.turns.take_each():  # what the user sent meanwhile, in order
                await self.submit(text)

    # -- the engine --

    @unless_closing
    async def on_engine_event(self, message: EngineEvent) -> None:
        event = message.event
        if isinstance(event, ApprovalRequested):
            from .screens import approval  # on the first question: the first screen does without it

            approval.ask(self, event)
            return  # a question: the view does not fold it
        if isinstance(event, ElicitationRequested):
            from .screens import elicitation

            elicitation.ask(self, event)
            return
        if isinstance(event, ApprovalsWaiting):
            await self.inbox_changed(event)
        elif event.agent_id == MAIN:
            if isinstance(event, SteerDelivered):
                self.turns.read(len(event.texts))
            self.view.apply(event, self.clock())
            self.working.apply(event)
            await self.conversation.apply(event)
            if isinstance(event, (PlanUpdated, HistoryCleared)):
                self.plan.show(self.view.plan)
            if isinstance(event, HistoryCleared):
                await controls.cleared(self)
        else:
            await self.subagent_event(event)
        if self.view.status_changed:  # the status bar's and the status line's facts
            self.refresh_status()
        if isinstance(event, SubagentFinished):
            self.turns.child_finished()
            self.read_results()

    async def inbox_changed(self, event: ApprovalsWaiting) -> None:
        """Who waits for an answer: the panel's count, the child's "waiting for you", the modal's queue line."""
        state = self.view.apply(event, self.clock())
        self.panel.show_inbox(self.view.inbox_line())
        if state is not None:
            await self.panel.show(state, self.clock())
        from .screens import approval

        approval.inbox_changed(self, self.view.approvals)

    async def subagent_event(self, event: Event) -> None:
        if isinstance(event, SubagentStarted) and not self.panel.entries:
            self.show_panel()  # opens by itself for the first subagent (and the first after /clear)
        state = self.view.apply(event, self.clock())
        if state is None:
            return
        await self.panel.show(state, self.clock())
        self.conversation.show_subagent(state)
        for screen in self.screen_stack:
            if isinstance(screen, TranscriptScreen) and screen.agent_id == state.id:
                await screen.apply(event)

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        await self.submit(message.text, message.other_way)

    async def submit(self, text: str, other_way: bool = False) -> None:
        """What the user sends: a slash command runs here; a message (or a custom command) goes to the agent;
        ``other_way`` (ctrl+s): steered where enter queues, or the reverse (Turns.while_busy)."""
        self.conversation.follow()  # scrolled up to read: what comes next is at the bottom
        if not text:  # ctrl+s on an empty input
            if self.busy:
                self.turns.while_busy(text, other_way)
        elif not self.ready() and (text.startswith("/") or not self.no_key):  # sent once it is open (opening.py)
            self.turns.queue(text)
        elif text.startswith("/") and not slash.is_custom(text, self.session.commands):
            await run_command(self, text)
        elif self.no_key:  # nothing to send it with: say so, and keep the message in the input
            if not self.prompt.text.strip():
                self.prompt.load_text(text)
                self.prompt.move_cursor(self.prompt.document.end)
            await self.conversation.add_notice(MISSING_KEY_MESSAGE, "error")
        elif self.busy:  # sent when the turn ends, or into the running turn
            self.turns.while_busy(text, other_way)
        else:
            self.start_work(self.session.send(text), "turn")

    @unless_closing
    async def on_turn_ended(self, message: TurnEnded) -> None:
        await controls.turn_ended(self, message)

    async def tick(self) -> None:
        """Once a second: the elapsed time of running subagents (nothing once the app is closing)."""
        if not self.screen_stack:
            return
        now = self.clock()
        for state in self.subagents.values():
            if not state.finished:
                await self.panel.show(state, now)
                self.conversation.show_subagent(state)
        if isinstance(self.screen, TranscriptScreen):
            self.screen.refresh_header()

    # -- subagents --

    def on_open_transcript(self, message: OpenTranscript) -> None:
        self.open_transcript(message.agent_id)

    def open_transcript(self, agent_id: str | None) -> None:
        controls.open_transcript(self, agent_id)

    def on_cancel_subagent(self, message: CancelSubagent) -> None:
        controls.cancel(self, message.agent_id)

    def on_steer_subagent(self, message: SteerSubagent) -> None:
        controls.steer(self, message.agent_id)

    def on_wrap_up_subagent(self, message: WrapUpSubagent) -> None:
        controls.wrap_up(self, message.agent_id)

    # -- actions --

    def action_rewind_on_escape(self) -> None:
        escape_on_empty_input(self)

    def action_toggle_panel(self) -> None:
        controls.toggle_panel(self)

    def action_cycle_mode(self) -> None:
        controls.cycle_mode(self)

    def action_open_transcript(self) -> None:
        controls.open_focused_transcript(self)

    def action_ctrl_c(self) -> None:
        controls.ctrl_c(self)

    def action_scroll_conversation(self, how: str) -> None:
        controls.scroll_conversation(self, how)

    async def action_quit(self) -> None:
        self.request_quit()

    async def on_event(self, event: events.Event) -> None:
        """Typing on the main screen goes to the input, wherever the focus is, and so does a paste (keys.py)."""
        if isinstance(event, events.Key) and not event.is_forwarded and self.screen is self.screen_stack[0]:
            if await keys.arrived(self, event, self.prompt):
                return
        elif keys.clicked_or_pasted(self, event, lambda: self.prompt):
            return
        await super().on_event(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The main screen's keys stay off the transcript and modal screens (and out of their footers)."""
        if (
            action in ("toggle_panel", "open_transcript", "interrupt", "cycle_mode", "scroll_conversation")
            and self.screen is not self.screen_stack[0]
        ):
            return False
        if action == "interrupt" and not self.busy and not self.turns.queued and not self.plugin_at_work():
            return None  # shown dimmed: nothing to interrupt; esc goes on to rewind_on_escape
        if action == "rewind_on_escape":
            return not self.busy and not self.prompt.text.strip() and self.screen is self.screen_stack[0]
        return True

    def get_default_screen(self) -> Screen[Any]:
        return OneLayoutScreen(id="_default")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from palette_commands(self, self.run_slash)

    def run_slash(self, text: str) -> None:
        self.call_later(self.submit, text)  # on the app's own message loop, like a typed command

    async def on_unmount(self) -> None:
        await close(self)


def make_app(
    settings: EngineSettings,
    root: Path,
    *,
    llm: LLM | None = None,
    session: SessionSurface | None = None,
    interactive: bool = True,
    resume: str | None = None,
    continue_: bool = False,
    testing: bool = False,
    clock: Callable[[], float] = time.monotonic,
    prompt: str | None = None,
) -> AgentApp:
    """The app on ``session``, or on the session it opens once its first screen is up (``app.open_error``
    then says, in one sentence, why it could not: a bad --resume or --continue)."""
    missing = False
    known = llm.credentials is not None if llm is not None else session is not None and session.has_credentials
    if not known:
        try:
            resolve_credentials()
        except MissingCredentials:
            missing = True
    opening = Opening(settings, root, llm=llm, interactive=interactive, resume=resume, continue_=continue_)
    return AgentApp(
        opening, session=session, testing=testing, clock=clock, credentials_missing=missing, first_prompt=prompt
    )


def run_tui(
    settings: Settings, root: Path, resume: str | None = None, continue_: bool = False, prompt: str | None = None
) -> int:
    if problem := cannot_save(root):  # said before the screen, not after it
        print(f"agentcli: {problem}", file=sys.stderr)
        return 1
    while True:
        app = make_app(settings.engine(), root, resume=resume, continue_=continue_, prompt=prompt)
        code = asyncio.run(run_until_signal(app))
        if app.open_error:
            print(f"agentcli: {app.open_error}", file=sys.stderr)
            return 1  # as headless and line mode do
        if app.switch_to is None:
            print(controls.goodbye(app.session))
            return code if isinstance(code, int) else 0
        resume, continue_, prompt = app.switch_to, False, None  # /resume picked another session
