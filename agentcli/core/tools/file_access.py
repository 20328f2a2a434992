"""What the file tools share: paths confined to the workspace, files opened through descriptors.

Files are opened through descriptors, one folder at a time from the workspace root and
following no symlink, so a link swapped in after resolve_path cannot lead outside.
Changing an existing file needs this agent to have read it (or written it) in its
current state; the workspace's FileLedger records that and serializes the writes
(``_check_seen``, ``_serialized``). Text is decoded and encoded back byte for byte.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import errno
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ToolError
from ..system.workspace import OutsideWorkspace
from .base import ToolContext

MAX_LINE_CHARS = 2000  # longer lines are cut with a marker
BINARY_SNIFF = 8192  # a NUL byte in this many leading bytes marks a file as binary

T = TypeVar("T")

UTF8_BOM = b"\xef\xbb\xbf"
PATH_MAX_BYTES = 4095  # Linux PATH_MAX less the final NUL
NAME_MAX_BYTES = 255  # one file or directory name


def resolve_path(ctx: ToolContext, path: str) -> Path:
    """The real path of a tool's ``path`` argument, confined to the workspace."""
    if not path.strip():
        raise ToolError("The path is empty; give a file path relative to the workspace root.")
    absolute = os.fsencode(ctx.workspace.lexical(path))
    if len(absolute) > PATH_MAX_BYTES or any(len(name) > NAME_MAX_BYTES for name in absolute.split(b"/")):
        raise _too_long(path)
    try:
        return ctx.workspace.resolve(path)
    except OutsideWorkspace as exc:
        if ctx.permissions is not None and ctx.permissions.permits_outside(ctx, exc.resolved):
            return exc.resolved  # this very call was approved (or runs in bypassPermissions)
        raise ToolError(str(exc)) from None
    except (OSError, RuntimeError) as exc:  # symlink loops and the like
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            raise _too_long(path) from None
        raise ToolError(f"Cannot resolve {path}: {_reason(exc)}.") from None


def _too_long(path: str) -> ToolError:
    shown = path if len(path) <= 80 else f"{path[:60]}…{path[-15:]}"
    return ToolError(
        f"The path is too long: {shown} ({len(path):,} characters); a path may have at most "
        f"{PATH_MAX_BYTES:,} bytes and each name in it at most {NAME_MAX_BYTES}."
    )


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


def _os_error(exc: OSError, action: str, shown: str) -> ToolError:
    """One sentence for an OSError raised while doing ``action`` ("read", "write"...) on ``shown``."""
    if isinstance(exc, FileNotFoundError):
        return ToolError(f"File not found: {shown}.")
    if isinstance(exc, PermissionError):
        return ToolError(f"Permission denied: cannot {action} {shown}.")
    if isinstance(exc, IsADirectoryError):
        return ToolError(f"{shown} is a directory, not a file; use glob to list its files.")
    if isinstance(exc, NotADirectoryError):
        return ToolError(f"Cannot {action} {shown}: a component of the path is a file, not a directory.")
    if isinstance(exc, _SymlinkRace):
        return ToolError(
            f"{shown} changed while it was being opened (a symbolic link was swapped into its "
            "path), so it was left alone; check the path and try again."
        )
    if exc.errno == errno.ENAMETOOLONG:
        return ToolError(f"Cannot {action} {shown}: the path is too long.")
    if exc.errno == errno.ENOSPC:
        return ToolError(f"Cannot {action} {shown}: no space left on the device.")
    if exc.errno == errno.EROFS:
        return ToolError(f"Cannot {action} {shown}: the file system is read-only.")
    return ToolError(f"Cannot {action} {shown}: {_reason(exc)}.")


def _not_found(ctx: ToolContext, real: Path, shown: str, hint: str = "") -> ToolError:
    """A "file not found" error, naming similar files in the nearest existing directory."""
    parent = real.parent
    while not parent.is_dir() and ctx.workspace.contains(parent.parent) and parent != parent.parent:
        parent = parent.parent
    suggestion = ""
    try:
        if parent.is_dir() and ctx.workspace.contains(parent):
            names = [entry.name for _, entry in zip(range(5000), os.scandir(parent), strict=False)]
            close = difflib.get_close_matches(real.name, names, n=3, cutoff=0.6)
            if close:
                shown_close = ", ".join(ctx.workspace.relative(parent / name) for name in close)
                suggestion = f" Did you mean {shown_close}?"
    except OSError:
        pass
    return ToolError(f"File not found: {shown}.{suggestion}{hint}")


