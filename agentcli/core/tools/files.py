"""File tools: read_file and write_file (edit_file is in edit.py).

All three file tools confine paths to the workspace, do their blocking work in a thread, and
turn every foreseeable failure into a ToolError the model can act on. Writes are
atomic (temporary file + rename) and keep an existing file's mode; edits keep
the file's line endings and encoding byte for byte outside the replaced text.

How a path is confined and a file opened is in file_access.py; edit_file is in edit.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import images
from ..errors import ToolError
from ..storage.outputs import READ_PAGE
from ..system.files import replace_in
from .base import EditorFiles, Tool, ToolContext
from .caps import OUTPUT_CAP
from .editor_files import as_bytes, editing, read_through, write_through
from .file_access import (
    BINARY_SNIFF,
    MAX_LINE_CHARS,
    UTF8_BOM,
    _check_seen,
    _digest,
    _not_found,
    _open_dir,
    _open_regular,
    _os_error,
    _plural,
    _serialized,
    count_lines,
    decode_bytes,
    is_binary,
    open_file,
    resolve_path,
)
from .preview import file_diff

if TYPE_CHECKING:
    from .base import ToolOutcome

DEFAULT_LIMIT = READ_PAGE  # lines read_file shows by default (storage/outputs.py: saved copies are read so too)
# read_file stops adding lines past this many characters, so the registry's head/tail
# cut (OUTPUT_CAP) never lands in the middle of a file listing.
READ_CHAR_BUDGET = OUTPUT_CAP - 1_000
_LINE_READ_BYTES = MAX_LINE_CHARS * 4 + 4  # enough bytes for MAX_LINE_CHARS characters of UTF-8


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
            raw = raw[len(UTF8_BOM) :]
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


def _image(handle: Any, shown: str) -> ToolOutcome:
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
    built_in_types = ("explore", "bash")  # the read-only scout and the command runner are given it
    list_place = 2  # its place when a built-in agent type's tools are listed
    claude_name = "Read"
    reads_files = True
    claude_file_path = True
    reads_saved_outputs = True  # the note on a cut output says to read its full copy with read_file
    receipt = "reads"
    on_demand = False
    description = (
        "Read a file of the workspace, numbered like `cat -n` (line number, tab, line). It shows 2000 lines from "
        "`offset`. Images come back as images. To list a directory use glob."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read."},
            "offset": {"type": "integer", "minimum": 1, "description": "Line number to start at (1-based). Default 1."},
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

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str | ToolOutcome:
        real = resolve_path(ctx, args["path"])
        offset = int(args.get("offset") or 1)
        limit = int(args.get("limit") or DEFAULT_LIMIT)
        editor = editing(ctx, real)
        if editor is not None and await asyncio.to_thread(_is_text, ctx, real):  # the editor's buffer, checked first
            shown = ctx.workspace.relative(real)
            handle = io.BytesIO(as_bytes(await read_through(editor, real, shown)))
            return _listed(ctx, real, shown, handle, offset, limit)
        return await asyncio.to_thread(self._read, ctx, real, offset, limit)

    def _read(self, ctx: ToolContext, real: Path, offset: int, limit: int) -> str | ToolOutcome:
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
                return _listed(ctx, real, shown, handle, offset, limit)
        except OSError as exc:
            raise _os_error(exc, "read", shown) from None


def _is_text(ctx: ToolContext, real: Path) -> bool:
    """A regular file of text, reached as read_file reaches it (anything else: read_file's own answer)."""
    try:
        fd, _ = open_file(ctx, real, str(real))
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(BINARY_SNIFF)
    except (OSError, ToolError):
        return False
    return not images.media_type(head[:16]) and not is_binary(head)


def _listed(ctx: ToolContext, real: Path, shown: str, handle: Any, offset: int, limit: int) -> str:
    """The lines read_file shows of an open binary handle (the file, or an editor's text), its state noted as seen."""
    result = _read_listing(handle, offset, limit)
    handle.seek(0)
    ctx.workspace.files.saw(ctx.agent_id, real, hashlib.file_digest(handle, "sha256").digest())
    if result == "empty":
        return f"({shown} is empty.)"
    if result == "binary":
        raise ToolError(f"{shown} looks like a binary file (it contains NUL bytes), so it cannot be shown as text.")
    assert isinstance(result, _Listing)
    if not result.lines:
        raise ToolError(f"{shown} has only {_plural(result.total, 'line')}, so offset {offset} is past its end.")
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
    footer = (
        f"[Showed lines {first}-{last} of {total:,}{end}{why}; "
        f"{'line' if one else 'lines'} {' and '.join(spans)} {'was' if one else 'were'} not shown."
    )
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
    return _replacing(old, content)


def _replacing(old: bytes | None, content: str) -> tuple[str, ...]:
    """The change write_file's ``content`` makes to a file that holds ``old`` (None: no file yet)."""
    if old is None:
        return file_diff(None, content)
    if is_binary(old):
        return (f"… replaces a binary file of {len(old):,} bytes",)
    return file_diff(decode_bytes(old)[0], content)


def _on_disk(ctx: ToolContext, real: Path, shown: str, create: bool) -> tuple[bytes | None, int | None]:
    """The bytes and mode of the file write_file replaces, reached as ``_write`` reaches it (its folders made
    when ``create``); (None, None) when there is none yet."""
    if real.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path to write.")
    try:
        dir_fd = _open_dir(ctx, real.parent, create=create)
    except FileNotFoundError:
        return None, None  # its folders are made when it is written
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"Cannot write {shown}: part of its directory path is a file, not a directory.") from None
    try:
        fd, info = _open_regular(dir_fd, real.name, shown)
    except FileNotFoundError:
        return None, None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(), stat.S_IMODE(info.st_mode)


