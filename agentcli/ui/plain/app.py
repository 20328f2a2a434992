"""Line mode: a prompt-toolkit REPL around a Session, on one asyncio loop with the engine.

At the prompt, prompt-toolkit owns the keyboard. When stdin is not a terminal (piped text), there
is no prompt and no keyboard: each line read is echoed and sent. While a turn runs, the app reads keys
itself (turn_keys.py, the terminal in raw mode): ctrl+c or esc interrupts the turn, y/s/a/n (or esc: no) answer
an approval (questions.py), and anything else is kept as type-ahead for the next prompt. The turn's state is the
turn controller's (ui/turns.py), which the TUI drives too.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import History
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.input.typeahead import store_typeahead
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style
from rich.console import Console
from rich.text import Text

from ... import __version__
from ...config import Settings
from ...core.door import (
    LLMError,
    MissingCredentials,
    SessionError,
    SessionSurface,
    Workspace,
    open_session,
    resolve_credentials,
    start_sdk_import,
)
from ...core.events import (
    DENY,
    MAIN,
    ApprovalRequested,
    ElicitationRequested,
    Event,
    Notice,
    SteerDelivered,
    SubagentFinished,
)
from ...signals import exit_code, exit_signals
from .. import slash
from ..escapes import visible_event
from ..format import money, tokens
from ..notify import Notifier
from ..slash import still_running
from ..status_line import StatusLineRunner, facts
from ..turns import INTERRUPTED, Turns
from . import elicitation
from .commands import run_command
from .display import Display
from .prompt import FileIndex, PlainCompleter, continuation, file_history, key_bindings, prompt_line
from .questions import Questions
from .screen import Painter, Screen, terminal_size
from .transcript import page, pager_command
from .turn_keys import TurnKeys

PROMPT_STYLE = Style.from_dict({"prompt": "bold", "bottom-toolbar": "noreverse bg:#303030 #d0d0d0"})


def color_system_for(out: TextIO) -> str | None:
    """The terminal's colors, or None for plain text (NO_COLOR, TERM=dumb, or not a terminal)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb" or not out.isatty():
        return None
    return Console(file=out).color_system


