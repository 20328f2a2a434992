"""The edit_file tool: exact text replaced in an existing file.

An edit keeps the file's line endings and encoding byte for byte outside the replaced text,
is refused when the file changed since this agent read it, and is written atomically
(temporary file + rename) keeping the file's mode. The no-match hint and the lines shown
around each change are here too.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import re
import stat
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..system.files import replace_in
from .base import EditorFiles, Tool, ToolContext
from .editor_files import as_bytes, editing, read_through, write_through
from .file_access import (
    MAX_LINE_CHARS,
    _check_seen,
    _digest,
    _not_found,
    _open_dir,
    _open_regular,
    _os_error,
    _plural,
    _serialized,
    decode_bytes,
    encode_text,
    is_binary,
    resolve_path,
)
from .preview import file_diff

MAX_EDITED_CHARS = 10_000_000  # the most a replace_all edit may grow a file to (1,000,000 matches × 4,000 is 4 GB)


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
        window = [squashed for ln in lines[i : i + 4 * len(wanted) + 50] if (squashed := _squash(ln))][: len(wanted)]
        if len(window) == len(wanted) and all(
            w == ln or (k == 0 and ln.endswith(w)) or (k == len(wanted) - 1 and ln.startswith(w))
            for k, (w, ln) in enumerate(zip(wanted, window, strict=True))
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


def _edit_preview(ctx: ToolContext, real: Path, shown: str, old: str, new: str, replace_all: bool) -> tuple[str, ...]:
    """What ``_edit`` would change, refused as it would be (no single match, a file changed since read)."""
    dir_fd = _edited_dir(ctx, real, shown)
    try:
        data, _ = _read_edited(ctx, dir_fd, real, shown)
    finally:
        os.close(dir_fd)
    return _edit_diff(data, shown, old, new, replace_all)


def _edit_diff(data: bytes, shown: str, old: str, new: str, replace_all: bool) -> tuple[str, ...]:
    encoded, _, _, _ = _replaced(data, shown, old, new, replace_all)
    return file_diff(decode_bytes(data)[0], decode_bytes(encoded)[0])


async def _in_editor(ctx: ToolContext, editor: EditorFiles, real: Path, shown: str) -> tuple[bytes, bytes, int]:
    """The file to edit as the editor has it (its text as bytes; a binary file's own bytes), its bytes on disk and
    its mode: refused as ``_read_edited`` refuses, every check made before the editor is asked (editor_files.py)."""

    def on_disk() -> tuple[bytes, int]:
        dir_fd = _edited_dir(ctx, real, shown)
        try:
            fd, info = _open_regular(dir_fd, real.name, shown)
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "rb") as handle:
            return handle.read(), stat.S_IMODE(info.st_mode)

    disk, mode = await asyncio.to_thread(on_disk)
    if is_binary(disk):
        return disk, disk, mode  # refused by _replaced
    data = as_bytes(await read_through(editor, real, shown))
    _check_seen(ctx, real, shown, data)
    return data, disk, mode


async def _edit_in_editor(
    ctx: ToolContext, editor: EditorFiles, real: Path, shown: str, old: str, new: str, replace_all: bool
) -> tuple[int, str, str]:
    """``_edit`` through the editor: the change lands in its buffer."""
    async with ctx.workspace.files.lock(real):
        data, disk, mode = await _in_editor(ctx, editor, real, shown)
        encoded, count, where, around = _replaced(data, shown, old, new, replace_all)
        if ctx.checkpoints is not None:
            ctx.checkpoints.before_change(real, disk, mode)
        await write_through(editor, real, shown, decode_bytes(encoded)[0])
        if ctx.checkpoints is not None:
            ctx.checkpoints.after_change(real, encoded)
    ctx.workspace.files.saw(ctx.agent_id, real, _digest(encoded))
    return count, where, around


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
        raise ToolError(
            f"Replacing all {count:,} matches in {shown} would make it {size:,} characters long, more "
            f"than the {MAX_EDITED_CHARS:,} an edit may grow a file to; make a smaller change."
        )

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
    built_in_types = ("bash",)  # the command runner is given it
    list_place = 4  # its place when a built-in agent type's tools are listed
    preview = "edit"  # an approval shows the diff of old_string into new_string
    claude_name = "Edit"
    claude_aliases = ("MultiEdit",)
    receipt = "changes"
    on_demand = False
    changes_things = True
    claude_file_path = True
    description = (
        "Replace exact text in a file you read with read_file. `old_string` is copied from read_file's output without the line numbers and must appear once, "
        "unless `replace_all`. The file keeps its encoding and line endings. The result shows the changed lines "
        "numbered, so there is no need to read the file again. To create or rewrite a file, use write_file."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit."},
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (renames)."},
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
        editor = editing(ctx, real)
        try:
            if editor is not None:
                count, where, around = await _edit_in_editor(ctx, editor, real, shown, old, new, replace_all)
            else:
                count, where, around = await _serialized(ctx, real, _edit, ctx, real, shown, old, new, replace_all)
        except OSError as exc:
            raise _os_error(exc, "edit", shown) from None
        edited = f"Edited {shown}: replaced {_plural(count, 'occurrence')} ({where})."
        return f"{edited} The changed lines now read:\n{around}" if around else edited

    async def check(self, args: dict[str, Any], ctx: ToolContext) -> tuple[str, ...]:
        real = resolve_path(ctx, args["path"])
        shown = ctx.workspace.relative(real)
        old, new, replace_all = _edit_input(args)
        editor = editing(ctx, real)
        try:
            if editor is None:
                return await asyncio.to_thread(_edit_preview, ctx, real, shown, old, new, replace_all)
            return _edit_diff((await _in_editor(ctx, editor, real, shown))[0], shown, old, new, replace_all)
        except OSError as exc:
            raise _os_error(exc, "edit", shown) from None
