"""File tools: read_file, write_file and edit_file.

All three confine paths to the workspace, do their blocking work in a thread, and
turn every foreseeable failure into a ToolError the model can act on. Writes are
atomic (temporary file + rename) and keep an existing file's mode; edits keep
the file's line endings and encoding byte for byte outside the replaced text.

Files are opened through descriptors, one folder at a time from the workspace root and
following no symlink, so a link swapped in after resolve_path cannot lead outside.
Changing an existing file needs this agent to have read it (or written it) in its
current state; the workspace's FileLedger records that and serializes the writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .. import images
from ..storage.outputs import READ_PAGE
from ..system.files import replace_in
from ..system.workspace import OutsideWorkspace
from .caps import OUTPUT_CAP
from .base import Tool, ToolContext
from ..errors import ToolError
from .preview import file_diff

if TYPE_CHECKING:
    from .base import ToolOutcome

DEFAULT_LIMIT = READ_PAGE  # lines read_file shows by default (storage/outputs.py: saved copies are read so too)
MAX_EDITED_CHARS = 10_000_000  # the most a replace_all edit may grow a file to (1,000,000 matches × 4,000 is 4 GB)
MAX_LINE_CHARS = 2000  # longer lines are cut with a marker
BINARY_SNIFF = 8192  # a NUL byte in this many leading bytes marks a file as binary
# read_file stops adding lines past this many characters, so the registry's head/tail
# cut (OUTPUT_CAP) never lands in the middle of a file listing.
READ_CHAR_BUDGET = OUTPUT_CAP - 1_000
_LINE_READ_BYTES = MAX_LINE_CHARS * 4 + 4  # enough bytes for MAX_LINE_CHARS characters of UTF-8

T = TypeVar("T")

UTF8_BOM = b"\xef\xbb\xbf"
PATH_MAX_BYTES = 4095  # Linux PATH_MAX less the final NUL
NAME_MAX_BYTES = 255  # one file or directory name


# ---------------------------------------------------------------- shared helpers


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
    return ToolError(f"The path is too long: {shown} ({len(path):,} characters); a path may have at most "
                     f"{PATH_MAX_BYTES:,} bytes and each name in it at most {NAME_MAX_BYTES}.")


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
        return ToolError(f"{shown} changed while it was being opened (a symbolic link was swapped into its "
                         "path), so it was left alone; check the path and try again.")
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
            names = [entry.name for _, entry in zip(range(5000), os.scandir(parent))]
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


def read_confined(path: Path, bases: tuple[Path, ...], cap: int, where: str = "the workspace"
                  ) -> tuple[bytes, int]:
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
        raise ToolError(f"{shown} changed since you read it (another agent, a command or the user wrote to it); "
                        "read it again, then redo your change.")


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Text and codec name: UTF-8 with BOM ("utf-8-sig"), UTF-8, or latin-1 as a last resort."""
    if data.startswith(UTF8_BOM):
        try:
            return data.decode("utf-8-sig"), "utf-8-sig"
        except UnicodeDecodeError:
            return data[len(UTF8_BOM):].decode("latin-1"), "bom+latin-1"
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


# ---------------------------------------------------------------- read_file


@dataclass
class _Listing:
    lines: list[str]
    total: int  # lines in the file
    first: int  # number of the first line shown
    budget_hit: bool  # stopped early because of READ_CHAR_BUDGET


def _read_listing(handle: Any, offset: int, limit: int) -> _Listing | str:
    """Numbered lines ``offset``..``offset+limit-1`` of an open binary file; a note string for special cases.

    Streams the file, so huge files cost only the lines shown. Each line is decoded on
    its own (UTF-8, falling back to latin-1) and cut at MAX_LINE_CHARS characters.
    """
    head = handle.read(BINARY_SNIFF)
    if not head:
        return "empty"
    if is_binary(head):
        return "binary"
    handle.seek(0)
    shown: list[str] = []
    used = 0
    total = 0
    budget_hit = False
    last_wanted = offset + limit - 1
    while total < last_wanted and not budget_hit:
        raw = handle.readline(_LINE_READ_BYTES)
        if not raw:
            break
        extra = 0  # bytes of this line beyond what was read
        cut = not raw.endswith(b"\n")
        if cut:  # a very long line (or the last one): skip the rest of it
            while more := handle.readline(1 << 20):
                extra += len(more.rstrip(b"\r\n"))
                if more.endswith(b"\n"):
                    break
        total += 1
        if total < offset:
            continue
        if total == 1 and raw.startswith(UTF8_BOM):
            raw = raw[len(UTF8_BOM):]
        raw = raw.rstrip(b"\n")
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        text = _decode_line(raw, cut=cut and extra > 0)
        length = len(text) + extra
        if length > MAX_LINE_CHARS:
            text = f"{text[:MAX_LINE_CHARS]}… [line cut: {length - MAX_LINE_CHARS:,} more characters]"
        entry = f"{total:>6}\t{text}"
        if shown and used + len(entry) + 1 > READ_CHAR_BUDGET:
            budget_hit = True
            break
        shown.append(entry)
        used += len(entry) + 1
    total += _count_rest(handle)
    return _Listing(shown, total, offset, budget_hit)


