"""The status line: Claude Code's ``statusLine`` setting, shown under the prompt (TUI) or in the bottom
toolbar (line mode).

    statusLine = {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0}

How the command runs, and why a workspace's own runs only when trusted and then in the OS sandbox, is
core/policy/status_command.py. Here: what it gets on stdin (``facts``: Claude Code's field names where
it has them, agentcli's own beside them), when it runs, and what of its output is shown. The first line
it prints is the line, its colours (SGR escapes) kept and every other escape or control character
dropped; stderr is ignored, and a failed run or no output blanks the line, as in Claude Code.

It runs again when the facts change, at most every ``INTERVAL`` seconds, always with the newest facts,
in a thread, never on the front end's loop. A run that outlives its timeout is killed; the line keeps the
last output, and one note says so, once.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import __version__

if TYPE_CHECKING:
    from ..core.door import SessionSurface, StatusCommand

INTERVAL = 0.3  # seconds between runs at most (Claude Code's 300 ms)
LINE_CAP = 2_000  # characters of the line that are kept


def facts(session: SessionSurface, *, busy: bool = False) -> dict[str, Any]:
    """What the command gets on stdin: Claude Code's fields (``session_id``, ``model``, ``workspace``,
    ``cost``, ``context_window`` …) and agentcli's (``permission_mode``, ``agentcli.subagents_running`` …)."""
    root, model = str(session.workspace.root), session.model
    usage, used, window = session.usage, session.context_used(), session.context_window()
    last = session.last_usage
    share = round(100 * used / window, 1) if window else 0.0
    store = getattr(session, "store", None)
    return {
        "hook_event_name": "Status",
        "session_id": session.id,
        "transcript_path": str(store.main_path) if store is not None else "",
        "cwd": root,
        "model": {"id": model, "display_name": model},
        "workspace": {"current_dir": root, "project_dir": root},
        "version": __version__,
        "permission_mode": session.permission_mode,  # as Claude Code's hooks name it
        # None only when the model has no known price and tokens were spent (the status bar says "cost unknown")
        "cost": {
            "total_cost_usd": round(usage.cost, 6) if usage.cost is not None else None if usage.total_tokens else 0.0
        },
        "exceeds_200k_tokens": used > 200_000,
        "context_window": {
            "total_input_tokens": usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
            "total_output_tokens": usage.output_tokens,
            "context_window_size": window,
            "used_percentage": share,
            "remaining_percentage": round(100 - share, 1),
            "current_usage": {
                "input_tokens": last.input_tokens,
                "output_tokens": last.output_tokens,
                "cache_creation_input_tokens": last.cache_write_tokens,
                "cache_read_input_tokens": last.cache_read_tokens,
            },
        },
        "agentcli": {
            "busy": busy,  # the main agent is working on a turn
            "context_used_tokens": used,
            "tokens_kept_out": session.tokens_kept_out,  # what subagents kept out of the main context
            "subagents_running": [
                {"id": r.id, "subagent_type": r.type, "description": r.description, "background": r.background}
                for r in session.running_children
            ],
        },
    }


_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_OTHER_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|.)?")


def clean(line: str) -> str:
    """``line`` with its colour escapes (SGR) kept and every other escape sequence and control character
    dropped: a status command cannot move the cursor, retitle the terminal or forge a second line."""
    out, at = [], 0
    for match in _SGR.finditer(line):
        out += [_plain(line[at : match.start()]), match.group()]
        at = match.end()
    out.append(_plain(line[at:]))
    return "".join(out)[:LINE_CAP]


def _plain(text: str) -> str:
    text = _OTHER_ESCAPES.sub("", text).replace("\t", " ")
    return "".join(c for c in text if c.isprintable())


class StatusLineRunner:
    """Runs the command when the facts change, debounced, and hands each new line to ``show``.

    ``warn`` gets one sentence the first time a run times out or cannot start. The front end calls
    ``changed`` with fresh facts whenever something it shows changed, and ``close`` when it ends."""

    def __init__(
        self,
        command: StatusCommand,
        *,
        show: Callable[[str], None],
        warn: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command, self.show, self.warn, self.clock = command, show, warn, clock
        self.line = ""  # the line shown now
        self.runs = 0  # runs started so far (tests watch it)
        self._latest: dict[str, Any] | None = None  # the newest facts
        self._sent: dict[str, Any] | None = None  # the facts of the latest run
        self._last_run = -INTERVAL
        self._since = clock()
        self._task: asyncio.Task[None] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._warned = False
        self._closed = False

    def changed(self, facts: dict[str, Any]) -> None:
        """The facts may have changed: run the command again soon with them (nothing when they did not)."""
        self._latest = facts
        if self._closed or facts == self._sent or (self._task is not None and not self._task.done()):
            return
        self._task = asyncio.get_running_loop().create_task(self._refresh(), name="status line")

    async def _refresh(self) -> None:
        while not self._closed and self._latest is not None and self._latest != self._sent:
            wait = self._last_run + INTERVAL - self.clock()
            if wait > 0:
                await asyncio.sleep(wait)  # at most every INTERVAL: what changes meanwhile joins this run
            facts = self._sent = self._latest
            self._last_run = self.clock()
            self.runs += 1
            payload = {
                **facts,
                "cost": {**facts.get("cost", {}), "total_duration_ms": int(1000 * (self.clock() - self._since))},
            }
            line, problem = await asyncio.to_thread(self.command.run, json.dumps(payload).encode(), self._started)
            if problem:
                self.note(problem)
            line = None if line is None else clean(line)
            if line is not None and line != self.line and not self._closed:
                self.line = line
                self.show(line)

    def _started(self, proc: subprocess.Popen[bytes] | None) -> None:
        self._proc = proc
        if proc is not None and self._closed:
            self._kill()

    def note(self, text: str) -> None:
        if not self._warned and not self._closed:
            self._warned = True
            self.warn(text)

    def close(self) -> None:
        """Stop: no run starts again, and one running now is killed."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
        self._kill()

    def _kill(self) -> None:
        proc = self._proc
        if proc is not None and proc.returncode is None:
            proc.kill()  # communicate() in its thread returns, and the run kills the rest of its group
