"""Clones of a stranger's repository (a plugin, a marketplace): git, hardened as every command (``git.py``), and
watched. A clone may write at most a cap (objects and work tree), takes at most CLONE_TIMEOUT, and stops when the
work that asked for it is cancelled (``stoppable``) or agentcli ends; then git's whole process group is killed and
the clone removed. git has no client-side limit of its own (``receive.maxInputSize`` covers pushes only)."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import os
import re
import resource
import shutil
import signal
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import ToolError
from . import processes
from .git import Repository, _first_error, _run, find_repository, run_git, start_git


def _watched_child(size: int) -> Callable[[], None]:
    """A ``preexec_fn`` for a watched git (``_watched``). Each file it writes, and what it starts writes, is limited to
    ``size`` bytes (RLIMIT_FSIZE): a write past it fails with EFBIG ("File too large"), and git says so, where
    SIGXFSZ would kill the writer with a message that does not say why. And git gets SIGKILL when agentcli dies,
    even by SIGKILL (``processes.die_with_parent``; started from the thread that then waits for it): the watcher
    dies with agentcli, and git would write on with no cap and no time limit."""
    die = processes.die_with_parent()

    def in_child() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size if hard == resource.RLIM_INFINITY else min(size, hard), hard))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        if die is not None:
            die()

    return in_child


# What a marketplace or a plugin may be cloned over (never ext:: or fd::, which run commands).
CLONE_TRANSPORTS = ("file", "https", "ssh", "git", "http")
CLONE_TIMEOUT = 600.0
WATCH_EVERY = 0.1  # seconds between two measures of a clone that git is writing
BLOCK = 4096  # the least an entry counts: an empty file still takes an inode and a directory entry
KILL_WAIT = 30.0  # seconds a killed git's processes get to end the write each is in
STOPPED = 130  # the exit status of a watched git that was stopped because its work was cancelled
TIMED_OUT = 124  # the exit status of a watched git stopped after CLONE_TIMEOUT
FULL_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a whole commit id (SHA-1, SHA-256), which a fetch can name


T = TypeVar("T")

_stop: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("git_stop", default=None)
_watching: dict[int, Path] = {}  # process group -> folder, of each watched git running now (for the exit hook)


async def stoppable(call: Callable[..., T], *args: object, undo: Callable[[T], None] | None = None) -> T:
    """``call(*args)`` in a thread, as ``asyncio.to_thread``, for work that clones. Cancelled (ctrl+c, esc, the app
    quitting), the watched git it runs (``_watched``) is stopped and its folder removed, and the thread is waited
    for, before the cancellation goes on; a result that came all the same is undone (``undo``)."""
    stop = threading.Event()

    def run() -> T:
        _stop.set(stop)  # the thread's own copy of the context (to_thread's)
        return call(*args)

    work = asyncio.ensure_future(asyncio.to_thread(run))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        stop.set()
        while not work.done():  # a second cancel (ctrl+c again, esc then quit) waits too: the undo must come
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.shield(work)
        # A result that came all the same is undone; a failure ("git clone was stopped") is the cancel's to say.
        if undo is not None and not work.cancelled() and work.exception() is None:
            undo(work.result())
        raise


def _stop_watched() -> None:
    """At exit: kill each watched git still running and remove its folder. ``leaving.leave`` ends the process
    without waiting for threads, and the watchers end with it: git would write on with no cap and no time limit."""
    for pgid, folder in list(_watching.items()):
        processes.kill_group(pgid)
        processes.wait_group_gone(pgid, 2.0)
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(_stop_watched)


class OverCap(ToolError):
    """A clone, or the checkout of one, wrote more than it may: git was stopped and the clone removed."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"it wrote more than {max_bytes} bytes")
        self.max_bytes = max_bytes


def clone(
    source: str, dest: Path, max_bytes: int, *, shallow: bool = False, branch: str = "", checkout: bool = True
) -> str:
    """Clone ``source`` (a URL or a path) into ``dest``, hardened as every command here (no hooks, no
    submodules, no template, only CLONE_TRANSPORTS): "" when done, else git's first error line. Blocking.

    ``dest`` may hold at most ``max_bytes`` (objects and work tree): past it git is stopped, ``dest`` removed and
    OverCap raised. ``shallow``: the newest commit only (a server that cannot, dumb HTTP, is cloned whole);
    ``branch``: that branch or tag; ``checkout``: False leaves the work tree empty (``check_out`` fills it)."""
    options = [*(["--depth=1"] if shallow else []), *([f"--branch={branch}"] if branch else [])]
    options += [] if checkout else ["--no-checkout"]
    for depth in [True, False] if shallow else [False]:
        arguments = options if depth else [o for o in options if o != "--depth=1"]
        code, err = _watched(
            dest.parent,
            None,
            dest,
            max_bytes,
            "clone",
            "--quiet",
            "--no-recurse-submodules",
            "--template=",
            *arguments,
            "--",
            source,
            str(dest),
            transports=CLONE_TRANSPORTS,
        )
        if code == 0 or "shallow" not in err:
            break
    return "" if code == 0 else _first_error(err) or f"git clone exited with {code}"


