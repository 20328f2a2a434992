"""Full copies of long tool output, kept in the session folder within two caps: the one store.

Two ways in: bash streams its output into a ``CappedCopy`` as it comes (it may never end), and the
registry hands any other tool's finished output that is too long for the model to ``keep_in_full``.

Each copy stops growing at ``output_copy_max_mb`` (default 64 MB), and all copies of a session
together at ``output_session_max_mb`` (default 512 MB), so a command printing without end
(``yes``) cannot fill the disk. The note the model sees says when a copy was cut, and why.
Both caps are settings, read from ``ToolContext.settings``.

The copies live in the session's folder, outside the workspace, where a read would ask for approval
(and be refused in ``-p``). So ``read_file`` reads this session's own copies without asking
(``is_saved_output``, which ``permissions.py`` consults), and the note says how to page through one.
That allowance is exact: a file directly in this session's outputs folder, after symlinks are
followed, and no other path: not another session's outputs, not the session folder around it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import IO, Protocol

from ..tool_settings import ToolSettings


class CallPlace(Protocol):
    """What a copy needs of the call whose output it keeps (a ``ToolContext``: the tools sit above storage)."""

    @property
    def output_dir(self) -> Path | None: ...
    @property
    def settings(self) -> ToolSettings: ...
    @property
    def tool_use_id(self) -> str: ...


READ_PAGE = 2000  # lines read_file shows by default: a saved copy, too, is read a page at a time
_MB = 1024 * 1024

_used: dict[Path, int] = {}  # bytes written per session output folder
_lock = threading.Lock()  # keep_in_full writes from worker threads


def _folder_size(folder: Path) -> int:
    total = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            pass
    return total


def _mb(size: float) -> str:
    return f"{size:g} MB"


class CappedCopy:
    """A file that takes bytes until its cap or the session's; counts what it had to drop."""

    def __init__(self, ctx: CallPlace, name: str) -> None:
        assert ctx.output_dir is not None
        self.folder = Path(ctx.output_dir)
        self.path = self.folder / name
        self.copy_mb, self.session_mb = ctx.settings.output_copy_max_mb, ctx.settings.output_session_max_mb
        self.copy_cap, self.session_cap = int(self.copy_mb * _MB), int(self.session_mb * _MB)
        self.written = 0
        self.lines = 0  # line breaks written, for the note
        self.ends_line = True  # the last byte written was a line break (or nothing was written)
        self.dropped = 0
        self.full = ""  # "copy" or "session": which cap stopped it
        self.failed = ""  # why the file could not be written
        self.handle: IO[bytes] | None = None

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self.full or self.failed:
            self.dropped += len(data)
            return
        with _lock:
            used = _used.setdefault(self.folder, _folder_size(self.folder))
            room = min(self.copy_cap - self.written, self.session_cap - used)
            take = data[: max(room, 0)]
            if take:
                try:
                    if self.handle is None:
                        self.folder.mkdir(parents=True, exist_ok=True)
                        self.handle = open(self.path, "wb")
                    self.handle.write(take)
                except OSError as exc:
                    self.failed = exc.strerror or str(exc)
                    self.dropped += len(data)
                    self.close()
                    return
                self.written += len(take)
                self.lines += take.count(b"\n")
                self.ends_line = take.endswith(b"\n")
                _used[self.folder] = used + len(take)
            if len(take) < len(data):
                self.dropped += len(data) - len(take)
                self.full = "copy" if self.written >= self.copy_cap else "session"

    def flush(self) -> None:
        if self.handle is not None:
            try:
                self.handle.flush()
            except OSError:
                pass

    def close(self) -> None:
        if self.handle is not None:
            try:
                self.handle.close()
            except OSError:
                pass
            self.handle = None

    def note(self, total: int | None = None, unit: str = "bytes") -> str:
        """The line the model reads about this copy."""
        total = self.written + self.dropped if total is None else total
        if self.failed and not self.written:
            return f"[No full copy of the output was kept: {self.failed}]"
        if self.full == "session" and not self.written:
            return (
                f"[No full copy of the output was kept: this session's full-output copies reached their "
                f"{_mb(self.session_mb)} cap (setting output_session_max_mb)]"
            )
        lines = self.lines + (not self.ends_line)
        paging = (
            f"; read_file reads it without asking for approval: {lines:,} lines, {READ_PAGE} at a "
            "time, so pass offset and limit to page through it"
        )
        if self.full == "session":
            return (
                f"[Full output ({total:,} {unit}) saved to {self.path} only in part: its first "
                f"{self.written:,} bytes, before this session's full-output copies reached their "
                f"{_mb(self.session_mb)} cap (setting output_session_max_mb){paging}]"
            )
        if self.full == "copy":
            return (
                f"[Full output ({total:,} {unit}) saved to {self.path} only in part: its first "
                f"{self.written:,} bytes, the {_mb(self.copy_mb)} cap of one copy "
                f"(setting output_copy_max_mb); the rest was not kept{paging}]"
            )
        return f"[Full output ({total:,} {unit}) saved to {self.path}{paging}]"


def keep_in_full(output: str, ctx: CallPlace) -> str:
    """Save an output too long for the model; say where, above the output (the registry cuts it next)."""
    copy = CappedCopy(ctx, f"{ctx.tool_use_id or 'output'}.txt")
    try:
        copy.write(output.encode("utf-8", errors="replace"))
    finally:
        copy.close()
    return f"{copy.note(len(output), 'characters')}\n{output}"


def is_saved_output(ctx: CallPlace, real: Path) -> bool:
    """Whether ``real`` (a path with every symlink resolved) is one of this session's full-output copies:
    a file directly in ``ctx.output_dir``. The one path outside the workspace read_file reads unasked."""
    if ctx.output_dir is None:
        return False
    try:
        folder = Path(ctx.output_dir).resolve()
    except (OSError, RuntimeError):
        return False
    return real.parent == folder and real.is_file()


def session_output_used(folder: Path) -> int:
    """Bytes of full-output copies written to ``folder`` (for tests and reports)."""
    with _lock:
        return _used.get(Path(folder), 0)