class _SymlinkRace(OSError):
    """A path component turned into a symbolic link after the path was resolved."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_step(name: str, dir_fd: int, flags: int) -> int:
    """Open ``name`` in ``dir_fd`` without following a symlink; a symlink found there is a race."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, dir_fd):
            raise _SymlinkRace(errno.ELOOP, "a symbolic link was swapped into the path") from None
        raise


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_dir(ctx: ToolContext, directory: Path, create: bool = False) -> int:
    """A descriptor of ``directory``, reached one component at a time from the workspace root.

    ``directory`` is already resolved, so no component may be a symlink; following none means a
    link swapped in after resolve_path cannot lead the open (or a temporary file) outside.
    """
    anchor = ctx.workspace.base_of(directory) or Path(directory.anchor)  # the root, an --add-dir, or approved
    return open_dir_from(anchor, directory, create)


def open_dir_from(anchor: Path, directory: Path, create: bool = False) -> int:
    """A descriptor of ``directory`` (resolved, at or below ``anchor``), reached one component at a
    time from ``anchor`` following no symlink: what _open_dir does from the workspace root."""
    fd = os.open(anchor, _DIR_FLAGS)
    try:
        for part in directory.relative_to(anchor).parts:
            try:
                step = _open_step(part, fd, _DIR_FLAGS)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                step = _open_step(part, fd, _DIR_FLAGS)
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_regular(dir_fd: int, name: str, shown: str) -> tuple[int, os.stat_result]:
    """Open a regular file for reading, refusing FIFOs, sockets and devices (which could block)."""
    fd = _open_step(name, dir_fd, os.O_RDONLY | os.O_NONBLOCK)
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode):
        return fd, info
    os.close(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory")
    raise ToolError(f"{shown} is not a regular file (it is a device, pipe or socket), so it cannot be read.")


class Unreadable(ValueError):
    """A file ``read_confined`` leaves alone; the message says why ("it leads outside the workspace …")."""


def open_file(ctx: ToolContext, real: Path, shown: str) -> tuple[int, os.stat_result]:
    """Open the regular file ``real`` of the workspace for reading, its folders one at a time from the
    root following no symlink (``_open_dir``), so a link swapped in after the check leads nowhere."""
    dir_fd = _open_dir(ctx, real.parent)
    try:
        return _open_regular(dir_fd, real.name, shown)
    finally:
        os.close(dir_fd)


def read_confined(path: Path, bases: tuple[Path, ...], cap: int, where: str = "the workspace") -> tuple[bytes, int]:
    """At most ``cap`` bytes of the file ``path``, and its size, read as read_file reads: the path
    resolved and confined to ``bases`` (resolved folders; ``where`` names them), opened one folder
    at a time following no symlink, and only if it is a regular file (a FIFO or a device could block
    or never end). For files agentcli reads on its own: memory, command and agent files.

    Raises FileNotFoundError when there is none, Unreadable when it is refused, OSError otherwise.
    """
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        raise
    except (OSError, RuntimeError) as exc:  # a symlink loop, a component that is a file
        raise Unreadable(f"it cannot be resolved ({_reason(exc)})") from None
    anchor = next((base for base in bases if real == base or base in real.parents), None)
    if anchor is None:
        raise Unreadable(f"it leads outside {where} (to {real})")
    try:
        dir_fd = open_dir_from(anchor, real.parent)
        try:
            fd, info = _open_regular(dir_fd, real.name, str(path))
        finally:
            os.close(dir_fd)
    except ToolError:
        raise Unreadable("it is not a regular file (it is a device, pipe or socket)") from None
    except IsADirectoryError:
        raise Unreadable("it is a directory") from None
    except _SymlinkRace:
        raise Unreadable("it changed while it was being opened (a symbolic link was swapped into its path)") from None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(cap), info.st_size


async def _serialized(ctx: ToolContext, real: Path, change: Callable[..., T], *args: Any) -> T:
    """Run ``change`` in a thread while holding ``real``'s lock, which every agent of the session shares.

    A cancelled call keeps the lock until its thread has finished, so no other write overlaps it.
    """
    async with ctx.workspace.files.lock(real):
        work = asyncio.ensure_future(asyncio.to_thread(change, *args))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            await asyncio.wait([work])
            raise


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _check_seen(ctx: ToolContext, real: Path, shown: str, data: bytes) -> None:
    """Refuse to change a file this agent has not read, or that changed since it last read it."""
    seen = ctx.workspace.files.seen(ctx.agent_id, real)
    if seen is None:
        raise ToolError(f"You have not read {shown} yet; read it with read_file before changing it.")
    if seen != _digest(data):
        raise ToolError(
            f"{shown} changed since you read it (another agent, a command or the user wrote to it); "
            "read it again, then redo your change."
        )


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Text and codec name: UTF-8 with BOM ("utf-8-sig"), UTF-8, or latin-1 as a last resort."""
    if data.startswith(UTF8_BOM):
        try:
            return data.decode("utf-8-sig"), "utf-8-sig"
        except UnicodeDecodeError:
            return data[len(UTF8_BOM) :].decode("latin-1"), "bom+latin-1"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def encode_text(text: str, codec: str) -> bytes:
    if codec == "bom+latin-1":
        return UTF8_BOM + text.encode("latin-1")
    return text.encode(codec)


def is_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF]


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
