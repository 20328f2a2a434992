"""The session's background shells: each one's process, its output kept in memory and in a capped copy, and
how it is stopped. The tools that use them (``bash`` with ``run_in_background``, ``bash_output`` and
``kill_bash``) are in ``shell.py`` and ``background.py``; every ``ToolContext`` holds one registry.
"""

from __future__ import annotations

import asyncio
import atexit
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ToolError
from ..storage.outputs import CallPlace, CappedCopy
from ..system import processes
from ..system.processes import stop_group
from ..units import seconds
from ..vocabulary import ShellStatus
from .caps import BASH_CAP, cap_output, decode


class ShellCaller(CallPlace, Protocol):
    """What the shells read of the call that starts or reads one (a ``ToolContext``, whose module imports this one)."""

    @property
    def agent_id(self) -> str: ...
    @property
    def depth(self) -> int: ...


# How the bash tool starts a command: (process, the read end of its output pipe, a leftover counter or None).
Spawn = Callable[..., Awaitable[tuple[Any, Any, "int | None"]]]


UNREAD_KEEP = 60_000  # bytes of unread output kept in memory per shell; older unread output is dropped


@dataclass
class BackgroundShell:
    id: str
    command: str
    owner: str  # agent id of the agent that started it
    pid: int
    marker: str
    started: float = field(default_factory=time.time)
    ended: float | None = None
    status: ShellStatus = "running"
    returncode: int | None = None
    copy: CappedCopy | None = None
    unread: bytearray = field(default_factory=bytearray)
    unread_dropped: int = 0
    total: int = 0
    proc: Any = None  # asyncio.subprocess.Process
    waiter: asyncio.Task[None] | None = None
    eof: asyncio.Future[None] | None = None

    def seconds(self) -> float:
        return (self.ended or time.time()) - self.started

    def state(self) -> str:
        """'running', 'exited with code 0', 'killed', for lists and notes."""
        if self.status == "exited":
            code = self.returncode
            return f"exited with code {code}" if code is None or code >= 0 else f"killed by signal {-code}"
        return self.status


class _ShellOutput(asyncio.Protocol):
    def __init__(self, shell: BackgroundShell) -> None:
        self.shell = shell

    def data_received(self, data: bytes) -> None:
        shell = self.shell
        shell.total += len(data)
        if shell.copy is not None:
            shell.copy.write(data)
            shell.copy.flush()
        shell.unread += data
        if len(shell.unread) > 2 * UNREAD_KEEP:
            excess = len(shell.unread) - UNREAD_KEEP
            shell.unread_dropped += excess
            del shell.unread[:excess]

    def connection_lost(self, exc: Exception | None) -> None:
        if self.shell.eof is not None and not self.shell.eof.done():
            self.shell.eof.set_result(None)


class BackgroundShells:
    """This session's background shells, by id."""

    def __init__(self) -> None:
        self.shells: dict[str, BackgroundShell] = {}
        self.next_number = 1

    def running(self) -> list[BackgroundShell]:
        return [s for s in self.shells.values() if s.status == "running"]

    async def start(self, command: str, ctx: ShellCaller, spawn: Spawn) -> BackgroundShell:
        """Start ``command`` with ``spawn`` (the bash tool's, which sets up its environment and sandbox)."""
        shell_id = f"bash-{self.next_number}"
        self.next_number += 1
        marker = processes.new_marker()
        proc, pipe, _ = await spawn(command, ctx, marker)
        shell = BackgroundShell(
            id=shell_id, command=command, owner=ctx.agent_id, pid=proc.pid, marker=marker, proc=proc
        )
        if ctx.output_dir is not None:
            shell.copy = CappedCopy(ctx, f"{shell_id}-{marker.rsplit('-', 1)[-1][:8]}.txt")
        loop = asyncio.get_running_loop()
        shell.eof = loop.create_future()
        await loop.connect_read_pipe(lambda: _ShellOutput(shell), pipe)
        self.shells[shell_id] = shell
        shell.waiter = asyncio.create_task(self._wait(shell), name=f"background {shell_id}")
        _at_exit(self)
        return shell

    async def _wait(self, shell: BackgroundShell) -> None:
        """When the command exits: record how, stop what it left running, close its output."""
        try:
            shell.returncode = await shell.proc.wait()
        finally:
            processes.ended(shell.marker, shell.pid)
            try:
                await processes.stop_call(shell.marker)
                if shell.eof is not None:
                    await asyncio.wait([shell.eof], timeout=1.0)
            finally:
                if shell.status == "running":
                    shell.status = "exited"
                shell.ended = shell.ended or time.time()
                if shell.copy is not None:
                    shell.copy.close()

    def find(self, bash_id: str, ctx: ShellCaller) -> BackgroundShell:
        """The shell ``bash_id`` if this agent may use it; a ToolError in one sentence otherwise."""
        shell = self.shells.get(bash_id.strip())
        if shell is None or (ctx.depth > 0 and shell.owner != ctx.agent_id):
            mine = [s.id for s in self.shells.values() if ctx.depth == 0 or s.owner == ctx.agent_id]
            known = f"; yours: {', '.join(mine)}" if mine else "; you have started none"
            raise ToolError(f"There is no background shell {bash_id!r}{known}.")
        return shell

    def read_new(self, shell: BackgroundShell) -> str:
        """Output since the last read, cut to head and tail, and a status line."""
        text = decode(bytes(shell.unread)).rstrip("\n")
        dropped = shell.unread_dropped
        shell.unread.clear()
        shell.unread_dropped = 0
        lines = [cap_output(text, BASH_CAP) if text else "(no new output)"]
        if dropped:
            lines.append(f"[{dropped:,} bytes of earlier unread output are not shown]")
        lines.append(self.status_line(shell))
        return "\n".join(lines)

    def status_line(self, shell: BackgroundShell) -> str:
        saved = ""
        if shell.copy is not None and (shell.copy.written or shell.copy.dropped):
            saved = " · " + shell.copy.note().strip("[]")
        return f"[{shell.id} · {shell.state()} · pid {shell.pid} · {seconds(shell.seconds())}{saved}]"

    async def stop(self, shell: BackgroundShell) -> None:
        """Stop the shell: its process group and everything carrying its marker."""
        if shell.status != "running":
            return
        shell.status = "killed"
        shell.ended = time.time()
        try:
            await stop_group(shell.pid)
            await processes.stop_call(shell.marker)
        finally:
            if shell.waiter is not None:
                await asyncio.wait([shell.waiter], timeout=5.0)

    async def stop_all(self) -> None:
        for shell in self.running():
            await self.stop(shell)

    def kill_now(self) -> None:
        running = self.running()
        for shell in running:
            processes.kill_group(shell.pid)
        processes.kill_now([s.marker for s in running])


_registries: list[BackgroundShells] = []


def _at_exit(shells: BackgroundShells) -> None:
    """However the process ends (short of SIGKILL), no background shell outlives it."""
    if not _registries:
        atexit.register(lambda: [r.kill_now() for r in _registries])  # type: ignore[func-returns-value]  # a list of Nones, never read
    if shells not in _registries:
        _registries.append(shells)
