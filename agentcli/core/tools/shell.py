"""The bash tool: run one shell command in the workspace, safely bounded.

Each command runs as ``bash -c`` in its own session (so its own process group), with
stdin closed and stdout and stderr merged into one pipe that this module owns. Nothing
a call starts outlives it: when the command exits, times out or is cancelled, its group
and everything else it started (found by the call's marker, also after ``setsid`` or a
double fork; see ``processes.py``) are stopped: SIGTERM, a short grace, then SIGKILL.
Long-running processes use ``run_in_background`` instead (``background.py``). Output is
kept as head and tail only, so a command printing gigabytes costs little memory; the
full copy in the session folder is capped (``outputs.py``).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..events import Notice, ToolOutput
from ..storage.outputs import CappedCopy
from ..system import processes
from ..system.child_objects import absorb, child_git_env
from ..system.git_config import untrusted_git_env
from ..system.secret_env import command_env
from .base import SandboxStopped, Tool, ToolContext
from .caps import BASH_CAP, cap_output, decode

if TYPE_CHECKING:
    from ..system.sandbox import Widening

DEFAULT_TIMEOUT = 120  # seconds
MAX_TIMEOUT = 600
DRAIN_GRACE = 1.0  # seconds to wait for end of output after the command itself exited
_HEAD_KEEP = BASH_CAP  # bytes of output kept from the start
_TAIL_KEEP = BASH_CAP  # bytes of output kept from the end
LIVE_EVERY = 0.25  # seconds between two reports of a running command's output so far (ToolOutput)


# ---------------------------------------------------------------- output capture


class _Capture(asyncio.Protocol):
    """Reads the command's output pipe, keeping head and tail, copying long output to a capped file."""

    def __init__(self, done: asyncio.Future[None], ctx: ToolContext | None, name: str) -> None:
        self.done = done
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.dropped = 0
        self.dropped_lines = 0
        self.ctx, self.name = ctx, name  # where a full copy goes, once the output is too long to show
        self.spill: CappedCopy | None = None
        self.report: asyncio.TimerHandle | None = None  # the next ToolOutput, while the command runs
        self.reporting = ctx is not None

    def data_received(self, data: bytes) -> None:
        self.total += len(data)
        self._copy(data)
        if len(self.head) < _HEAD_KEEP:
            take = _HEAD_KEEP - len(self.head)
            self.head += data[:take]
            data = data[take:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * _TAIL_KEEP:
                excess = len(self.tail) - _TAIL_KEEP
                self.dropped += excess
                self.dropped_lines += self.tail.count(b"\n", 0, excess)
                del self.tail[:excess]
        if self.reporting and self.report is None:
            self.report = asyncio.get_running_loop().call_later(LIVE_EVERY, self._report)

    def _report(self) -> None:
        """The output so far, to a front end that shows it live; at most every LIVE_EVERY seconds."""
        self.report = None
        if self.reporting and self.ctx is not None:
            self.ctx.emit(
                ToolOutput(
                    id=self.ctx.tool_use_id,
                    text=self.text(),
                    agent_id=self.ctx.agent_id,
                    parent_tool_use_id=self.ctx.parent_tool_use_id,
                )
            )

    def stop_reports(self) -> None:
        """The call ends: its result says the rest."""
        self.reporting = False
        if self.report is not None:
            self.report.cancel()

    def _copy(self, data: bytes) -> None:
        if self.spill is None:
            if self.ctx is None or self.ctx.output_dir is None or self.total <= BASH_CAP:
                return
            self.spill = CappedCopy(self.ctx, self.name)
            self.spill.write(bytes(self.head + self.tail))  # everything before this chunk (nothing dropped yet)
        self.spill.write(data)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def close_spill(self) -> None:
        if self.spill is not None:
            self.spill.close()

    def text(self) -> str:
        """The output, cut to head and tail (with cap_output's marker) when long."""
        if not self.dropped:
            return cap_output(decode(bytes(self.head + self.tail)).rstrip("\n"), BASH_CAP)
        head_text = decode(bytes(self.head))
        tail_text = decode(bytes(self.tail)).rstrip("\n")
        head = head_text[: BASH_CAP * 2 // 3]
        tail = tail_text[-(BASH_CAP // 3) :]
        cut = len(head_text) - len(head) + self.dropped + len(tail_text) - len(tail)
        lines = (
            head_text.count("\n", len(head)) + self.dropped_lines + tail_text.count("\n", 0, len(tail_text) - len(tail))
        )
        return f"{head}\n… [{cut:,} characters ({lines:,} lines) cut] …\n{tail}"


def _seconds(value: float) -> str:
    return f"{value:g}"


# ---------------------------------------------------------------- the tool


# Inside the sandbox, bash runs the command under this script, which counts what the command left
# running in the sandbox's PID namespace (1 is bwrap's init, $$ the script, and the bridge to the proxy
# of the allowed hosts is the sandbox's own) and writes the number to
# the file descriptor in $1, before the kernel kills them all as the script exits.
_COUNT_LEFTOVERS = r"""r=$1
bash -c "$2" {r}>&-
s=$?
n=0
for p in /proc/[0-9]*; do
  case ${p#/proc/} in 1|$$|"$AGENTCLI_PROXY_PID") continue;; esac
  read -r l < "$p/stat" 2>/dev/null || continue
  l=${l##*) }
  case ${l%% *} in Z|X) ;; *) n=$((n+1));; esac
done
echo $n >&$r
exit $s"""


async def sandboxed(ctx: ToolContext) -> bool:
    """Whether this call runs in the OS sandbox; ToolError when the sandbox is required but cannot be used."""
    sandbox = ctx.sandbox
    if sandbox is None:
        return False
    from ..system.sandbox import SandboxError

    try:
        usable = await asyncio.to_thread(sandbox.usable)
    except SandboxError as exc:
        raise ToolError(str(exc)) from None
    if notice := sandbox.take_notice():
        ctx.emit(Notice(level="warning", text=notice))
    return usable


def granted(ctx: ToolContext) -> Widening:
    """What the user's answers let this session's bash calls have beyond the OS sandbox."""
    from ..policy.permissions import Permissions
    from ..system.sandbox import Widening

    return ctx.permissions.sandbox_grants if isinstance(ctx.permissions, Permissions) else Widening()


async def spawn(
    command: str, ctx: ToolContext, marker: str, *, count_leftovers: bool = False, widen: Widening | None = None
) -> tuple[asyncio.subprocess.Process, Any, int | None]:
    """Start ``bash -c command`` in the workspace root, in a session of its own, with ``marker`` in its
    environment, in the OS sandbox where there is one; stdout and stderr go to one pipe, whose read end
    (a file) is returned. ``count_leftovers`` (sandbox only): also the read end of a pipe that says how
    many processes the command left running when it ended (None outside the sandbox). ``widen``: what
    the sandbox gives this call beyond itself (default: what the session's answers allowed)."""
    env = command_env(ctx.settings.keep_secret_env)
    env[processes.MARKER] = marker
    env.update(await asyncio.to_thread(untrusted_git_env, ctx.workspace.root, ctx.settings.trusted, env))
    env.update(await asyncio.to_thread(child_git_env, ctx.workspace.root, ctx.workspace.branch))
    bash = shutil.which("bash", path=env.get("PATH")) or "/bin/bash"
    argv = [bash, "-c", command]
    root = ctx.workspace.root
    preexec = processes.die_with_parent()
    report: tuple[int, int] | None = None
    passed: list[int] = []  # descriptors for bwrap: the seccomp filter
    if await sandboxed(ctx):
        assert ctx.sandbox is not None
        from ..system.sandbox import SandboxError, readable_dirs, writable_dirs

        if count_leftovers:
            report = os.pipe()
            argv = [bash, "-c", _COUNT_LEFTOVERS, "bash", str(report[1]), command]
        writable = writable_dirs(root, ctx.workspace.extra_dirs, ctx.workspace.branch)
        try:  # in a thread: it looks at the disk for what it holds, and asks git for core.hooksPath
            argv = await asyncio.to_thread(
                ctx.sandbox.wrap,
                argv,
                cwd=root,
                writable=writable,
                widen=granted(ctx) if widen is None else widen,
                pass_fds=passed,
                readable=readable_dirs(root, ctx.workspace.branch),
            )
        except SandboxError as exc:
            for fd in [*(report or ()), *passed]:
                os.close(fd)
            raise ToolError(str(exc)) from None
        preexec = None  # bwrap --die-with-parent does it
        if report:
            passed.append(report[1])
    processes.become_subreaper()
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(root),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
            preexec_fn=preexec,
            pass_fds=passed,
        )
    except BaseException as exc:
        os.close(read_fd)
        if report:
            os.close(report[0])
        if isinstance(exc, OSError):
            raise ToolError(f"Could not start bash: {exc.strerror or exc}.") from None
        # Cancelled while asyncio still set the process up: asyncio SIGKILLs bash alone, so what bash
        # had started meanwhile (a background job, now our orphan) is found by its marker and stopped.
        await asyncio.shield(processes.stop_call(marker))
        raise
    finally:
        os.close(write_fd)
        processes.close_all(passed)
    processes.started(marker, proc.pid)
    return proc, os.fdopen(read_fd, "rb", buffering=0), report[0] if report else None


def _read_count(fd: int | None) -> int:
    """The number the leftover counter wrote (0 when it wrote none: it was killed, or timed out)."""
    if fd is None:
        return 0
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 64)
    except OSError:
        data = b""
    finally:
        os.close(fd)
    try:
        return int(data.strip() or 0)
    except ValueError:
        return 0


class Bash(Tool):
    name = "bash"
    role = "commands"  # an attempt's check runs through it
    built_in_types = ("bash",)
    list_place = 1  # its place when a built-in agent type's tools are listed
    preview = "command"  # an approval shows the command whole below its description
    claude_name = "Bash"
    changes_things = True
    companions = ("bash_output", "kill_bash")  # its background shells: what gives bash gives them too
    judged_by = "command"
    receipt = "command"
    on_demand = False
    brings_up = companions
    description = (
        "Run a shell command with `bash -c` in the workspace root; stdout and stderr come back merged, long "
        "output cut to its beginning and end, and a non-zero exit is an error. For builds, tests, git and other "
        "programs; read, search and edit files with read_file, grep, glob and edit_file. Each call starts fresh "
        "in the workspace root (chain steps with &&), stdin is closed (pass --yes and the like), and nothing a "
        "call starts outlives it: servers and watchers need run_in_background."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line to run with bash -c."},
            "timeout": {
                "type": "number",
                "minimum": 1,
                "maximum": MAX_TIMEOUT,
                "description": f"Seconds before it is killed (default {DEFAULT_TIMEOUT}).",
            },
            "description": {
                "type": "string",
                "description": "What it does, in a few words, for the user who approves it.",
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Leave it running and return its id at once; bash_output reads it, kill_bash stops it.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    kind = "exec"
    key_arg = "command"

    async def run(self, args: dict[str, Any], ctx: ToolContext, widen: Widening | None = None) -> str:
        """``widen``: what the user allowed beyond the OS sandbox for this call alone, when it ran once
        already and the sandbox stopped it (``SandboxStopped``: the registry asks)."""
        command: str = args["command"]
        if not command.strip():
            raise ToolError("The command is empty.")
        if args.get("run_in_background"):
            shell = await ctx.shells.start(command, ctx, spawn)
            return (
                f"Started {shell.id} in the background (pid {shell.pid}). Read its output with bash_output "
                f'{{"bash_id": "{shell.id}"}}; stop it with kill_bash. It is stopped when the session ends.'
            )
        if ctx.checkpoints is None:
            return await self.run_command(command, args, ctx, widen)
        from ..storage.checkpoints import scan_tree, tree_changes

        root = ctx.workspace.root
        before = await asyncio.to_thread(scan_tree, root)
        try:
            return await self.run_command(command, args, ctx, widen)
        finally:  # what the command changed, kept for /rewind as far as it can be
            if before is None:
                ctx.checkpoints.bash_changed({"": "unknown"})
            else:
                ctx.checkpoints.bash_changed(await asyncio.shield(asyncio.to_thread(tree_changes, root, before)))

    async def run_command(
        self, command: str, args: dict[str, Any], ctx: ToolContext, widen: Widening | None = None
    ) -> str:
        """Run it once; when it fails in the OS sandbox for want of something the sandbox denied, it raises
        ``SandboxStopped``, and the registry may let it run once more with just that added (``widen``)."""
        timeout = float(args.get("timeout") or DEFAULT_TIMEOUT)
        timeout = min(max(timeout, 1.0), float(MAX_TIMEOUT))
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", ctx.tool_use_id)
        marker = processes.new_marker()
        given = granted(ctx) if widen is None else widen
        proc, pipe, count = await spawn(command, ctx, marker, count_leftovers=True, widen=given)
        boxed = count is not None

        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        capture = _Capture(done, ctx, f"bash-{stem or marker.rsplit('-', 1)[-1][:12]}.txt")
        pgid = proc.pid
        transport = None
        timed_out = False
        left = 0  # processes the command left running, stopped when it ended
        try:
            transport, _ = await loop.connect_read_pipe(lambda: capture, pipe)
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                timed_out = True
                await processes.stop_group(pgid)
                await proc.wait()
            processes.ended(marker, proc.pid)
            left = _read_count(count)  # in the sandbox: what the kernel stopped as the command ended
            count = None
            try:  # a moment for background jobs still writing to finish on their own
                await asyncio.wait_for(asyncio.shield(done), DRAIN_GRACE)
            except TimeoutError:
                pass
            stopped = await processes.stop_call(marker)  # in the sandbox, the kernel's work still under way
            left = left if boxed else stopped
            if processes.group_alive(pgid):  # where psutil cannot tell (not Linux), the process group still can
                left += 1
                await processes.stop_group(pgid)
            try:
                await asyncio.wait_for(asyncio.shield(done), 1.0)
            except TimeoutError:
                pass  # held by a process outside our reach: stop reading anyway
        except BaseException:  # cancellation, mostly: leave nothing running
            try:
                await processes.stop_group(pgid)
            finally:
                if proc.returncode is None:
                    processes.kill(proc)
            try:
                await asyncio.wait_for(proc.wait(), processes.KILL_GRACE)
            except (TimeoutError, asyncio.CancelledError):
                pass
            processes.ended(marker, proc.pid)
            await asyncio.shield(processes.stop_call(marker))
            raise
        finally:
            processes.ended(marker, proc.pid)
            _read_count(count)
            if transport is not None:
                transport.close()
            else:
                pipe.close()
            capture.stop_reports()
            capture.close_spill()

        output = capture.text()
        notes = []
        if left and not timed_out:
            notes.append(
                f"[Stopped {left} process{'es' if left != 1 else ''} the command left running: nothing a call "
                "starts outlives it. Start servers and watchers with run_in_background: true.]"
            )
        if capture.spill is not None:
            notes.append(capture.spill.note(capture.total))
        body = "\n".join([output or "(no output)", *notes])
        if timed_out:
            raise ToolError(
                f"Command timed out and was killed after {_seconds(timeout)} s (pass a larger timeout, "
                f"up to {MAX_TIMEOUT}, if it needs longer). Output so far:\n{body}"
            )
        code = proc.returncode
        if ctx.workspace.branch and (
            problem := await asyncio.to_thread(absorb, ctx.workspace.root, ctx.workspace.branch)
        ):
            body = f"{body}\n[{problem}]"
        if widen is not None:
            body = f"{body}\n[Ran again in the OS sandbox with {widen.describe()} added, as the user allowed.]"
        if code and boxed and ctx.sandbox is not None:
            from ..system.sandbox import writable_dirs

            sandbox = ctx.sandbox
            writable = writable_dirs(ctx.workspace.root, ctx.workspace.extra_dirs, ctx.workspace.branch)
            needed = await asyncio.to_thread(sandbox.needs, output, writable, given, ctx.workspace.root)

            def refused(unasked: str) -> str:  # why nobody allowed it ("declined": the user said no)
                why = sandbox.explain(output, needed, "" if unasked == "declined" else unasked)
                return _ended(code, f"{body}\n{why}" if why else body)

            if needed and widen is None:
                raise SandboxStopped(needed, lambda: self.run(args, ctx, widen=given | needed), refused)
            return refused("it ran again once already" if needed else "")
        return _ended(code, body)


def _ended(code: int | None, body: str) -> str:
    """The result of a command that ended with ``code``: its output, or ToolError with it when it failed."""
    if code and code < 0:
        try:
            how = f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"was killed by signal {-code}"
        raise ToolError(f"Command {how} (exit code {code}).\n{body}")
    if code:
        raise ToolError(f"Command failed with exit code {code}.\n{body}")
    return body