class PlainApp:
    def __init__(
        self,
        session: SessionSurface,
        *,
        input: Input | None = None,
        output: Output | None = None,
        out: TextIO | None = None,
        color: bool | None = None,
        live: bool | None = None,
        pager: bool | None = None,
        history: History | None = None,
        handle_sigint: bool = False,
        lines: TextIO | None = None,
        first_prompt: str | None = None,
    ) -> None:
        self.session = session
        # the running turn, ctrl+c's arming, steering and results to read (ui/turns.py); no queue: what is typed
        # meanwhile is the next prompt's type-ahead
        self.turns: Turns[asyncio.Future[Any]] = Turns(session.settings.steer_on_enter)
        self.turns.mailbox = session.steering
        session.asks_user = lines is None  # with a keyboard, a server's questions are asked (elicitation.py)
        self.output = output
        self.first_prompt = first_prompt  # `agentcli --plain "question"`: the first line, as if typed
        self.out = out or sys.stdout
        tty = self.out.isatty()
        color_system = color_system_for(self.out) if color is None else ("truecolor" if color else None)
        self.screen = Screen(self.out, live=tty if live is None else live, size=lambda: terminal_size(self.out))
        self.painter = Painter(color_system, lambda: self.screen.width)
        self.display = Display(self.screen, self.painter, tools=session.tools)
        self.display.view.stall_after = session.settings.subagent_stall_seconds
        self.use_pager = tty if pager is None else pager
        self.lines = lines  # piped input, read line by line instead of through a prompt
        self.files = FileIndex(session.workspace.root)
        self.input: Input | None = None
        self.prompt: PromptSession[str] | None = None
        if lines is None:
            self.input = input or create_input()
            terminal = _isatty(getattr(self.input, "stdin", None))
            self.prompt = PromptSession(
                history=history if history is not None else file_history(),
                input=self.input,
                output=output,
                completer=PlainCompleter(
                    self.files,
                    self.transcript_choices,
                    lambda: slash.session_commands(session),
                    session.mention_choices,
                ),
                complete_while_typing=True,
                key_bindings=key_bindings(self.turns.disarm, self.show_outputs, terminal),
                bottom_toolbar=self.toolbar if terminal else None,
                style=PROMPT_STYLE,
                prompt_continuation=continuation,
                enable_history_search=False,
            )
        command = session.status_command()
        self.status_line = (
            None
            if command is None or lines is not None
            else StatusLineRunner(
                command,
                show=lambda _: self.redraw_toolbar(),
                warn=lambda note: self.on_event(Notice(level="warning", text=note)),
            )
        )  # in the toolbar, above our line
        self.main_task: asyncio.Task[Any] | None = None  # run(), cancelled by SIGTERM or SIGHUP at the prompt
        self.ended_by: list[int] = []  # the signal that ends the program
        self.questions = Questions(self.display)  # approvals, answered with keys while a turn runs
        self.keys = TurnKeys(self.input, self.turns, self.questions, self.display, handle_sigint)
        self.at_prompt = False  # waiting for the user's next line (tests watch this)
        self.prompts = 0  # prompts shown so far
        self.held: list[Event] = []  # events that came while the user was typing at the prompt, shown after it
        self.draft = ""  # what the user had typed when a background result ended the prompt

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> int:
        self.main_task = asyncio.current_task()
        start_sdk_import()  # while the user types, not on the first Enter
        self.banner()
        self.recap()
        self.session.start_servers()
        with exit_signals(self.end_by_signal):
            try:
                while not self.ended_by:
                    if self.questions.question is not None:  # a background child asked while the main agent was idle
                        await self.run_turn(self.questions.answer_all())
                        continue
                    if self.turns.read_results_now(bool(self.display.view.results_waiting)):
                        await self.run_turn(self.session.read_results())
                        continue
                    text = await self.read()
                    if text is None:
                        if self.lines is not None and self.session.background_work:
                            await self.run_turn(self.session.finish_background())  # piped: nobody to ask
                        if await self.may_quit():
                            break
                        continue
                    if not text.strip():
                        continue
                    if text.lstrip().startswith("/") and not slash.is_custom(text, self.session.commands):
                        if not await run_command(self, text.strip()):
                            break
                    else:
                        await self.run_turn(self.send(text))
            except asyncio.CancelledError:
                if not self.ended_by:
                    raise
            finally:
                self.display.end_turn()
                if self.status_line is not None:
                    self.status_line.close()
                await self.session.aclose("other" if self.ended_by else "prompt_input_exit")  # SessionEnd's reason
        if self.ended_by:  # the terminal may be gone (SIGHUP): say nothing more
            return exit_code(self.ended_by[0])
        self.goodbye()
        return 0

    async def send(self, text: str) -> Any:
        """One user message. The first does not wait here for the SDK import ``run`` started: the model
        client waits for the SDK only where it needs it (core/model/llm.py)."""
        return await self.session.send(text)

    def end_by_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: interrupt the turn as ctrl+c does, then leave (from the prompt at once)."""
        self.ended_by.append(signum)
        if self.turns.busy:
            self.turns.interrupt()
        elif self.main_task is not None:
            self.main_task.cancel()

    def goodbye(self) -> None:
        """Say how to come back to this session, if anything of it was saved."""
        self.display.say(slash.goodbye(self.session, "agentcli --plain --continue"), "dim")

    async def read(self) -> str | None:
        """The next line from the user; None to quit (ctrl+d, or ctrl+c twice on an empty line)."""
        if self.first_prompt is not None:
            text, self.first_prompt = self.first_prompt, None
            self.display.say(Text("› ", style="bold") + Text(text))
            return text
        if self.lines is not None:
            return await self.read_line(self.lines)
        assert self.input is not None and self.prompt is not None
        while True:
            self.files.refresh()
            if self.keys.typed:
                store_typeahead(self.input, self.keys.typed)
                self.keys.typed = []
            self.prompts += 1
            draft, self.draft = self.draft, ""
            self.prompt.app.erase_when_done = False
            with self.prompting():
                try:
                    text = await prompt_line(self.prompt, [("class:prompt", "› ")], default=draft)
                except KeyboardInterrupt:
                    if self.turns.arm_quit():
                        return None
                    self.display.say("Press ctrl+c again to quit, or ctrl+d.", "dim")
                    continue
                except EOFError:
                    return None
            self.turns.disarm()
            return text

    async def read_line(self, lines: TextIO) -> str | None:
        """The next piped line, echoed once as `› line`; None at the end of the input."""
        self.prompts += 1
        with self.prompting():
            line = await asyncio.to_thread(lines.readline)
        if not line:
            return None
        text = line.rstrip("\r\n")
        if text.strip():
            self.display.say(Text("› ", style="bold") + Text(text))
        return text

    async def run_turn(self, work: Awaitable[Any]) -> Any:
        """Run engine work until it ends or the user interrupts it; report how it ended."""
        task = asyncio.ensure_future(work)
        self.turns.started(task)
        try:
            with self.keys.watched(), self.keys.sigint():
                await asyncio.wait([task])
        finally:
            if not task.done():
                task.cancel()
            status = how_it_ended(task)
            if following := self.turns.ended(status):  # steered messages the turn did not read: the next prompt
                self.first_prompt = following
            elif status == INTERRUPTED and (back := self.turns.take_back()):
                self.draft = back  # back in the input, as esc gives back the TUI's
            self.questions.turn_ended()
            self.display.end_turn()
        result = None
        if task.cancelled():
            self.display.say("Interrupted.", "yellow")
        elif isinstance(task.exception(), LLMError):
            self.display.say(f"Error: {task.exception()}", "red")
        elif task.exception() is not None:
            exc = task.exception()
            self.display.say(f"Error: {type(exc).__name__}: {exc}", "red")
        else:
            result = task.result()
            if getattr(result, "status", "") == "capped":
                self.display.say(f"Stopped after {self.session.max_turns} turns (--max-turns).", "yellow")
        self.display.emit("")
        return result

    # -- events and approvals ----------------------------------------------------------------

    async def may_quit(self) -> bool:
        """Whether to quit now: yes, unless subagents still run and the user, asked, says no."""
        question = still_running(self.session)
        if question and self.prompt is not None and not await self.yes(question, "Quit? [y/N] ", broken=True):
            return False
        if left := await slash.unmerged_attempts(self.session, self.display.view):  # best-of-N: asked first
            if await self.confirm(slash.attempts_question(left)):
                self.display.say(await slash.discard_all(self.session, left))
        return True

    async def confirm(self, question: str) -> bool:
        """Ask ``question`` at the prompt: True for y. No without a terminal to answer on."""
        if self.prompt is None:
            self.display.say(f"{question} Nobody can answer here, so it is left as it is.", "yellow")
            return False
        return await self.yes(question)

    async def yes(self, question: str, ask: str = "[y/N] ", broken: bool = False) -> bool:
        """Say ``question`` and read the answer at the prompt: True for y (``broken`` on ctrl+c or ctrl+d)."""
        assert self.prompt is not None
        self.display.say(question, "yellow")
        with self.prompting():
            try:
                answer = await prompt_line(self.prompt, ask)
            except (KeyboardInterrupt, EOFError):
                return broken
        return answer.strip().lower() in ("y", "yes")

    @contextlib.contextmanager
    def prompting(self) -> Iterator[None]:
        """While the user types at a prompt: the engine's events wait (printed, they would tear through it)."""
        self.at_prompt = True
        try:
            yield
        finally:
            self.at_prompt = False
            self.show_held()

    def end_prompt(self) -> None:
        """Make the prompt return now (it comes back with what was typed in it)."""
        app = self.prompt.app if self.prompt is not None else None
        ending = app is not None and app.future is not None and app.future.done()  # ended already this tick
        if self.at_prompt and app is not None and app.is_running and not ending:
            self.draft = app.current_buffer.text
            app.erase_when_done = True  # the draft was not sent: leave no `› draft` line behind
            app.exit(result="")

    def show_held(self) -> None:
        held, self.held = self.held, []
        for event in held:
            self.display.handle(event)

    def on_event(self, event: Event) -> None:
        event = visible_event(event)
        if (
            isinstance(event, SubagentFinished)
            and event.id in self.display.view.subagents
            and self.display.view.subagents[event.id].background
        ):
            self.turns.child_finished()
            self.end_prompt()
        if isinstance(event, SteerDelivered) and event.agent_id == MAIN:
            self.turns.read(len(event.texts))
        if isinstance(event, ElicitationRequested):
            if event.future is not None and not event.future.done():
                asyncio.ensure_future(self.ask_server(event, event.future))
            return
        if self.at_prompt and not isinstance(event, ApprovalRequested):
            self.held.append(event)  # printing now would tear through the prompt being typed
            return
        if isinstance(event, ApprovalRequested):
            if not self.questions.asked(event):
                return
            if self.at_prompt and self.prompt is not None:  # a background child asks: ask as a turn would
                self.end_prompt()
            elif not self.keys.watching:  # no keyboard to answer with
                self.questions.answer(DENY)
            else:
                self.display.ask(event)
            return
        self.display.handle(event)

    async def ask_server(self, event: ElicitationRequested, future: asyncio.Future[dict[str, Any] | str]) -> None:
        """A server's question (elicitation), asked in a prompt of its own while the turn waits for it. At the
        prompt (a background child's call asks), the user is typing something else: it is declined."""
        if self.input is None or self.at_prompt:
            self.display.say(
                f"Declined a question of the MCP server {event.server}: it came while you were "
                "typing; ask again in a turn.",
                "yellow",
            )
            future.set_result("decline")
            return
        prompt: PromptSession[str] = PromptSession(input=self.input, output=self.output)
        future.add_done_callback(lambda _: prompt.app.exit(exception=EOFError()) if prompt.app.is_running else None)
        try:  # the turn's events wait until the question is answered; the prompt owns the terminal's bottom lines
            with self.prompting(), self.display.screen.paused(), self.keys.set_aside():
                answer = await elicitation.ask(event, prompt, self.display.say)
        finally:
            self.display.refresh()  # the live lines again, and their clock
        if not future.done():
            future.set_result(answer)

    # -- what the prompt shows ---------------------------------------------------------------

    def banner(self) -> None:
        self.display.say(f"agentcli {__version__} · line mode · {self.session.workspace.root}", "bold")
        keys = (
            " · /help for commands · enter sends · ctrl+j or meta+enter adds a line · ctrl+d quits"
            f" · while it works, {'enter' if self.turns.steer_on_enter else 'ctrl+s'} steers the turn"
        )
        self.display.say(
            f"model {self.session.model} · permissions {self.session.permission_mode}"
            f"{keys if self.lines is None else ' · reading piped input'}",
            "dim",
        )
        self.display.emit("")

    def recap(self) -> None:
        """A resumed session's conversation so far, and what opening the session had to say."""
        restored = getattr(self.session, "restored_events", [])
        if restored:
            self.display.say(f"Resumed session {self.session.id}.", "bold")
            self.display.replay([visible_event(event) for event in restored])
            self.display.emit("")
        self.session.subscribe(self.on_event)  # what opening the session had to say comes first
        self.session.add_attention(Notifier(self.session.settings.notifications, os.environ, self.screen.signal))

    def toolbar(self) -> ANSI:
        session = self.session
        usage, used, window = session.usage, session.context_used(), session.context_window()
        cost = f" ({money(usage)})" if usage.cost is not None else ""
        own = (
            f" {session.model} · {session.permission_mode} · context {100 * used / window:.0f}% of "
            f"{tokens(window)} · {tokens(usage.total_tokens)} tokens{cost} "
        ).replace("\x1b", "?")
        if self.status_line is None:
            return ANSI(own)
        self.status_line.changed(facts(session))  # drawn at the prompt: the facts of now (a no-op when the same)
        line = self.status_line.line  # clean(): colours only
        return ANSI(f"{' ' * (1 + self.status_line.command.padding)}{line}\x1b[0m\n{own}" if line else own)

    def redraw_toolbar(self) -> None:
        if self.prompt is not None and self.prompt.app.is_running:
            self.prompt.app.invalidate()

    async def show_outputs(self) -> None:
        """ctrl+o: the whole output of the latest request's calls whose preview was cut."""
        text = self.display.full_outputs()
        if not text:
            self.display.say("No cut tool output in the latest request.", "dim")
            return
        await self.show_long(text)

    async def show_long(self, text: str) -> None:
        """Long plain text: in the pager on a terminal, printed otherwise."""
        command = pager_command() if self.use_pager else None
        if command is None or not await asyncio.to_thread(page, text, command):
            self.display.emit(*text.split("\n"))

    def transcript_choices(self) -> list[tuple[str, str]]:
        return [(str(n), f"{r.id} {r.description}") for n, r in enumerate(self.session.children, start=1)]


def how_it_ended(task: asyncio.Future[Any]) -> str:
    """A finished turn's status, as the TUI's worker reports it: interrupted, error, or the result's own."""
    if not task.done() or task.cancelled():
        return INTERRUPTED
    if task.exception() is not None:
        return "error"
    return getattr(task.result(), "status", "done")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def run_plain(
    settings: Settings, root: Path, resume: str | None = None, continue_: bool | None = None, prompt: str | None = None
) -> int:
    """`agentcli --plain`: returns the exit code."""
    try:
        resolve_credentials()
    except MissingCredentials as exc:
        print(f"agentcli: {exc} To try it first with no key: {slash.demo_command(plain=True)}", file=sys.stderr)
        return 2

    async def main() -> int:
        try:
            session = open_session(
                settings.engine(), Workspace.at(root), None, interactive=True, resume=resume, continue_=bool(continue_)
            )
        except SessionError as exc:
            print(f"agentcli: {exc}", file=sys.stderr)
            return 1
        piped = None if _isatty(sys.stdin) else (sys.stdin or io.StringIO())  # no prompt-toolkit without a tty
        return await PlainApp(session, handle_sigint=True, lines=piped, first_prompt=prompt).run()

    return asyncio.run(main())
