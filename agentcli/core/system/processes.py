"""What a bash call started, found and stopped however it tried to get away.

Two mechanisms work together (Linux; elsewhere only the process group is stopped):

- **A marker.** Every bash call (and every background shell) runs with its own
  ``AGENTCLI_CALL=<token>`` environment variable. Everything it starts inherits it, also
  through ``setsid``, ``nohup``, double forks and ``setsid -f``, so ``/proc/*/environ`` names
  what each call started, whichever session or process group it moved to.
- **agentcli is the subreaper** of its descendants (``PR_SET_CHILD_SUBREAPER``). A process whose
  parent died is re-parented to agentcli instead of init, so it stays findable even when it
  scrubbed its environment, and agentcli reaps it (no zombies are left behind).

When a call ends, times out or is cancelled, ``stop_call`` kills what carries its marker, what
carries the marker of a call of ours that has ended, and orphans that carry no marker, then
reaps them. An orphan is a child of ours that asyncio does not wait for: it lives in a bash
call's session, was seen carrying a marker, or lives in a session other than agentcli's
(``setsid``, also by a middle process that then exited). So code that starts a child in a new
session of its own must register its pid in ``direct`` (and remove it once waited for), or that
child may be taken for an orphan.

The processes are read and signalled with psutil (a signal goes to the process that was read,
never to a new one that reused its pid); the marker, the subreaper and the orphan rules are ours,
as no library has them. ``stop_group`` and ``kill_group`` stop a call's process group, the way every
process agentcli starts in a session of its own is stopped. Starting stays with each caller: bash
calls and hooks need asyncio's pipes, rg a thread of its own, MCP servers the SDK's stdio client,
so one start helper would be a switch over four shapes.

Known limit: a process that scrubs its environment and detaches with ``setsid`` while its
parent stays alive is found only once that parent has died.

Both need agentcli alive. When it is SIGKILLed, what it started directly gets SIGKILL from the
kernel (``PR_SET_PDEATHSIG``, ``die_with_parent``); what those started lives on, unless the OS
sandbox ran them (``core/system/sandbox.py``): its PID namespace dies with agentcli, and a daemon that
left its call's session and environment dies with the call, found or not.
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

    import psutil  # imported where processes are first read: startup does without it

MARKER = "AGENTCLI_CALL"
_MARKER_BYTES = MARKER.encode() + b"="
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
_ROUNDS = 50  # SIGKILL rounds against processes that keep forking

active: dict[str, int] = {}  # marker -> session of each running call and background shell
direct: set[int] = set()  # bash processes whose exit status asyncio waits for: never reaped here
_sessions: set[int] = set()  # the sessions bash calls were started in (each call's bash pid)
_seen: set[int] = set()  # processes found carrying a marker of ours: reaped here once they die
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (once; Linux only)."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        atexit.register(kill_all_now)
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
            except (OSError, AttributeError):
                pass
    return _subreaper


_PR_SET_PDEATHSIG = 1
_prctl = None  # libc's prctl, looked up before any fork: the child only calls it


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when agentcli dies, even by SIGKILL (Linux).

    The kernel sends it when the thread that started the child ends, so start children from the
    event loop's thread (asyncio does). None where it cannot be had."""
    global _prctl
    if not sys.platform.startswith("linux"):
        return None
    if _prctl is None:
        try:
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            return None
    prctl, parent = _prctl, os.getpid()

    def in_child() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # agentcli died before the line above: the signal will never come
            os._exit(1)

    return in_child


def new_marker() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:16]}"


def _pids() -> list[int]:
    import psutil

    try:
        return psutil.pids()
    except (psutil.Error, OSError):
        return []


_STATES = {"zombie": "Z", "dead": "X"}  # psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD


def _stat(pid: int | str) -> tuple[str, int, int, float] | None:
    """(state, parent pid, session id, start time) of ``pid`` ("self": this process); None when it is gone.
    The state is "Z" for a zombie, "X" for a dead process, and "R" for any live one."""
    import psutil

    try:
        return _facts(psutil.Process() if pid == "self" else psutil.Process(int(pid)))
    except (psutil.Error, ValueError):
        return None


def _facts(proc: psutil.Process) -> tuple[str, int, int, float] | None:
    import psutil

    try:
        with proc.oneshot():
            state, parent, start = _STATES.get(proc.status(), "R"), proc.ppid(), proc.create_time()
    except (psutil.Error, OSError):
        return None
    try:
        session = os.getsid(proc.pid)
    except OSError:  # gone meanwhile, or a zombie that no longer says
        session = -1
    return state, parent, session, start


def _marker_of(pid: int | psutil.Process) -> str | None:
    import psutil

    try:
        proc = pid if isinstance(pid, psutil.Process) else psutil.Process(pid)
        return proc.environ().get(MARKER)
    except (psutil.Error, OSError):
        return None


def started(marker: str, pid: int) -> None:
    """Register a bash process that was just started (in a session of its own) with ``marker``."""
    active[marker] = pid
    direct.add(pid)
    _sessions.add(pid)


def ended(marker: str, pid: int) -> None:
    """The call's bash process has been waited for; its marker no longer protects anything."""
    active.pop(marker, None)
    direct.discard(pid)