def _count_rest(handle: Any) -> int:
    """Lines from the current position of a binary file to its end."""
    count = 0
    last = b"\n"
    while chunk := handle.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _decode_line(raw: bytes, cut: bool) -> str:
    """UTF-8, else latin-1. A ``cut`` line may end in the middle of a UTF-8 character."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(raw) - 3 and exc.reason == "unexpected end of data":
            return raw[: exc.start].decode("utf-8", errors="replace")
        return raw.decode("latin-1")


def _image(handle: Any, shown: str) -> "ToolOutcome":
    """An image file as the model sees images: its block, and a line that names it."""
    from .base import ToolOutcome

    handle.seek(0)
    data = handle.read(images.MAX_IMAGE_BYTES + 1)
    try:
        image = images.load_image(data, shown)
    except images.ImageError as exc:
        raise ToolError(str(exc)) from None
    assert image is not None
    image_block, marker = image.blocks()
    return ToolOutcome(f"{marker['text']} ({len(data) / 1000:.0f} kB)", blocks=(image_block,))


class ReadFile(Tool):
    name = "read_file"
    description = (
        "Read a text file from the workspace. Output is numbered like `cat -n`: the line number, "
        "a tab, then the line. The numbers are not part of the file: never copy them into edit_file's "
        "old_string. By default it shows the first 2000 lines; for longer files pass `offset` "
        "(the first line number to show, 1-based) and `limit` (how many lines). Lines longer than "
        "2000 characters are cut with a marker, and output stops at about 29,000 characters; a last "
        "line then tells you which lines were shown and the offset to continue from. PNG, JPEG, GIF and "
        "WebP images come back as images you can see; other binary files are refused. Paths are relative to the workspace root (absolute paths inside it also work). "
        "To list a directory use glob; to search contents use grep."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read, relative to the workspace root."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "Line number to start at (1-based). Default 1.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Maximum number of lines to show. Default {DEFAULT_LIMIT}.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    kind = "read"
    key_arg = "path"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> "str | ToolOutcome":
        real = resolve_path(ctx, args["path"])
        offset = int(args.get("offset") or 1)
        limit = int(args.get("limit") or DEFAULT_LIMIT)
        return await asyncio.to_thread(self._read, ctx, real, offset, limit)

    def _read(self, ctx: ToolContext, real: Path, offset: int, limit: int) -> "str | ToolOutcome":
        shown = ctx.workspace.relative(real)
        if real.is_dir():
            raise ToolError(
                f"{shown} is a directory, not a file; use glob (e.g. pattern '*' with path '{shown}') to list it."
            )
        if not real.exists():
            raise _not_found(ctx, real, shown)
        try:
            fd, _ = open_file(ctx, real, shown)
            with os.fdopen(fd, "rb") as handle:
                if images.media_type(handle.read(16)):
                    return _image(handle, shown)
                handle.seek(0)
                result = _read_listing(handle, offset, limit)
                handle.seek(0)
                ctx.workspace.files.saw(ctx.agent_id, real, hashlib.file_digest(handle, "sha256").digest())
        except OSError as exc:
            raise _os_error(exc, "read", shown) from None
        if result == "empty":
            return f"({shown} is empty.)"
        if result == "binary":
            raise ToolError(f"{shown} looks like a binary file (it contains NUL bytes), so it cannot be shown as text.")
        assert isinstance(result, _Listing)
        if not result.lines:
            raise ToolError(
                f"{shown} has only {_plural(result.total, 'line')}, so offset {offset} is past its end."
            )
        last = result.first + len(result.lines) - 1
        body = "\n".join(result.lines)
        if result.first == 1 and last == result.total:
            return body
        return f"{body}\n{_read_footer(result.first, last, result.total, result.budget_hit)}"


def _read_footer(first: int, last: int, total: int, budget_hit: bool) -> str:
    """The last line of a partial read: what was shown, which lines were not, and how to go on."""
    missing = [(1, first - 1)] if first > 1 else []
    if last < total:
        missing.append((last + 1, total))
    spans = [str(a) if a == b else f"{a}-{b}" for a, b in missing]  # unformatted, like read_file's numbers
    one = len(missing) == 1 and missing[0][0] == missing[0][1]
    why = " (output size limit reached)" if budget_hit else ""
    end = ", the end of the file" if last == total else ""
    footer = (f"[Showed lines {first}-{last} of {total:,}{end}{why}; "
              f"{'line' if one else 'lines'} {' and '.join(spans)} {'was' if one else 'were'} not shown.")
    if last < total:
        footer += f" To read on, call read_file with offset={last + 1}."
    return footer + "]"


# ---------------------------------------------------------------- write_file


def _write(ctx: ToolContext, real: Path, shown: str, content: str) -> bool:
    """Write ``content`` to ``real``; True when that created the file. Hold the file's lock around it."""
    if real.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path to write.")
    data = content.encode("utf-8")
    try:
        dir_fd = _open_dir(ctx, real.parent, create=True)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"Cannot write {shown}: part of its directory path is a file, not a directory.") from None
    try:
        old: bytes | None = None
        try:
            fd, info = _open_regular(dir_fd, real.name, shown)
        except FileNotFoundError:
            mode = None
        else:
            with os.fdopen(fd, "rb") as handle:
                old = handle.read()
            _check_seen(ctx, real, shown, old)
            mode = stat.S_IMODE(info.st_mode)
            if old.startswith(UTF8_BOM) and not content.startswith("\ufeff"):
                data = UTF8_BOM + data  # keep an existing file's byte-order mark
        if ctx.checkpoints is not None:
            ctx.checkpoints.before_change(real, old, mode)
        replace_in(dir_fd, real.name, data, mode)
        if ctx.checkpoints is not None:
            ctx.checkpoints.after_change(real, data)
    finally:
        os.close(dir_fd)
    ctx.workspace.files.saw(ctx.agent_id, real, _digest(data))
    return mode is None