async def _in_editor(
    ctx: ToolContext, editor: EditorFiles, real: Path, shown: str, create: bool
) -> tuple[bytes | None, int | None, bytes | None]:
    """What write_file replaces, as the editor has it: the bytes on disk, their mode, and the editor's text (a
    binary file's bytes), refused as ``_write`` refuses (a file this agent has not read in its current state)."""
    disk, mode = await asyncio.to_thread(_on_disk, ctx, real, shown, create)
    if disk is None:
        return None, None, None
    current = disk if is_binary(disk) else as_bytes(await read_through(editor, real, shown))
    _check_seen(ctx, real, shown, current)
    return disk, mode, current


async def _write_in_editor(ctx: ToolContext, editor: EditorFiles, real: Path, shown: str, content: str) -> bool:
    """``_write`` through the editor (editor_files.py); True when that created the file."""
    async with ctx.workspace.files.lock(real):
        disk, mode, _ = await _in_editor(ctx, editor, real, shown, create=True)
        if ctx.checkpoints is not None:
            ctx.checkpoints.before_change(real, disk, mode)
        await write_through(editor, real, shown, content)
        data = as_bytes(content)
        if ctx.checkpoints is not None:
            ctx.checkpoints.after_change(real, data)
    ctx.workspace.files.saw(ctx.agent_id, real, _digest(data))
    return disk is None


class WriteFile(Tool):
    name = "write_file"
    built_in_types = ("bash",)  # the command runner is given it
    list_place = 3  # its place when a built-in agent type's tools are listed
    preview = "write"  # an approval shows the file it writes, whole
    claude_name = "Write"
    on_demand = False
    receipt = "changes"
    rule_scope = "Edit"
    changes_things = True
    claude_file_path = True
    description = (
        "Create a file, or replace a whole file with `content` (UTF-8; parent folders are made). Read an "
        "existing file with read_file first; prefer edit_file for changing part of one."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to write."},
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
        editor = editing(ctx, real)
        try:
            if editor is not None:
                created = await _write_in_editor(ctx, editor, real, shown, content)
            else:
                created = await _serialized(ctx, real, _write, ctx, real, shown, content)
        except OSError as exc:
            raise _os_error(exc, "write", shown) from None
        lines = _plural(count_lines(content), "line")
        return f"Created {shown} ({lines})." if created else f"Wrote {shown} ({lines})."

    async def check(self, args: dict[str, Any], ctx: ToolContext) -> tuple[str, ...]:
        real = resolve_path(ctx, args["path"])
        shown = ctx.workspace.relative(real)
        editor = editing(ctx, real)
        try:
            if editor is not None:
                return _replacing((await _in_editor(ctx, editor, real, shown, create=False))[2], args["content"])
            return await asyncio.to_thread(_write_preview, ctx, real, shown, args["content"])
        except OSError as exc:
            raise _os_error(exc, "write", shown) from None
