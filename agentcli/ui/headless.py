"""Headless front end (-p): one prompt in, the answer out as text, JSON or a JSON event stream."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from typing import IO, Any

from ..core.events import Event, Notice, Retrying
from ..core.session import LLMError, Session
from .escapes import json_line, visible
from .signals import exit_code, exit_signals


READER_GONE = 141  # the exit status of a writer whose pipe closed (128 + SIGPIPE), as in `yes | head -1`


class HeadlessOutput:
    """The sink for a headless run: writes stream-json lines, and notices to stderr.

    When the reader goes away (`agentcli -p … | head -1`), writing stops quietly, the stream is
    pointed at /dev/null so nothing complains at exit, and ``run`` (the task of the run) is cancelled:
    nobody reads what it would do.
    """

    def __init__(self, output_format: str, out: IO[str], err: IO[str]) -> None:
        self.format, self.out, self.err = output_format, out, err
        self.reader_gone = False
        self.run: asyncio.Task[Any] | None = None

    def __call__(self, event: Event) -> None:
        if self.format == "stream-json":
            self.line(event.to_dict())
        elif isinstance(event, Retrying) or isinstance(event, Notice) and event.level in ("warning", "error"):
            self.write(self.err, f"agentcli: {event.text}\n")

    def line(self, record: dict[str, Any]) -> None:
        self.write(self.out, json_line(json.dumps(record, ensure_ascii=False, default=str)) + "\n")

    def write(self, stream: IO[str], text: str) -> None:
        if self.reader_gone:
            return
        try:
            stream.write(visible(text))  # what a stranger wrote never drives the reader's terminal
            stream.flush()
        except BrokenPipeError:
            self.reader_gone = True
            try:  # what is still buffered goes nowhere at exit, instead of raising again
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
            except (OSError, ValueError):  # not a real file
                pass
            if self.run is not None:
                self.run.cancel()


# Result subtypes, named as Claude Code's -p names them, so scripts written for it keep working.
SUBTYPES = {"done": "success", "capped": "error_max_turns", "error": "error_during_execution",
            "interrupted": "interrupted", "refused": "error_refusal"}


def summary(session: Session, result: str, is_error: bool, status: str, seconds: float) -> dict[str, Any]:
    main = session.main
    cost = session.usage.cost
    return {
        "type": "result",
        "subtype": SUBTYPES.get(status, status),
        "result": result,
        "is_error": is_error,
        "session_id": session.id,
        "num_turns": main.turns,
        "duration_ms": round(seconds * 1000),
        "total_cost_usd": None if cost is None else round(cost, 6),
        "model": main.model,
        "usage": session.usage.to_dict(),
        "main_usage": main.usage.to_dict(),
        "tokens_kept_out": session.subagents.tokens_kept_out,
        "subagents": [r.to_dict() for r in session.subagents.records.values()],
    }


MCP_STATUS = {"ready": "connected", "starting": "pending"}  # Claude Code's words in the init line


async def run_headless(session: Session, prompt: str, output: HeadlessOutput) -> int:
    """Run one prompt to the end. Returns the process exit code."""
    await session.mcp.wait_started()  # the first request waits for them, so the init line lists their tools
    if output.format == "stream-json":
        output.line({"type": "system", "subtype": "init", "session_id": session.id, "model": session.main.model,
                     "cwd": str(session.workspace.root), "tools": session.main.tools.names(),
                     "mcp_servers": [{"name": name, "status": MCP_STATUS.get(server.state, server.state)}
                                     for name, server in session.mcp.servers.items()],
                     "permission_mode": session.permissions.mode})
    if output.reader_gone:  # gone before the start: nothing to do
        await session.aclose()
        return READER_GONE
    output.run = asyncio.current_task()
    started = time.monotonic()
    ended_by: list[int] = []  # SIGTERM or SIGHUP: stop as an interrupt does, then exit 128 + signum

    def on_signal(signum: int) -> None:
        ended_by.append(signum)
        if output.run is not None:
            output.run.cancel()

    with exit_signals(on_signal):  # also while closing: background shells are being stopped
        try:
            run = await session.send(prompt)
            run = await session.finish_background() or run  # background children, and the turn that reads them
            text, status, is_error = run.text, run.status, run.status != "done"  # 0 only for a complete answer
            reason = f"stopped after --max-turns {session.main.max_turns} turns" if run.status == "capped" else ""
        except LLMError as exc:
            text, status, is_error, reason = str(exc), "error", True, str(exc)
        except asyncio.CancelledError:
            text, status, is_error, reason = session.main.last_text(), "interrupted", True, "interrupted"
            if ended_by:
                reason = f"stopped by {signal.Signals(ended_by[0]).name}"
        finally:
            output.run = None  # the run is over: a closed pipe from here on has nothing to stop
            await session.aclose()
    if output.format == "text":
        if text and status not in ("error", "refused"):  # a refusal is told on stderr, as a notice
            output.write(output.out, text.rstrip("\n") + "\n")
    else:
        output.line(summary(session, text, is_error, status, time.monotonic() - started))
    if reason and output.format == "text":
        output.write(output.err, f"agentcli: {reason}\n")
    if output.reader_gone:
        return READER_GONE
    if ended_by:
        return exit_code(ended_by[0])
    return 130 if status == "interrupted" else (1 if is_error else 0)


def make_headless_output(output_format: str) -> HeadlessOutput:
    return HeadlessOutput(output_format, sys.stdout, sys.stderr)

