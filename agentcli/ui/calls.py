"""How a tool call reads for people, the same in every front end: what an approval shows (the diff of
an edit, a new file's head and tail, a command whole with its description) and a call's one line.

Front ends style the lines by their kind; none computes a diff of its own (the engine sends it with the
question, ``ApprovalRequested.diff``, made by ``core.tools.preview``).
"""

from __future__ import annotations

import difflib
import json
from typing import Any, Literal

from ..core.events import Preview
from .format import flat

Kind = Literal["title", "command", "path", "field", "hunk", "add", "remove", "same", "note"]
Line = tuple[Kind, str]

# How each kind of line looks in a rich renderable (line mode; the TUI's reports); the TUI's widgets
# have their own, in theme colours (``tui/format.py``).
RICH_STYLES: dict[str, str] = {
    "title": "bold",
    "command": "",
    "path": "bold",
    "field": "",
    "hunk": "cyan",
    "add": "green",
    "remove": "red",
    "same": "",
    "note": "dim italic",
}
MAX_COMMAND_LINES = 300  # a command is shown whole up to this many lines (the rest is counted)


def approval_lines(preview: Preview, args: Any, diff: tuple[str, ...] = ()) -> list[Line]:
    """What the user approves, by how its tool says its calls read (``preview``): a command (bash) its description
    above the whole command, an edit or a write the path and the diff, any other its arguments as 'key: value'."""
    if not isinstance(args, dict):
        return [("field", json.dumps(args, ensure_ascii=False))]
    if preview == "command" and isinstance(args.get("command"), str):
        lines: list[Line] = [("title", flat(str(args["description"])))] if args.get("description") else []
        command = args["command"].splitlines() or [""]
        lines += [("command", line) for line in command[:MAX_COMMAND_LINES]]
        if len(command) > MAX_COMMAND_LINES:
            lines.append(("note", f"… {len(command) - MAX_COMMAND_LINES} more lines"))
        rest = {k: v for k, v in args.items() if k not in ("command", "description")}
        return lines + field_lines(rest)
    if preview in ("edit", "write"):
        every = "  (every match)" if preview == "edit" and args.get("replace_all") else ""
        return [("path", f"{args.get('path', '')}{every}"), *diff_lines(diff or input_diff(preview, args))]
    return field_lines(args)


def input_diff(preview: Preview, args: dict[str, Any]) -> tuple[str, ...]:
    """The diff a file tool's input alone tells (without the file): a write as a new file, an edit as
    its old text changed into its new text."""
    from ..core.door import file_diff  # here: the TUI's first screen loads no engine module

    if preview == "write":
        return file_diff(None, str(args.get("content", "")))
    return file_diff(str(args.get("old_string", "")), str(args.get("new_string", "")))


def diff_lines(diff: tuple[str, ...]) -> list[Line]:
    kinds: dict[str, Kind] = {"@": "hunk", "+": "add", "-": "remove", " ": "same"}
    return [(kinds.get(line[:1], "note"), line) for line in diff]


def patch_lines(text: str) -> list[Line]:
    """A git diff (/diff of a subagent's worktree) line by line, with a kind each front end colours:
    file headers as paths, hunks, added, removed, kept; any sentence around it as a note."""
    lines: list[Line] = []
    for line in text.splitlines():
        if line.startswith(
            ("diff --git ", "index ", "--- ", "+++ ", "new file", "deleted file", "similarity", "rename ")
        ):
            lines.append(("path", line))
        else:
            lines.append(diff_lines((line,))[0] if line[:1] in "@+- " and line else ("note", line))
    return lines


def field_lines(args: dict[str, Any]) -> list[Line]:
    lines: list[Line] = []
    for key, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts = text.splitlines() or [""]
        if len(parts) == 1:
            lines.append(("field", f"{key}: {parts[0]}"))
        else:
            lines.append(("field", f"{key}:"))
            lines.extend(("field", "  " + part) for part in parts)
    return lines


def call_line(preview: Preview, args: Any, summary: str) -> str:
    """A call on one line, telling calls of one tool apart: an edit's path with ``+3 −2``, a write's
    line count, a glob's folder, a command after its description."""
    if not isinstance(args, dict):
        return summary
    if preview == "edit":
        added, removed = changed_lines(str(args.get("old_string", "")), str(args.get("new_string", "")))
        every = " (every match)" if args.get("replace_all") else ""
        return f"{summary}  +{added} −{removed}{every}"
    if preview == "write" and isinstance(args.get("content"), str):
        count = len(args["content"].splitlines())
        return f"{summary}  ({count} line{'' if count == 1 else 's'})"
    if preview == "search" and isinstance(args.get("path"), str) and args["path"].strip() not in ("", "."):
        return f"{summary} in {args['path']}"
    if preview == "command" and isinstance(args.get("description"), str) and args["description"].strip():
        return f"{flat(args['description'])} · {summary}"
    return summary


def changed_lines(old: str, new: str) -> tuple[int, int]:
    """Lines added and removed when ``old`` becomes ``new``."""
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
        if tag != "equal":
            removed, added = removed + old_to - old_from, added + new_to - new_from
    return added, removed
