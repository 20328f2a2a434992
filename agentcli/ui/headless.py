"""Headless front end (-p): one prompt in, the answer out as text, JSON, stream-json or the engine's events."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from ..core.door import LLMError, SessionSurface, StructuredOutput, claude_name
from ..core.events import ApprovalRequested, AttemptsCompared, Event, Notice, Retrying, ToolCallFinished, UsageUpdated
from ..leaving import cannot_write, discard_unwritten
from ..signals import exit_code, exit_signals
from .escapes import json_line, visible
from .format import turns
from .prompt_mark import Mark

if TYPE_CHECKING:
    from .stream_json import StreamJson
    from .view import SessionView


READER_GONE = 141  # the exit status of a writer whose pipe closed (128 + SIGPIPE), as in `yes | head -1`
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def whole_characters(text: str) -> str:
    """A prompt with each lone surrogate as U+FFFD: half a UTF-16 pair (JSON's ``"\\ud800"``), or a byte of an
    argument that was not UTF-8. No UTF-8 holds one, so neither a session file nor a request could."""
    return LONE_SURROGATE.sub("\ufffd", text)


class HeadlessOutput:
    """The sink for a headless run: writes the chosen format's lines, and notices to stderr.

    ``events`` writes every engine event as it is (``Event.to_dict``); ``stream-json`` renders them in
    Claude Code's shapes (``stream_json.StreamJson``, attached once the session is open).

    When the reader goes away (`agentcli -p … | head -1`), writing stops quietly, the stream is
    pointed at /dev/null so nothing complains at exit, and ``run`` (the task of the run) is cancelled:
    nobody reads what it would do. ``run`` is cancelled too when what this process spent passes
    ``budget`` (USD).

    What a prompt's result reports (its texts, the calls refused) comes from the view model. Stream-json's
    renderer folds every event into it as it comes; text, json and events output keep the events until the
    first model call is done or a prompt's facts are read (``facts``), so they start without importing the view.
    """

    def __init__(
        self,
        output_format: str,
        out: IO[str],
        err: IO[str],
        *,
        partial_messages: bool = False,
        budget: float | None = None,
    ) -> None:
        self.format, self.out, self.err = output_format, out, err
        self.partial_messages, self.budget = partial_messages, budget
        self.reader_gone = False
        self.unwritable = False  # a write failed otherwise (a full disk, an I/O error): stderr said so
        self.spent = 0.0  # USD, of the model calls of this process
        self.over_budget = False
        self.run: asyncio.Task[Any] | None = None
        self.renderer: StreamJson | None = None
        self.view: SessionView | None = None  # the events folded (stream-json: from the start; else once read)
        self.unfolded: list[Event] = []  # the events that came before the view
        self.prompt = PromptStart()  # where the prompt running now began, in the view
        self.on_approval: Callable[[ApprovalRequested], None] | None = None  # who answers approvals, if anyone

    def attach(self, session: SessionSurface, announce: bool = True) -> None:
        """The session is open: from now on its events can be rendered. ``announce``: print the init
        line now (else ``announce`` does, once the MCP servers it lists have started)."""
        if self.format == "stream-json":
            from .stream_json import StreamJson  # (text output, the default, never loads it)

            self.renderer = StreamJson(session, self.line, partial_messages=self.partial_messages, view=self.facts())
        if announce:
            self.announce(session)

    def announce(self, session: SessionSurface) -> None:
        if self.format in ("stream-json", "events"):
            from .stream_json import init_message

            self.line(init_message(session))

    def facts(self) -> SessionView:
        """The view model, with every event so far folded in."""
        if self.view is None:
            from .view import SessionView  # text and json output: once a model call is done, or at the end

            self.view = SessionView()
        for event in self.unfolded:
            self.view.apply(event, time.monotonic())
        self.unfolded.clear()
        return self.view

    def begin_prompt(self) -> PromptStart:
        """A prompt starts: what its result reports is what the view holds from here on. Before the view is
        made, from its start: no event before a first prompt is a text of the main agent or a refused call."""
        view = self.facts() if self.view is not None else None
        self.prompt = (
            PromptStart(len(view.transcript.items), len(view.refused), len(view.comparisons)) if view else PromptStart()
        )
        return self.prompt

    def texts(self, start: PromptStart) -> str:
        """Every text the main agent wrote since ``start`` (across turns that read background results too), a
        blank line between each two."""
        return "\n\n".join(self.facts().said_since(start.items))

    def denials(self, start: PromptStart, session: SessionSurface) -> list[dict[str, Any]]:
        """The calls refused since ``start``, as Claude Code's ``permission_denials`` lists them: its tool names
        and inputs, as ``can_use_tool`` and the hooks that refused them were shown the calls."""
        return [
            {
                "tool_name": claude_name(call.name),
                "tool_use_id": call.id,
                "tool_input": session.claude_input(call.name, call.input),
            }
            for call in self.facts().refused[start.refused :]
        ]

    def attempts(self, start: PromptStart) -> list[AttemptsCompared]:
        """The best-of-N comparisons since ``start`` (the view's comparisons, from that prompt's count on)."""
        return self.facts().comparisons[start.comparisons :]

    def __call__(self, event: Event) -> None:
        if self.renderer is None:  # (stream-json's renderer folds it into the same view)
            self.unfolded.append(event)
            if self.view is not None or isinstance(event, UsageUpdated):  # a model call is done: the run's
                self.facts()  # first request is long out, and what is kept waiting stays one call's events
        if isinstance(event, ApprovalRequested) and self.on_approval is not None:
            self.on_approval(event)
        if self.format == "events":
            self.line(event.to_dict())
        elif self.renderer is not None:
            self.renderer(event)
        if self.format != "events" and (
            isinstance(event, Retrying) or isinstance(event, Notice) and event.level in ("warning", "error")
        ):
            self.write(self.err, f"agentcli: {event.text}\n")
        if self.format == "text" and isinstance(event, ToolCallFinished) and event.denied:  # one line each
            self.write(self.err, f"agentcli: denied {event.name}: {event.output.replace(chr(10), ' ')}\n")
        if isinstance(event, UsageUpdated):  # every model call, a running subagent's too
            self.spent += event.usage.cost or 0.0
            if self.budget is not None and self.spent > self.budget and not self.over_budget:
                self.over_budget = True
                if self.run is not None:
                    self.run.cancel()

    def hook_ran(self, run: dict[str, Any]) -> None:
        """A hook command started or finished (--include-hook-events): its stream-json line."""
        if self.renderer is not None:
            self.renderer.hook(run)

    @property
    def gone_status(self) -> int:
        """The exit status once the output is gone: a closed pipe's, or 1 when it could not be written."""
        return 1 if self.unwritable else READER_GONE

    def line(self, record: dict[str, Any]) -> None:
        self.write(self.out, json_line(json.dumps(record, ensure_ascii=False, default=str)) + "\n")

    def write(self, stream: IO[str], text: str) -> None:
        if self.reader_gone:
            return
        try:
            stream.write(visible(text))  # what a stranger wrote never drives the reader's terminal
            stream.flush()
        except OSError as exc:  # a closed pipe: the reader went away; else the output cannot be written
            self.reader_gone = True
            if not isinstance(exc, BrokenPipeError):
                self.unwritable = True
                name = "output" if stream is self.out else "error"
                with contextlib.suppress(OSError, ValueError):
                    self.err.write(cannot_write(f"standard {name}", exc) + "\n")
                    self.err.flush()
            discard_unwritten(stream)
            if self.run is not None:
                self.run.cancel()


@dataclass(frozen=True)
class PromptStart:
    """Where a prompt began in the view: the main transcript's items and the refused calls before it."""

    items: int = 0
    refused: int = 0
    comparisons: int = 0  # best-of-N comparisons (json's attempts)


@dataclass
class Answer:
    """How one prompt ended: the text, the status (done, capped, refused, error, interrupted, budget, and
    unformed: no answer matched --json-schema)."""

    text: str
    status: str
    reason: str = ""  # what stderr says in text mode

    @property
    def is_error(self) -> bool:
        """Exit 0 only for a complete answer, or a budget stop: Claude Code's ``error_max_budget_usd`` result
        is not an error (``is_error`` false, exit 0), which the Agent SDK expects; stderr says it stopped."""
        return self.status not in ("done", "budget")


async def answer(
    session: SessionSurface,
    prompt: str,
    output: HeadlessOutput,
    ended_by: list[int],
    images: Sequence[dict[str, Any]] = (),
) -> Answer:
    """Run one prompt (with ``images``, blocks from ``images.from_block``); a cancel (interrupt, signal, budget,
    the reader gone) ends it as an Answer too. Its text is every text the main agent wrote for the prompt, not
    only the last turn's."""
    start = output.begin_prompt()
    if prompt.lstrip().startswith("/"):  # perhaps a command: the table of them (ui/slash.py) loads only then
        from .slash import not_sent_headless

        if refusal := not_sent_headless(prompt, session.commands):
            return Answer(refusal, "refused", refusal)
    if form := structured(session):
        form.begin()
    try:
        run = await session.send(prompt, images)
        run = await session.finish_background() or run  # background children, and the turn that reads them
        reason = f"stopped after --max-turns {turns(session.max_turns)}" if run.status == "capped" else ""
        status: str = run.status
        if form and status == "done" and form.value is None:  # it gave up (structured_output.MAX_ATTEMPTS)
            status, reason = "unformed", f"no answer matching --json-schema came in {form.attempts} attempts"
        return Answer(run.text if status == "refused" else output.texts(start) or run.text, status, reason)
    except LLMError as exc:
        return Answer(str(exc), "error", str(exc))
    except asyncio.CancelledError:
        return stopped(output, output.texts(start), ended_by)


def stopped(output: HeadlessOutput, text: str, ended_by: list[int]) -> Answer:
    """A run cancelled (an interrupt, a signal, the budget, the reader gone), as its Answer; the cancel is taken."""
    asyncio.current_task().uncancel()  # type: ignore[union-attr]  # in a task, so never None; taken: what this task awaits later (closing) is not cancelled too
    if output.over_budget:
        return Answer(text, "budget", f"stopped: the cost passed --max-budget-usd {output.budget}")
    if ended_by:
        return Answer(text, "interrupted", f"stopped by {signal.Signals(ended_by[0]).name}")
    return Answer(text, "interrupted", "interrupted")


def structured(session: SessionSurface) -> StructuredOutput | None:
    """The structured_output tool of a --json-schema run, else None."""
    tool = session.tools.get(StructuredOutput.name)
    return tool if isinstance(tool, StructuredOutput) else None


def report(
    output: HeadlessOutput, session: SessionSurface, mark: Mark, result: Answer, extra: dict[str, Any] | None = None
) -> None:
    """What the format prints at the end of a prompt: the text, or the result object (with ``extra``'s fields)."""
    if output.format == "text":
        if result.text and result.status not in ("error", "refused"):  # a refusal is told on stderr, as a notice
            output.write(output.out, result.text.rstrip("\n") + "\n")
        if result.reason:
            output.write(output.err, f"agentcli: {result.reason}\n")
    else:
        from .stream_json import result_message

        output.line(
            result_message(
                session,
                mark,
                text=result.text,
                status=result.status,
                is_error=result.is_error,
                denials=output.denials(output.prompt, session),
                attempts=output.attempts(output.prompt),
                errors=[result.reason or result.text] if result.status != "done" else [],
                structured=form.value if (form := structured(session)) else None,
            )
            | (extra or {})
        )
    output.begin_prompt()  # the next prompt reports its own


async def run_headless(session: SessionSurface, prompt: str, output: HeadlessOutput) -> int:
    """Run one prompt to the end. Returns the process exit code."""
    await session.wait_servers()  # the first request waits for them, so the init line lists their tools
    output.attach(session)
    if output.reader_gone:  # gone before the start: nothing to do
        await session.aclose()
        return output.gone_status
    output.run = asyncio.current_task()
    mark = Mark.of(session)
    ended_by: list[int] = []  # SIGTERM or SIGHUP: stop as an interrupt does, then exit 128 + signum

    def on_signal(signum: int) -> None:
        ended_by.append(signum)
        if output.run is not None:
            output.run.cancel()

    with exit_signals(on_signal):  # also while closing: background shells are being stopped
        try:
            result = await answer(session, prompt, output, ended_by)
        finally:
            output.run = None  # the run is over: a closed pipe from here on has nothing to stop
            if output.reader_gone or output.over_budget:
                await cancel_landed()
            await session.aclose()
    report(output, session, mark, result)
    return exit_status(output, result, ended_by, session)


async def cancel_landed() -> None:
    """Take the cancel the run asked of itself (a write found the reader gone, or the budget passed) when it
    finished before the cancel could land: otherwise it lands in closing the session, half-way through,
    and ends the process with a CancelledError traceback."""
    try:
        await asyncio.sleep(0)  # a pending cancel is raised at the first pause
    except asyncio.CancelledError:
        asyncio.current_task().uncancel()  # type: ignore[union-attr]  # in a task, so never None


def exit_status(output: HeadlessOutput, result: Answer, ended_by: list[int], session: SessionSurface) -> int:
    """The process's exit code. A session that could not be saved (a full disk: stderr said so when the write
    failed) is a failure too, so a script does not count on a transcript that is not there."""
    if output.reader_gone:
        return output.gone_status
    if ended_by:
        return exit_code(ended_by[0])
    unsaved = session.saved is not None and session.saved.off
    return 130 if result.status == "interrupted" else (1 if result.is_error or unsaved else 0)


def make_headless_output(
    output_format: str, *, partial_messages: bool = False, budget: float | None = None
) -> HeadlessOutput:
    return HeadlessOutput(output_format, sys.stdout, sys.stderr, partial_messages=partial_messages, budget=budget)