def _write_preview(ctx: ToolContext, real: Path, shown: str, content: str) -> tuple[str, ...]:
    """What ``_write`` would change, refused as it would be (a file changed since it was read)."""
    if real.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path to write.")
    try:
        dir_fd = _open_dir(ctx, real.parent)
    except FileNotFoundError:
        return file_diff(None, content)  # its folders are made too
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"Cannot write {shown}: part of its directory path is a file, not a directory.") from None
    try:
        fd, _ = _open_regular(dir_fd, real.name, shown)
    except FileNotFoundError:
        return file_diff(None, content)
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        old = handle.read()
    _check_seen(ctx, real, shown, old)
    if is_binary(old):
        return (f"… replaces a binary file of {len(old):,} bytes",)
    return file_diff(decode_bytes(old)[0], content)


class WriteFile(Tool):
    name = "write_file"
    description = (
        "Create a file, or replace an existing file's entire contents, with `content` (written as "
        "UTF-8; missing parent directories are created). The write is atomic and an existing file "
        "keeps its permissions. Prefer edit_file for changing part of an existing file: it is safer "
        "and cheaper. To overwrite an existing file, read it with read_file first; if it changed since "
        "your last read, the write is refused and you must read it again. Paths are relative to the workspace root."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to write, relative to the workspace root."},
            "content": {"type": "string", "description": "The complete new contents of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }
    kind = "edit"
    key_arg = "path"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        real = resolve_path(ctx, args["path"])
        shown = ctx.workspace.relative(real)
        content: str = args["content"]
        try:
            created = await _serialized(ctx, real, _write, ctx, real, shown, content)
        except OSError as exc:
            raise _os_error(exc, "write", shown) from None
        lines = _plural(count_lines(content), "line")
        return f"Created {shown} ({lines})." if created else f"Wrote {shown} ({lines})."

    async def check(self, args: dict[str, Any], ctx: ToolContext) -> tuple[str, ...]:
        real = resolve_path(ctx, args["path"])
        shown = ctx.workspace.relative(real)
        try:
            return await asyncio.to_thread(_write_preview, ctx, real, shown, args["content"])
        except OSError as exc:
            raise _os_error(exc, "write", shown) from None


# ---------------------------------------------------------------- edit_file


_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)
HINT_LINES = 2_000  # lines of a big file the no-match hint compares old_string with
HINT_LINE_CHARS = 500  # characters of each line it compares


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _ranges(spans: list[tuple[int, int]], limit: int = 10) -> str:
    parts = [str(a) if a == b else f"{a}-{b}" for a, b in spans[:limit]]
    if len(spans) > limit:
        parts.append(f"and {len(spans) - limit} more")
    label = "line" if len(spans) == 1 and spans[0][0] == spans[0][1] else "lines"
    return f"{label} {', '.join(parts)}"


def _squash(s: str) -> str:
    return " ".join(s.split())


def _no_match_hint(text: str, old: str) -> str:
    """Why ``old`` may not have matched ``text``: whitespace, line-number prefixes, or the closest line.

    The work is bounded: at most HINT_LINES lines of a big file are compared (those holding the
    longest word of old_string's first line, else the first ones), each cut to HINT_LINE_CHARS.
    """
    if _LINE_NUMBER_PREFIX.search(old) and _LINE_NUMBER_PREFIX.sub("", old) in text:
        return " old_string seems to include read_file's line-number prefixes; leave them out."
    old_lines = [ln for ln in old.split("\n") if ln.strip()]
    if not old_lines:
        return " old_string contains only whitespace."
    lines = text.split("\n")
    first = old_lines[0].strip()
    word = max(first.split(), key=len)
    numbers = range(len(lines))
    if len(lines) > HINT_LINES:
        numbers = [i for i in numbers if word in lines[i]][:HINT_LINES] or range(HINT_LINES)  # type: ignore[assignment]
    # Whitespace-insensitive search: compare runs of stripped lines.
    wanted = [_squash(ln) for ln in old_lines]
    for i in numbers:
        if wanted[0] not in _squash(lines[i]):
            continue
        window = [squashed for ln in lines[i:i + 4 * len(wanted) + 50] if (squashed := _squash(ln))][: len(wanted)]
        if len(window) == len(wanted) and all(
            w == ln or (k == 0 and ln.endswith(w)) or (k == len(wanted) - 1 and ln.startswith(w))
            for k, (w, ln) in enumerate(zip(wanted, window))
        ):
            return (
                f" It matches near line {i + 1} if whitespace is ignored: check indentation "
                "(tabs vs spaces) and trailing spaces, and copy the text exactly from read_file."
            )
    stripped = {lines[i].strip()[:HINT_LINE_CHARS]: i for i in reversed(numbers)}  # first line wins
    close = difflib.get_close_matches(first[:HINT_LINE_CHARS], list(stripped), n=1, cutoff=0.5)
    if close:
        shown = close[0] if len(close[0]) <= 200 else close[0][:200] + "…"
        number = stripped[close[0]] + 1
        return f" The closest line is {number}: {shown!r}. Read the file again and copy the text exactly."
    return " Read the file again and copy the text exactly, including whitespace."


AROUND_LINES = 3  # lines of context edit_file shows above and below each change
AROUND_CHANGES = 5  # changes shown that way; a replace_all beyond them is only counted
AROUND_LONG = 24  # a change longer than this many lines shows its first and last AROUND_LONG // 2
AROUND_CHARS = 8_000  # and all of it stops about here (long lines: minified files)


def _around(text: str, spans: list[tuple[int, int]]) -> str:
    """The changed lines with a few lines around each, numbered like read_file, so the model can check an
    edit without reading the file again."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    windows: list[list[int]] = []
    for a, b in spans[:AROUND_CHANGES]:
        lo, hi = max(1, a - AROUND_LINES), min(len(lines), b + AROUND_LINES)
        if windows and lo <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    out: list[str] = []
    used = 0
    for lo, hi in windows:
        numbers = list(range(lo, hi + 1))
        if len(numbers) > AROUND_LONG + 2 * AROUND_LINES:
            keep = AROUND_LONG // 2 + AROUND_LINES
            numbers = [*numbers[:keep], 0, *numbers[-keep:]]
        if out:
            out.append("   ...")
        for n in numbers:
            if used > AROUND_CHARS:
                out.append("   ... (the rest is not shown: the lines are long; read_file shows them)")
                return "\n".join(out)
            if n == 0:
                out.append(f"   ... ({hi - lo + 1 - 2 * keep} lines not shown)")
                continue
            line = lines[n - 1].removesuffix("\r")
            if len(line) > MAX_LINE_CHARS:
                line = f"{line[:MAX_LINE_CHARS]}… [line cut: {len(line) - MAX_LINE_CHARS:,} more characters]"
            out.append(f"{n:>6}\t{line}")
            used += len(out[-1])
    if len(spans) > AROUND_CHANGES:
        out.append(f"   ... and {len(spans) - AROUND_CHANGES} more changes, not shown")
    return "\n".join(out)


def _to_crlf(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\n", "\r\n")


def _edited_dir(ctx: ToolContext, real: Path, shown: str) -> int:
    """The opened folder of a file edit_file may change; ToolError for a folder or a missing file."""
    if real.is_dir():
        raise ToolError(f"{shown} is a directory, not a file.")
    if not real.exists():
        raise _not_found(ctx, real, shown, " To create a new file, use write_file.")
    return _open_dir(ctx, real.parent)


def _read_edited(ctx: ToolContext, dir_fd: int, real: Path, shown: str) -> tuple[bytes, os.stat_result]:
    """The bytes of a file to edit, refused when it changed since the agent read it."""
    fd, info = _open_regular(dir_fd, real.name, shown)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    if not is_binary(data):  # a binary file is refused by _replaced in any case
        _check_seen(ctx, real, shown, data)
    return data, info


def _edit(ctx: ToolContext, real: Path, shown: str, old: str, new: str, replace_all: bool) -> tuple[int, str, str]:
    """Replace ``old`` by ``new`` in ``real``: the count, where, and those lines now. Hold the file's lock."""
    dir_fd = _edited_dir(ctx, real, shown)
    try:
        data, info = _read_edited(ctx, dir_fd, real, shown)
        encoded, count, where, around = _replaced(data, shown, old, new, replace_all)
        if ctx.checkpoints is not None:
            ctx.checkpoints.before_change(real, data, stat.S_IMODE(info.st_mode))
        replace_in(dir_fd, real.name, encoded, stat.S_IMODE(info.st_mode))
        if ctx.checkpoints is not None:
            ctx.checkpoints.after_change(real, encoded)
    finally:
        os.close(dir_fd)
    ctx.workspace.files.saw(ctx.agent_id, real, _digest(encoded))
    return count, where, around


def _edit_preview(ctx: ToolContext, real: Path, shown: str, old: str, new: str, replace_all: bool
                  ) -> tuple[str, ...]:
    """What ``_edit`` would change, refused as it would be (no single match, a file changed since read)."""
    dir_fd = _edited_dir(ctx, real, shown)
    try:
        data, _ = _read_edited(ctx, dir_fd, real, shown)
    finally:
        os.close(dir_fd)
    encoded, _, _, _ = _replaced(data, shown, old, new, replace_all)
    return file_diff(decode_bytes(data)[0], decode_bytes(encoded)[0])


def _edit_input(args: dict[str, Any]) -> tuple[str, str, bool]:
    """old_string, new_string and replace_all of an edit_file call; ToolError when it could change nothing."""
    old: str = args["old_string"]
    new: str = args["new_string"]
    if old == new:
        raise ToolError("old_string and new_string are identical, so there is nothing to change.")
    if old == "":
        raise ToolError("old_string is empty; to create a file or replace all of it, use write_file.")
    return old, new, bool(args.get("replace_all", False))


def _replaced(data: bytes, shown: str, old: str, new: str, replace_all: bool) -> tuple[bytes, int, str, str]:
    """The file's new bytes, how many replacements, the lines they landed on, and those lines in context."""
    if is_binary(data):
        raise ToolError(f"{shown} looks like a binary file (it contains NUL bytes); edit_file only edits text.")
    text, codec = decode_bytes(data)

    # Line endings: a file that mostly uses CRLF gets CRLF in the replacement too, even when
    # the model wrote plain \n (read_file shows lines without their \r).
    crlf = text.count("\r\n")
    crlf_file = crlf > 0 and crlf >= text.count("\n") - crlf
    count = text.count(old)
    if count == 0 and crlf and "\n" in old and "\r\n" not in old and text.count(_to_crlf(old)):
        old, new = _to_crlf(old), _to_crlf(new)
        count = text.count(old)
    elif crlf_file and "\n" not in old:
        new = _to_crlf(new)
    if count == 0:
        hint = _no_match_hint(text.replace("\r\n", "\n"), old.replace("\r\n", "\n"))
        raise ToolError(f"old_string was not found in {shown}.{hint}")
    if count > 1 and not replace_all:
        positions: list[int] = []
        start = text.find(old)
        while start != -1 and len(positions) < 10:
            positions.append(_line_of(text, start))
            start = text.find(old, start + len(old))
        where = ", ".join(str(n) for n in positions) + (", …" if count > len(positions) else "")
        raise ToolError(
            f"old_string matches {count} times in {shown} (at lines {where}); include more surrounding "
            "lines to make it unique, or set replace_all to true to replace every occurrence."
        )

    size = len(text) + count * (len(new) - len(old))
    if replace_all and size > max(MAX_EDITED_CHARS, len(text)):  # refused before it is built
        raise ToolError(f"Replacing all {count:,} matches in {shown} would make it {size:,} characters long, more "
                        f"than the {MAX_EDITED_CHARS:,} an edit may grow a file to; make a smaller change.")

    # Build the new text and note where each replacement landed.
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    out_len = 0
    out_lines = 1
    new_nl = new.count("\n")
    while True:
        found = text.find(old, pos)
        if found == -1 or (spans and not replace_all):
            break
        chunk = text[pos:found]
        pieces.append(chunk)
        out_lines += chunk.count("\n")
        out_len += len(chunk)
        end_line = out_lines + new_nl - (1 if new.endswith("\n") and new_nl else 0)
        spans.append((out_lines, max(out_lines, end_line)))
        pieces.append(new)
        out_lines += new_nl
        out_len += len(new)
        pos = found + len(old)
    pieces.append(text[pos:])
    result = "".join(pieces)
    try:
        encoded = encode_text(result, codec)
    except UnicodeEncodeError:
        raise ToolError(
            f"{shown} is latin-1 encoded and new_string contains characters latin-1 cannot represent; "
            "use only latin-1 characters or rewrite the file with write_file (as UTF-8)."
        ) from None
    return encoded, len(spans), _ranges(spans), _around(result, spans)


class EditFile(Tool):
    name = "edit_file"
    description = (
        "Replace exact text in an existing file. Read the file with read_file first; if it changed since "
        "your last read, the edit is refused and you must read it again. `old_string` must appear exactly "
        "once in the file (include enough surrounding lines to make it unique) unless `replace_all` is true, which "
        "replaces every occurrence (useful for renames). Copy old_string exactly from read_file's "
        "output, with the same indentation, but without the line-number prefixes. The file keeps its "
        "encoding (UTF-8, UTF-8 with BOM, or latin-1) and line endings (CRLF files stay CRLF even if "
        "you write \\n). The result shows the changed lines with a few lines around them, numbered like "
        "read_file, so there is no need to read the file again to check the edit. To create a file or "
        "rewrite it completely, use write_file."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit, relative to the workspace root."},
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The text to put in its place (must differ)."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence of old_string instead of requiring exactly one. Default false.",
            },
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    kind = "edit"
    key_arg = "path"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        real = resolve_path(ctx, args["path"])
        shown = ctx.workspace.relative(real)
        old, new, replace_all = _edit_input(args)
        try:
            count, where, around = await _serialized(ctx, real, _edit, ctx, real, shown, old, new, replace_all)
        except OSError as exc:
            raise _os_error(exc, "edit", shown) from None
        edited = f"Edited {shown}: replaced {_plural(count, 'occurrence')} ({where})."
        return f"{edited} The changed lines now read:\n{around}" if around else edited

    async def check(self, args: dict[str, Any], ctx: ToolContext) -> tuple[str, ...]:
        real = resolve_path(ctx, args["path"])
        shown = ctx.workspace.relative(real)
        old, new, replace_all = _edit_input(args)
        try:
            return await asyncio.to_thread(_edit_preview, ctx, real, shown, old, new, replace_all)
        except OSError as exc:
            raise _os_error(exc, "edit", shown) from None