def leftovers(marker: str | None) -> tuple[list[psutil.Process], list[int]]:
    """(live processes to stop, zombies to reap) at the end of the call with ``marker``.

    To stop: what carries ``marker``; what carries a marker of this agentcli whose call has ended;
    and orphans re-parented to us from a call's session that scrubbed the marker from their
    environment. To reap: zombies among our orphans.
    """
    import psutil

    me, mine = os.getpid(), f"{os.getpid()}-"
    own = _stat("self")
    born = own[3] if own else 0.0  # nothing older than agentcli can carry its markers
    running = set(active.values())
    try:
        mine_session = os.getsid(0)
    except OSError:
        mine_session = -1
    live: list[psutil.Process] = []
    zombies: list[int] = []
    for proc in psutil.process_iter():
        pid = proc.pid
        if pid == me:
            continue
        stat = _facts(proc)
        if stat is None:
            continue
        state, parent, session, start = stat
        if start < born:
            continue
        # An orphan: re-parented to us from a call, or detached from one with setsid (into another session).
        orphan = (
            parent == me
            and pid not in direct
            and (session in _sessions or pid in _seen or session == pid or session != mine_session)
        )
        if state in ("Z", "X"):
            if orphan:
                zombies.append(pid)
            continue
        found = _marker_of(proc)
        if (found is not None and (found == marker or (found.startswith(mine) and found not in active))) or (
            found is None and orphan and session not in running
        ):
            live.append(proc)
            _seen.add(pid)
    return live, zombies


def _kill(procs: list[psutil.Process], sig: int) -> None:
    import psutil

    for proc in procs:
        try:
            proc.send_signal(sig)  # psutil checks first that the pid was not reused
        except (psutil.Error, OSError):
            pass


def reap(pids: list[int]) -> None:
    for pid in pids:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except (ChildProcessError, OSError):
            done = pid
        if done:
            _seen.discard(pid)


async def stop_call(marker: str | None, grace: float = KILL_GRACE) -> int:
    """Stop what the call with ``marker`` left running (and stray orphans); returns how many were stopped."""
    if not sys.platform.startswith("linux"):
        return 0
    live, zombies = await asyncio.to_thread(leftovers, marker)
    reap(zombies)
    if not live:
        return 0
    stopped = {proc.pid for proc in live}
    _kill(live, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    try:
        while live and loop.time() < deadline:
            await asyncio.sleep(0.05)
            live, zombies = await asyncio.to_thread(leftovers, marker)
            reap(zombies)
            stopped.update(proc.pid for proc in live)
    finally:  # also when cancelled while waiting
        for _ in range(_ROUNDS):
            live, zombies = leftovers(marker)
            reap(zombies)
            if not live:
                break
            stopped.update(proc.pid for proc in live)
            _kill(live, signal.SIGKILL)
        reap(leftovers(marker)[1])
    return len(stopped)


def kill_all_now() -> None:
    """At exit: SIGKILL whatever still carries a marker of this process (short of SIGKILL, nothing outlives us)."""
    if sys.platform.startswith("linux"):
        import psutil

        mine = f"{os.getpid()}-"
        _kill([proc for proc in psutil.process_iter() if (_marker_of(proc) or "").startswith(mine)], signal.SIGKILL)


def kill_now(markers: list[str]) -> None:
    """SIGKILL everything carrying one of ``markers``, without waiting (the last resort at exit)."""
    if not markers or not sys.platform.startswith("linux"):
        return
    import psutil

    wanted = set(markers)
    _kill([proc for proc in psutil.process_iter() if _marker_of(proc) in wanted], signal.SIGKILL)


def kill(proc: subprocess.Popen[bytes] | asyncio.subprocess.Process) -> None:
    """SIGKILL one process this one started; one that has ended already is just as good."""
    try:
        proc.kill()
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- process groups


_finishing: set[asyncio.Future[None]] = set()  # groups whose start was cancelled, being stopped


async def start_in_session(*argv: str, hand_over: Sequence[int] = (), **options: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` in a session (and process group) of its own. Cancelled while
    asyncio still sets the process up, asyncio would SIGKILL the leader alone and leave what it had
    started meanwhile; here the start finishes out of sight and then the whole group is stopped.
    ``hand_over``: descriptors to pass down (``pass_fds``), closed here once the start is done, cancelled or not."""

    async def start() -> asyncio.subprocess.Process:
        try:
            return await asyncio.create_subprocess_exec(*argv, start_new_session=True, pass_fds=hand_over, **options)
        finally:
            close_all(hand_over)

    starting = asyncio.ensure_future(start())
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        stopping = asyncio.ensure_future(_stop_started(starting))
        _finishing.add(stopping)
        stopping.add_done_callback(_finishing.discard)
        raise


async def _stop_started(starting: asyncio.Future[asyncio.subprocess.Process]) -> None:
    try:
        proc = await starting
    except Exception:  # noqa: BLE001 - it never started: nothing to stop
        return
    kill_group(proc.pid)
    await proc.wait()


def close_all(fds: Iterable[int]) -> None:
    """Close descriptors that were passed down to a process (``pass_fds``), once it started or could not."""
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def kill_group(pgid: int) -> None:
    """SIGKILL the process group ``pgid`` (a process started in a session of its own, and what it started)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count, where psutil can tell)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not sys.platform.startswith("linux"):
        return True
    import psutil

    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() not in _STATES:
                return True
        except (psutil.Error, OSError):
            continue
    return False


def wait_group_gone(pgid: int, limit: float) -> None:
    """Until no process of the killed group ``pgid`` runs (one may finish the write it is in), at most ``limit``
    seconds. Blocking: for a thread; ``stop_group`` is the event loop's."""
    deadline = time.monotonic() + limit
    while group_alive(pgid) and time.monotonic() < deadline:  # a group's end sends nothing: polled
        time.sleep(0.02)


async def stop_group(pgid: int, grace: float = KILL_GRACE) -> None:
    """SIGTERM the process group, wait up to ``grace`` seconds, then SIGKILL what is left."""
    if not _signal_group(pgid, signal.SIGTERM):
        return
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while loop.time() < deadline and group_alive(pgid):  # noqa: ASYNC110 - a group's end sends nothing: polled
            await asyncio.sleep(0.05)
    finally:  # also when cancelled while waiting
        if group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
