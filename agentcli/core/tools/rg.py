"""Running ripgrep for the search tools: finding the binary, reading its output off the event loop within
a time and a size budget, stopping it, and putting its lines in a stable order.

rg runs with the workspace root (or a descriptor of the searched folder) as its working directory and
the scrubbed environment every child gets; what it prints is read in a thread, so a huge output or a
slow disk never holds the event loop.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import selectors
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ToolError
from ..system.secret_env import command_env
from .caps import OUTPUT_CAP

T = TypeVar("T")

GREP_MAX_LINES = 250  # lines of grep output shown
GREP_CHAR_BUDGET = OUTPUT_CAP - 2_000  # characters of grep output shown (room for the footer)
_FD_DIR = "/proc/self/fd/"  # in rg, as in this process: the descriptors it is handed (Linux)


# Reading rg's output: rg on many threads writes each file's lines on their own.
_PIPE_BYTES = 1024 * 1024  # rg's stdout pipe, where the system allows (Linux: pipe-max-size)
_SET_PIPE_SIZE = getattr(fcntl, "F_SETPIPE_SZ", 0)
_SMALL_READ = 16 * 1024  # bytes; a read this small is one of many...
_SMALL_READS_FREE = 8  # ...once there were this many,
_GATHER_SECONDS = 0.001  # ...wait this long after each, for the next to gather
_COUNT_LIMIT_BYTES = 256 * 1024 * 1024  # stop reading (and just say "more than") past this much output


# Options every rg call shares: ignore user config, respect .gitignore even without git,
# search hidden files but never the .git directory.
COMMON_RG_ARGS = ("--no-config", "--no-require-git", "--hidden", "--glob", "!.git")


_found_rg: dict[str | None, str] = {}  # PATH -> where rg was found with it


def rg_path() -> str | None:
    """Where the ripgrep binary is: on PATH, else next to the running Python (the PyPI package). Remembered
    for each PATH (searching it cost about 70 µs a call, 0.5% of a glob); forgotten when it fails to start."""
    search_path = os.environ.get("PATH")
    known = _found_rg.get(search_path)
    if known is not None:
        return known
    found = shutil.which("rg")
    if not found:
        bindir = Path(sys.executable).parent
        found = next(
            (
                str(candidate)
                for candidate in (bindir / "rg", bindir / "rg.exe")
                if candidate.is_file() and os.access(candidate, os.X_OK)
            ),
            None,
        )
    if found:
        _found_rg[search_path] = found
    return found


def _require_rg() -> str:
    found = rg_path()
    if not found:
        raise ToolError("ripgrep (rg) is not installed; install the 'ripgrep' Python package or put rg on PATH.")
    return found


@dataclass
class _RgResult:
    lines: list[str]  # the lines kept
    total: int  # lines rg printed (at least; see more_than)
    returncode: int
    stderr: str
    more_than: bool = False  # output was so large that counting stopped
    budget_hit: bool = False
    timed_out: float = 0.0  # the timeout, when rg was stopped by it


class _Stopper:
    """Stops the rg a worker thread runs, from the event loop, before or after it starts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self.cancelled = False

    def started(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._proc = proc
            cancelled = self.cancelled
        if cancelled:
            _stop(proc)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            proc = self._proc
        if proc is not None:
            _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill rg; it may already have exited on its own, which is just as good."""
    from ..system import processes  # only when a search is cancelled: the front ends' file lists do without it

    processes.kill(proc)


async def _off_loop(work: Callable[[_Stopper], T]) -> T:
    """Run ``work`` in a thread of its own: rg's start, its output and the stats never wait on the event
    loop (nor the loop on them), and a hung rg holds no thread of the shared pool. Cancelled: rg is killed."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    stopper = _Stopper()

    def settle(result: Any, error: BaseException | None) -> None:
        if not future.done() and not stopper.cancelled:  # cancelled: nobody waits for it
            future.set_exception(error) if error is not None else future.set_result(result)

    def run() -> None:
        try:
            result, error = work(stopper), None
        except BaseException as exc:  # handed to the awaiting task
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop is gone; nobody waits
            pass

    threading.Thread(target=run, name="rg", daemon=True).start()
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stopper.cancel()
        raise


def _rg(
    args: list[str], cwd: Path, timeout: float, feed: Callable[[bytes], bool], stopper: _Stopper
) -> tuple[int, str, float]:
    """Run rg (in a worker thread), handing each piece of its output to ``feed``, which returns False
    to stop it. Past ``timeout`` seconds rg is stopped. Returns rg's exit status and the start of its
    stderr (0 and nothing when stopped by the timeout or a cancel), and the timeout when it struck."""
    opened = tuple(int(item[len(_FD_DIR) :]) for item in (str(cwd), *args) if item.startswith(_FD_DIR))
    try:
        proc = subprocess.Popen(
            [_require_rg(), *args],
            cwd=str(cwd),
            env=command_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=opened,
        )
    except OSError as exc:
        _found_rg.clear()  # gone or replaced since it was found: look again next time
        raise ToolError(f"Could not run ripgrep: {exc.strerror or exc}.") from None
    stopper.started(proc)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    if _SET_PIPE_SIZE:
        try:  # room for rg to write on while this thread waits (see _GATHER_SECONDS) or the machine is busy
            fcntl.fcntl(out, _SET_PIPE_SIZE, _PIPE_BYTES)
        except OSError:
            pass
    stderr = bytearray()
    timed_out = 0.0
    stopped = False
    small_reads = 0
    deadline = time.monotonic() + timeout
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            selector.register(err, selectors.EVENT_READ)
            while selector.get_map() and not stopped:
                left = deadline - time.monotonic()
                ready = selector.select(left) if left > 0 else []
                if not ready:
                    timed_out = timeout
                    break
                for key, _ in ready:
                    chunk = os.read(key.fd, _PIPE_BYTES)
                    if not chunk:
                        selector.unregister(key.fd)
                    elif key.fd == err:
                        stderr += chunk[: max(64 * 1024 - len(stderr), 0)]
                    elif not feed(chunk):
                        stopped = True
                        break
                    elif len(chunk) < _SMALL_READ:
                        # One file's lines, often a few hundred bytes: once they keep coming, a moment's
                        # wait lets them gather, one wake-up instead of dozens (a search printing a line
                        # or two never waits).
                        small_reads += 1
                        if small_reads > _SMALL_READS_FREE:
                            time.sleep(_GATHER_SECONDS)
    finally:
        if proc.poll() is None:
            _stop(proc)
        returncode = proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    if timed_out or stopper.cancelled:
        return 0, "", timed_out
    return returncode, stderr.decode("utf-8", errors="replace"), 0.0  # stopped by feed: killed, as it asked


def _run_rg_sync(
    args: list[str], cwd: Path, keep_lines: int | None, char_budget: int | None, timeout: float, stopper: _Stopper
) -> _RgResult:
    """Run rg; keep the first ``keep_lines`` lines (within ``char_budget`` characters), count the rest.
    Past ``timeout`` seconds rg is stopped, and what it printed so far is the result."""
    kept: list[str] = []
    used = 0
    total = 0
    read_bytes = 0
    more_than = False
    budget_hit = False
    counting = False  # enough lines kept: from now on only count them
    pending = b""

    def full() -> bool:
        return budget_hit or (keep_lines is not None and len(kept) >= keep_lines)

    def feed(chunk: bytes) -> bool:
        nonlocal used, total, read_bytes, more_than, budget_hit, counting, pending
        read_bytes += len(chunk)
        if counting:
            total += chunk.count(b"\n")
            if read_bytes > _COUNT_LIMIT_BYTES:
                more_than = True
                return False
            return True
        parts = (pending + chunk).split(b"\n")
        pending = parts.pop()
        for raw in parts:
            total += 1
            if full():
                continue
            line = raw.decode("utf-8", errors="replace")
            if char_budget is not None and kept and used + len(line) + 1 > char_budget:
                budget_hit = True
                continue
            kept.append(line)
            used += len(line) + 1
        counting = full()
        return True

    returncode, stderr, timed_out = _rg(args, cwd, timeout, feed, stopper)
    if pending and not counting and not timed_out and not more_than:  # a line cut off by the timeout is left out
        total += 1
        if not full():
            kept.append(pending.decode("utf-8", errors="replace"))
    return _RgResult(kept, total, returncode, stderr, more_than, budget_hit, timed_out)


async def _run_rg(
    args: list[str],
    cwd: Path,
    keep_lines: int | None,
    char_budget: int | None,
    timeout: float,  # noqa: ASYNC109 - rg's own limit: what it found in time is kept
) -> _RgResult:
    return await _off_loop(lambda stopper: _run_rg_sync(args, cwd, keep_lines, char_budget, timeout, stopper))


def _path_key(path: bytes) -> bytes:
    """rg --sort path's order, name by name down the tree ('a/b' before 'a-c'): a NUL, which no
    name holds, sorts below every byte, so comparing the keys compares the names in turn."""
    return path.replace(b"/", b"\0")


def _sorted_content(data: bytes, context: bool) -> tuple[list[bytes], int] | None:
    """The per-file blocks of ``rg --heading --null`` output (``path NUL line`` first, then the
    file's other lines, an empty line between files) in path order, as ``--no-heading`` prints
    them: (lines, at least as many as a caller keeps; all lines). None when the output is not
    what rg prints for sane names (one holding a newline). Per file, not per line, work in Python."""
    if not data:
        return [], 0
    if not data.endswith(b"\n"):
        return None
    blocks = data[:-1].split(b"\n\n")  # rg never prints an empty line of its own
    if data.count(b"\0") != len(blocks):
        return None
    try:
        paths = [block[: block.index(b"\0")] for block in blocks]
    except ValueError:
        return None
    names = b"\n".join(paths)
    if names.count(b"\n") != len(paths) - 1:
        return None
    keys = _path_key(names).split(b"\n")
    between = len(blocks) - 1
    total = data.count(b"\n") - between + (between if context else 0)  # no-heading: '--' between files, or nothing
    lines: list[bytes] = []
    for i in sorted(range(len(blocks)), key=keys.__getitem__):
        if len(lines) >= GREP_MAX_LINES:
            break
        if context and lines:
            lines.append(b"--")
        path = paths[i]
        for raw in blocks[i][len(path) + 1 :].split(b"\n", GREP_MAX_LINES)[:GREP_MAX_LINES]:
            digits = len(raw) - len(raw.lstrip(b"0123456789"))
            if digits and raw[digits : digits + 1] in (b":", b"-"):
                lines.append(path + raw[digits : digits + 1] + raw)  # path:line:text, or path-line-text
            elif raw == b"--" or raw.startswith(path + b": "):  # a group separator; rg's note on a binary file
                lines.append(raw)
            else:
                return None
    return lines, total


def _sorted_records(data: bytes, mode: str) -> tuple[list[bytes], int]:
    """``rg --null`` output of --files-with-matches (path NUL) or --count (path NUL count newline),
    in path order, as the lines rg prints without --null."""
    if mode == "files_with_matches":
        paths = data.split(b"\0")[:-1]
        paths.sort(key=_path_key)
        lines = b"\n".join(paths).split(b"\n") if paths else []  # a name with a newline prints as two lines
        return lines, len(lines)
    records: list[tuple[bytes, bytes]] = []
    start = 0
    while (zero := data.find(b"\0", start)) >= 0 and (end := data.find(b"\n", zero)) >= 0:
        path = data[start:zero]
        records.append((_path_key(path), path + b":" + data[zero + 1 : end]))
        start = end + 1
    records.sort()
    lines = b"\n".join(line for _, line in records).split(b"\n") if records else []
    return lines, len(lines)


def _keep(lines: list[bytes], keep_lines: int, char_budget: int) -> tuple[list[str], bool]:
    """The first lines within ``keep_lines`` and ``char_budget`` characters, as _run_rg keeps them."""
    kept: list[str] = []
    used = 0
    for raw in lines[:keep_lines]:
        line = raw.decode("utf-8", errors="replace")
        if kept and used + len(line) + 1 > char_budget:
            return kept, True
        kept.append(line)
        used += len(line) + 1
    return kept, False


_SORT_LIMIT = 32 * 1024 * 1024  # past this much output grep searches again, rg sorting (single-threaded)


def _grep_sorted(
    rg_args: list[str], mode: str, context: bool, cwd: Path, timeout: float, stopper: _Stopper
) -> _RgResult:
    """What ``rg --sort path`` prints, kept and counted as _run_rg does, from rg searching on all its
    threads (--sort makes it search on one): each file's lines stay together, and Python sorts the files."""
    started = time.monotonic()
    chunks: list[bytes] = []
    size = 0

    def feed(chunk: bytes) -> bool:
        nonlocal size
        chunks.append(chunk)
        size += len(chunk)
        return size <= _SORT_LIMIT

    extra = ["--heading", "--null"] if mode == "content" else ["--null"]
    returncode, stderr, timed_out = _rg([*extra, *rg_args], cwd, timeout, feed, stopper)
    output = b"".join(chunks)
    if timed_out:  # a line (or record) cut off by the timeout is left out
        output = output[: output.rfind(b"\0" if mode == "files_with_matches" else b"\n") + 1]
        if mode == "content" and output.endswith(b"\n\n"):
            output = output[:-1]
    if stopper.cancelled:  # nobody waits for the result
        return _RgResult([], 0, 0, "")
    parsed = None
    if size <= _SORT_LIMIT:
        parsed = _sorted_content(output, context) if mode == "content" else _sorted_records(output, mode)
    if parsed is None:
        left = max(timeout - (time.monotonic() - started), 0.001)
        return _run_rg_sync(
            ["--no-heading", "--sort", "path", *rg_args], cwd, GREP_MAX_LINES, GREP_CHAR_BUDGET, left, stopper
        )
    lines, total = parsed
    kept, budget_hit = _keep(lines, GREP_MAX_LINES, GREP_CHAR_BUDGET)
    return _RgResult(kept, total, returncode, stderr, False, budget_hit, timed_out)