def _watched(
    cwd: Path,
    repo: Repository | None,
    folder: Path,
    max_bytes: int,
    *args: str,
    timeout: float = CLONE_TIMEOUT,
    transports: tuple[str, ...] = (),
) -> tuple[int, str]:
    """Run git in a process group of its own, no file it writes bigger than ``max_bytes``, while a thread measures
    ``folder``: past ``max_bytes``, past ``timeout``, when the folder cannot be measured or when the work is
    cancelled (``stoppable``), the whole group is killed (git's index-pack and upload-pack too, which would write
    on). Over the cap, not measurable (a stranger's clone is taken to be too big when its size is not known) or
    cancelled, ``folder`` is removed. (exit status, stderr)."""
    stop = _stop.get()
    started = start_git(
        cwd, repo, *args, timeout=timeout, transports=transports, own_group=True, in_child=_watched_child(max_bytes)
    )
    process = started.process
    if process is None:
        return started.failed[0], started.failed[2]
    processes.direct.add(process.pid)  # waited for here: not an orphan for a bash call's end to stop
    _watching[process.pid] = folder
    done = threading.Event()
    stopped: list[str] = []  # why the watcher stopped git: "over", "timeout", "stopped" or why the size is not known

    def watch() -> None:
        deadline = time.monotonic() + timeout
        pause = WATCH_EVERY
        while not done.wait(pause):
            began = time.monotonic()
            why = "stopped" if stop is not None and stop.is_set() else ""
            why = why or ("timeout" if began > deadline else _over(folder, max_bytes))
            if why:
                stopped.append(why)
                processes.kill_group(process.pid)
                return
            pause = max(WATCH_EVERY, 3 * (time.monotonic() - began))  # a big folder: measured less often

    watcher = threading.Thread(target=watch, name="clone-watcher", daemon=True)
    watcher.start()
    try:
        _, output = process.communicate()
    finally:
        done.set()
        watcher.join()
        if process.returncode != 0 or stopped:
            processes.kill_group(process.pid)
            processes.wait_group_gone(process.pid, KILL_WAIT)  # nothing writes into the folder once removed
        processes.direct.discard(process.pid)
        _watching.pop(process.pid, None)
    err = output.decode("utf-8", errors="replace")
    # A file that hit the limit means a folder past the cap, which git may have removed already; else the last writes
    why = stopped[0] if stopped else "over" if "File too large" in err else _over(folder, max_bytes)
    if why == "timeout":
        return TIMED_OUT, f"fatal: git {started.subcommand} took longer than {timeout:g} seconds"
    if why:
        shutil.rmtree(folder, ignore_errors=True)
        if why == "stopped":
            return STOPPED, f"fatal: git {started.subcommand} was stopped"
        if why == "over":
            raise OverCap(max_bytes)
        return 1, f"fatal: the size of {folder} could not be measured ({why}), so git was stopped"
    return process.returncode, err


def _over(folder: Path, max_bytes: int) -> str:
    """Whether ``folder`` holds more than ``max_bytes``: "over", "" when not, else why it cannot be measured."""
    try:
        return "over" if disk_use(folder) > max_bytes else ""
    except OSError as exc:
        return f"{exc.strerror or exc}: {exc.filename}"


def disk_use(folder: Path) -> int:
    """What ``folder`` takes on disk: each entry's size or blocks, whichever is more, and at least BLOCK; links are
    not followed. An entry git renamed or removed while it was read counts as nothing; 0 when ``folder`` is not
    there (yet). Raises OSError when a folder cannot be read."""
    total, folders = 0, [str(folder)]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    total += max(info.st_size, info.st_blocks * 512, BLOCK)
                    if stat.S_ISDIR(info.st_mode):
                        folders.append(entry.path)
        except FileNotFoundError:
            continue
    return total


def clone_at(source: str, dest: Path, commit: str, max_bytes: int) -> str:
    """``source`` at ``commit`` (a commit id, maybe abbreviated) in ``dest``, checked out: "" when done, else git's
    first error line. A full id is fetched alone, without the history before it (git's protocol v2 serves any
    commit the server has); a server that cannot (dumb HTTP, or the old protocol), or an abbreviated id, is cloned
    whole and checked out at it. At most ``max_bytes``, as in ``clone``."""
    if FULL_ID.fullmatch(commit):
        code, error = _fetch_one(source, dest, commit, max_bytes)
        if code == 0:
            return check_out(dest, commit, max_bytes=max_bytes)
        if code in (STOPPED, TIMED_OUT):  # stopped, or a server that stalls: it would stall a whole clone too
            return error
        shutil.rmtree(dest, ignore_errors=True)
    return clone(source, dest, max_bytes, checkout=False) or check_out(dest, commit, max_bytes=max_bytes)


def _fetch_one(source: str, dest: Path, commit: str, max_bytes: int) -> tuple[int, str]:
    """The commit ``commit`` of ``source`` alone, fetched into a new repository ``dest``: (exit status, why not)."""
    dest.mkdir()
    code, _, err = _run(dest, None, "init", "--quiet", "--template=", ".")
    repo = find_repository(dest) if code == 0 else None
    if repo is None or repo.work_tree != dest.resolve():
        return code or 1, _first_error(err)
    code, err = _watched(
        dest,
        repo,
        dest,
        max_bytes,
        "fetch",
        "--quiet",
        "--depth=1",
        "--no-tags",
        "--",
        source,
        commit,
        transports=CLONE_TRANSPORTS,
    )
    return code, "" if code == 0 else _first_error(err) or f"git fetch exited with {code}"


def check_out(folder: Path, *revisions: str, max_bytes: int) -> str:
    """Put a fresh clone at the first of ``revisions`` (a commit id or a full ref name) that names a commit:
    "" when done, else why not. The names are a stranger's: each is checked as a commit first, never an option.
    The clone may then hold at most ``max_bytes``, as in ``clone`` (OverCap, the clone removed)."""
    repo = find_repository(folder)
    if repo is None:
        return f"{folder} is not a git repository"
    for revision in revisions:
        code, out, _ = run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
        if code == 0 and out.strip():
            code, err = _watched(folder, repo, folder, max_bytes, "checkout", "--quiet", "--detach", out.strip())
            return "" if code == 0 else _first_error(err) or f"git checkout exited with {code}"
    return f"no commit is named {' or '.join(revisions)}"
