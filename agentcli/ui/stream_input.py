"""``--input-format stream-json``: user messages as JSON lines on standard input, one turn each, and the
control protocol ``claude-agent-sdk`` speaks over the same pipe.

Each ``{"type": "user", "message": {"role": "user", "content": ...}}`` line is one prompt; prompts run
in order, each ending with its result line. ``control_request`` lines are answered at once, even while
a turn runs: ``initialize``, ``interrupt`` (stops the running turn) and ``set_permission_mode``;
any other request gets an error ``control_response`` that names it, and the run goes on. When standard
input closes, the prompts already read are finished, then agentcli exits.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import IO, Any

from ..core.session import MODES
from ..core.session import Session
from .headless import READER_GONE, Answer, HeadlessOutput, answer, exit_status, report, whole_characters
from .signals import exit_signals
from .stream_json import Mark

EOF = None


class UnsupportedRequest(Exception):
    """A control request agentcli does not serve; the message names it."""


def read_lines(stream: IO[str], loop: asyncio.AbstractEventLoop, queue: "asyncio.Queue[str | None]") -> None:
    """Standard input, line by line, into ``queue`` (a thread: stdin may be a file, a pipe or a socket)."""
    try:
        for line in stream:
            loop.call_soon_threadsafe(queue.put_nowait, line)
    except (OSError, ValueError):
        pass
    loop.call_soon_threadsafe(queue.put_nowait, EOF)


def prompt_text(message: dict[str, Any]) -> str:
    """The text of a user message line; ValueError with one sentence when it is not one agentcli can take."""
    body = message.get("message")
    content = body.get("content") if isinstance(body, dict) else None
    if isinstance(content, str):
        return whole_characters(content)
    if not isinstance(content, list):
        raise ValueError("a user message needs message.content, a string or a list of content blocks")
    texts = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            raise ValueError(f"agentcli takes text content blocks in user messages, not {kind!r}")
        texts.append(block["text"])
    return whole_characters("\n\n".join(texts))


class Driver:
    """Reads standard input, answers control requests, and runs the prompts one after another."""

    def __init__(self, session: Session, output: HeadlessOutput) -> None:
        self.session, self.output = session, output
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()  # standard input, as it comes
        self.prompts: asyncio.Queue[str | None] = asyncio.Queue()
        self.turn: asyncio.Task[Answer] | None = None
        self.ended_by: list[int] = []
        self.last: Answer | None = None

    async def run(self, stream: IO[str]) -> int:
        lines = self.lines
        loop = asyncio.get_running_loop()
        threading.Thread(target=read_lines, args=(stream, loop, lines), name="stdin", daemon=True).start()
        self.output.attach(self.session)
        worker = asyncio.create_task(self.work())
        with exit_signals(self.on_signal):
            try:
                while not self.ended_by and not self.output.reader_gone:
                    line = await next_line(lines, worker)
                    if line is EOF:
                        break
                    self.take(line)
                self.prompts.put_nowait(EOF)  # finish what was read, then stop
                await worker
            finally:
                worker.cancel()
                await self.session.aclose()
        if self.output.reader_gone:
            return READER_GONE
        return exit_status(self.output, self.last or Answer("", "done"), self.ended_by)

    def on_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: stop the running turn, read no more, and exit 128 + signum."""
        self.ended_by.append(signum)
        self.interrupt()
        self.lines.put_nowait(EOF)

    def take(self, line: str) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            self.warn(f"standard input held a line that is not JSON: {line.strip()[:80]!r}")
            return
        except RecursionError:
            self.warn("standard input held a line nested too deeply to read; it was skipped")
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "control_request":
            self.control(message)
        elif kind == "user":
            try:
                self.prompts.put_nowait(prompt_text(message))
            except ValueError as exc:
                self.warn(f"{exc}; the message was skipped")
        elif kind not in ("control_response", "control_cancel_request", "keep_alive"):
            self.warn(f"standard input held a line of unknown type {kind!r}; it was skipped")

    def warn(self, text: str) -> None:
        self.output.write(self.output.err, f"agentcli: {text}\n")

    def control(self, message: dict[str, Any]) -> None:
        request_id = message.get("request_id")
        request = message.get("request") if isinstance(message.get("request"), dict) else {}
        try:
            response = self.serve(request)
        except UnsupportedRequest as exc:
            self.output.line({"type": "control_response",
                              "response": {"subtype": "error", "request_id": request_id, "error": str(exc)}})
            return
        self.output.line({"type": "control_response",
                          "response": {"subtype": "success", "request_id": request_id, "response": response}})

    def serve(self, request: dict[str, Any]) -> dict[str, Any]:
        subtype = request.get("subtype")
        if subtype == "initialize":
            unsupported = [key for key in ("hooks", "agents", "systemPromptSnapshot") if request.get(key)]
            if unsupported:
                raise UnsupportedRequest(f"agentcli does not support {', '.join(unsupported)} in the initialize "
                                         "request")
            return {"commands": [], "agents": [{"name": name} for name in sorted(self.session.subagents.agent_types)],
                    "output_style": "default", "available_output_styles": ["default"], "models": [],
                    "account": {}, "pid": os.getpid()}
        if subtype == "interrupt":
            self.interrupt()
            return {}
        if subtype == "set_permission_mode":
            mode = request.get("mode")
            if mode not in MODES:
                raise UnsupportedRequest(f"agentcli has no permission mode {mode!r} (it has {', '.join(MODES)})")
            self.session.permissions.mode = mode
            return {}
        raise UnsupportedRequest(f"agentcli does not support the control request {subtype!r}")

    def interrupt(self) -> None:
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()

    async def work(self) -> None:
        """Run the prompts in order until the end of input."""
        while (prompt := await self.prompts.get()) is not EOF:
            if self.ended_by or self.output.reader_gone:
                continue
            mark = Mark.of(self.session)
            if self.output.over_budget:  # the budget holds for the whole session
                self.last = Answer("", "budget", f"the cost passed --max-budget-usd {self.output.budget}")
            else:
                self.turn = asyncio.create_task(answer(self.session, prompt, self.output, self.ended_by))
                self.output.run = self.turn
                try:
                    self.last = await self.turn
                except asyncio.CancelledError:  # interrupted before it started
                    self.last = Answer(self.session.main.last_text(), "interrupted", "interrupted")
                self.output.run = None
            report(self.output, self.session, mark, self.last)


async def next_line(lines: "asyncio.Queue[str | None]", worker: asyncio.Task[None]) -> str | None:
    """The next input line; EOF as well when the worker stopped (it never does on its own)."""
    get = asyncio.ensure_future(lines.get())
    await asyncio.wait({get, worker}, return_when=asyncio.FIRST_COMPLETED)
    if get.done():
        return get.result()
    get.cancel()
    return EOF


async def run_stream_input(session: Session, output: HeadlessOutput, stream: IO[str] | None = None) -> int:
    return await Driver(session, output).run(stream or sys.stdin)
