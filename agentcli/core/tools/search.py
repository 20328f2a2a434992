"""Search tools: grep (content search) and glob (file names), both on top of ripgrep.

ripgrep comes from the ``ripgrep`` PyPI package, which installs an ``rg`` binary next to
the Python interpreter; ``rg_path()`` finds it. Both tools run rg with the workspace root
as the working directory, so every path they print is relative to the root, and both
respect .gitignore (also outside git repositories), include hidden files and skip .git/.

A ``path`` is searched through a descriptor: the folder (or file) is opened as the file tools
open theirs, one folder at a time from the root following no symlink, and rg runs in it
(``/proc/self/fd/N``), so a link swapped in after the check cannot lead rg outside. The
``glob`` argument and the deny rules on paths, written relative to the root, are rewritten
relative to that folder (``glob_patterns.rebased_globs``); the deny rules become rg exclusions, so a denied
file is never read.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ToolError
from .base import Tool, ToolContext
from .file_access import _open_dir, _os_error, open_file, resolve_path
from .glob_listing import Listing, list_newest
from .glob_patterns import compile_glob, name_globs, names_say_all, rebased_globs
from .rg import (
    _FD_DIR,
    COMMON_RG_ARGS,
    GREP_CHAR_BUDGET,
    GREP_MAX_LINES,
    _grep_sorted,
    _off_loop,
    _RgResult,
    _run_rg_sync,
    _Stopper,
)

T = TypeVar("T")
GREP_MAX_COLUMNS = 500  # longer matching lines are shortened by rg
GLOB_MAX_FILES = 200


def verbatim(text: str) -> str:
    r"""A pattern as the model wrote it, in backticks. ``repr`` would double each backslash (``'\\b'``
    for ``\b``), and a model may then "fix" a regex that was right."""
    if "\n" in text or "\r" in text:  # a line break cannot be shown in one sentence
        return repr(text)
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def timeout_note(result: _RgResult | Listing) -> str:
    return (
        f"[The search was stopped after {result.timed_out:g} s (setting search_timeout), so results may be "
        "missing; narrow it with `path` or `glob`.]"
    )


_HAS_FD_DIR = os.path.isdir(_FD_DIR)


def _from_opened(ctx: ToolContext, real: Path | None, search: Callable[[str], T]) -> T:
    """``search(where)``, with ``where`` the workspace root (``real`` None), or ``real`` reached through
    a descriptor: a folder opened one component at a time from its root following no symlink (as the
    file tools open theirs), or a regular file opened so. Blocking; closes what it opened."""
    if real is None:
        return search(str(ctx.workspace.root))
    if not _HAS_FD_DIR:  # no /proc: the checked path, as it is now
        return search(str(real))
    shown = ctx.workspace.relative(real)
    try:
        if real.is_dir():
            fd = _open_dir(ctx, real)
        else:
            fd, _ = open_file(ctx, real, shown)
    except OSError as exc:
        raise _os_error(exc, "search", shown) from None
    try:
        return search(f"{_FD_DIR}{fd}")
    finally:
        os.close(fd)


def _with_prefix(result: _RgResult, prefix: str, rg_name: str = "") -> _RgResult:
    """``result`` with its paths (at the start of each line) shown as ``prefix`` + what rg printed; a
    file searched as ``rg_name`` (its descriptor) shown as ``prefix`` alone."""
    if rg_name:
        result.lines = [prefix + line[len(rg_name) :] if line.startswith(rg_name) else line for line in result.lines]
    elif prefix:
        result.lines = [line if line == "--" else prefix + line for line in result.lines]
    return result


def _denied_globs(ctx: ToolContext, searched: Path) -> list[str]:
    """rg exclusions for the deny rules on paths that name a tool that reads, rebased onto ``searched``."""
    if ctx.permissions is None:
        return []
    return [
        arg
        for rule in ctx.permissions.read_denials()
        for glob in rebased_globs(rule.pattern or "**", ctx.workspace.root, searched)
        for arg in ("--glob", "!" + glob)
    ]


NOTHING_SEARCHED = "No files were searched"  # rg's words when every file was ignored, or there was none


def _rg_error(stderr: str, pattern: str | None = None) -> ToolError:
    text = stderr.strip()
    if pattern is not None and "regex parse error" in text:
        reason = next(
            (
                ln.strip()[len("error:") :].strip()
                for ln in reversed(text.splitlines())
                if ln.strip().startswith("error:")
            ),
            "invalid syntax",
        )
        return ToolError(
            f"Invalid regular expression {verbatim(pattern)}: {reason}. grep uses Rust regex syntax; escape "
            "characters such as ( ) [ ] { } . * + ? | with a backslash to match them literally."
        )
    lines = [ln.removeprefix("rg: ").strip() for ln in text.splitlines() if ln.strip()]
    message = " ".join(lines)[:1000] or "unknown error"
    return ToolError(f"ripgrep failed: {message.rstrip('.')}.")


async def _search_root(ctx: ToolContext, path: str | None, need_dir: bool) -> tuple[Path, str | None, str]:
    """(real path, rg path argument or None for the root, name to show) for a tool's ``path``."""
    if not path or path in (".", "./"):  # no file system call: no thread
        return ctx.workspace.root, None, "the workspace"
    return await asyncio.to_thread(_resolve_root, ctx, path, need_dir)


def _resolve_root(ctx: ToolContext, path: str, need_dir: bool) -> tuple[Path, str | None, str]:
    real = resolve_path(ctx, path)
    shown = ctx.workspace.relative(real)
    if not real.exists():
        raise ToolError(f"No such file or directory: {shown}.")
    if not real.is_dir() and not real.is_file():  # a FIFO or a device would block rg forever
        raise ToolError(
            f"{shown} is not a regular file or directory (it is a device, pipe or socket), so it cannot be searched."
        )
    if need_dir and not real.is_dir():
        raise ToolError(f"{shown} is a file, not a directory; glob's path must be a directory.")
    if real == ctx.workspace.root:
        return real, None, "the workspace"
    return real, shown, shown


# ---------------------------------------------------------------- grep


class Grep(Tool):
    name = "grep"
    built_in_types = ("explore",)  # the read-only scout is given it
    list_place = 5  # its place when a built-in agent type's tools are listed
    preview = "search"  # its line names the folder it searches
    claude_name = "Grep"
    receipt = "contents"
    on_demand = False
    rule_scope = "Read"
    reads_files = True
    description = (
        "Search file contents with ripgrep (Rust regex) in the workspace or `path`, skipping what .gitignore "
        "ignores. output_mode 'content' (default) prints "
        "`path:line:text`, 'files_with_matches' the files, 'count' `path:count` of matching lines. Output stops after 250 lines."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {"type": "string", "description": "File or directory to search. Default: the workspace."},
            "glob": {"type": "string", "description": "Only files whose path matches this glob, e.g. '*.py'."},
            "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
            "case_insensitive": {"type": "boolean", "description": "Ignore case. Default false."},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": 50,
                "description": "Lines shown before and after each match (content mode).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    kind = "read"
    key_arg = "pattern"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        pattern: str = args["pattern"]
        if pattern == "":
            raise ToolError("The pattern is empty; give a regular expression to search for.")
        mode = args.get("output_mode") or "content"
        glob = args.get("glob") or None
        real, target, where = await _search_root(ctx, args.get("path"), False)

        rg_args = [*COMMON_RG_ARGS, "--color", "never", "--with-filename"]
        rg_args += ["--max-columns", str(GREP_MAX_COLUMNS), "--max-columns-preview"]
        if args.get("case_insensitive"):
            rg_args.append("--ignore-case")
        one_file = target is not None and not await asyncio.to_thread(os.path.isdir, real)
        searched = real.parent if one_file else real
        if glob:
            rebased = [glob] if one_file else rebased_globs(glob, ctx.workspace.root, searched) or ["!**"]
            rg_args += [arg for g in rebased for arg in ("--glob", g)]
        rg_args += _denied_globs(ctx, searched)  # after the glob: the later wins, so a denial always holds
        if mode == "files_with_matches":
            rg_args.append("--files-with-matches")
        elif mode == "count":
            rg_args.append("--count")
        else:
            rg_args.append("--line-number")
            if args.get("context"):
                rg_args += ["--context", str(int(args["context"]))]
        rg_args += ["--regexp", pattern, "--"]

        root, timeout = ctx.workspace.root, ctx.settings.search_timeout
        opened = real if target is not None else None
        if one_file:  # one file, searched through its descriptor from the root: nothing to sort

            def search(stopper: _Stopper, where: str) -> _RgResult:
                found = _run_rg_sync(
                    ["--no-heading", "--sort", "path", *rg_args, where],
                    root,
                    GREP_MAX_LINES,
                    GREP_CHAR_BUDGET,
                    timeout,
                    stopper,
                )
                return _with_prefix(found, str(target), where)
        else:  # a folder, searched from inside it; paths come back relative to it
            context = bool(args.get("context")) and mode == "content"

            def search(stopper: _Stopper, where: str) -> _RgResult:
                found = _grep_sorted(rg_args, mode, context, Path(where), timeout, stopper)
                return _with_prefix(found, f"{target.rstrip('/')}/" if target is not None else "")

        result = await _off_loop(lambda stopper: _from_opened(ctx, opened, lambda where: search(stopper, where)))
        if result.timed_out and not result.lines:
            raise ToolError(
                f"grep found nothing for {verbatim(pattern)} in {where} before it was stopped after "
                f"{result.timed_out:g} s (setting search_timeout); narrow the search with `path` or `glob`."
            )
        if result.returncode == 2 and not result.lines and NOTHING_SEARCHED in result.stderr:
            return (
                f"No matches for {verbatim(pattern)}: no file in {where} was searched (there are none, or all are ignored: "
                ".gitignore, hidden files, or the `glob` given)."
            )
        if result.returncode == 1 or (result.returncode == 0 and not result.lines):
            scope = f" among files matching {verbatim(glob)}" if glob else ""
            return (
                f"No matches for {verbatim(pattern)} in {where}{scope} (files ignored by .gitignore were not searched)."
            )
        if result.returncode not in (0, 1) and not result.lines:
            raise _rg_error(result.stderr, pattern)

        out = list(result.lines)
        if mode == "count":
            counts = [ln.rsplit(":", 1)[-1] for ln in result.lines]
            if len(result.lines) == result.total and all(c.isdigit() for c in counts):
                matches = sum(int(c) for c in counts)
                out.append(
                    f"[{matches:,} matching line{'s' if matches != 1 else ''} in "
                    f"{result.total:,} file{'s' if result.total != 1 else ''}]"
                )
        left = result.total - len(result.lines)
        if left > 0 or result.more_than:
            unit = "files" if mode in ("files_with_matches", "count") else "lines"
            total = f"more than {result.total:,}" if result.more_than else f"{result.total:,}"
            out.append(
                f"[Output cut: showing {len(result.lines):,} of {total} {unit}; "
                f"{'many' if result.more_than else f'{left:,}'} more left out. Narrow the search with "
                "`path`, `glob` or a more specific pattern"
                + (
                    ", or use output_mode 'files_with_matches' or 'count' to see where the matches are.]"
                    if mode == "content"
                    else ".]"
                )
            )
        if result.returncode not in (0, 1) and result.stderr.strip():
            first = result.stderr.strip().splitlines()[0].removeprefix("rg: ")
            out.append(f"[Some files could not be searched: {first}]")
        if result.timed_out:
            out.append(timeout_note(result))
        return "\n".join(out)


# ---------------------------------------------------------------- glob


class Glob(Tool):
    name = "glob"
    built_in_types = ("explore", "bash")
    list_place = 6  # its place when a built-in agent type's tools are listed
    preview = "search"
    claude_name = "Glob"
    receipt = "names"
    on_demand = False
    claude_aliases = ("LS",)
    rule_scope = "Read"
    reads_files = True
    description = (
        "Find files by name, newest first: `*` within one folder, `**` across folders, `{a,b}` alternatives; a "
        "pattern without a slash ('*.py') matches at any depth. Skips what .gitignore ignores; at most 200 files."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, e.g. 'src/**/*.ts'."},
            "path": {"type": "string", "description": "Folder to search in. Default: the workspace root."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    kind = "read"
    key_arg = "pattern"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        pattern: str = args["pattern"]
        if not pattern.strip():
            raise ToolError("The pattern is empty; give a glob such as '**/*.py'.")
        base, target, where = await _search_root(ctx, args.get("path"), True)
        if os.path.isabs(pattern):
            try:
                pattern = str(Path(pattern).relative_to(base))
            except ValueError:
                raise ToolError(
                    f"The pattern {pattern} is an absolute path outside {where}; give a relative pattern "
                    "and use `path` to choose the directory."
                ) from None
        try:
            matcher = compile_glob(pattern)
        except re.error as exc:
            raise ToolError(f"Invalid glob pattern {verbatim(pattern)}: {exc}.") from None
        prefix = "" if target is None else target.rstrip("/") + "/"  # rg lists paths relative to the folder searched
        rg_args = [*COMMON_RG_ARGS, "--files", *_denied_globs(ctx, base)]
        names = name_globs(pattern)
        if names is not None:
            rg_args += [arg for name in names for arg in ("--type-add", f"globbed:{name}")] + ["--type", "globbed"]
        opened = base if target is not None else None
        timeout = ctx.settings.search_timeout
        result = await _off_loop(
            lambda stopper: _from_opened(
                ctx,
                opened,
                lambda where: list_newest(
                    rg_args,
                    Path(where),
                    timeout,
                    None if names_say_all(pattern) else matcher,
                    stopper,
                    GLOB_MAX_FILES,
                    prefix,
                    base,
                ),
            )
        )
        if result.timed_out and not result.listed:
            raise ToolError(
                f"glob listed no files in {where} before it was stopped after {result.timed_out:g} s "
                "(setting search_timeout); give a narrower `path`."
            )
        if result.returncode not in (0, 1) and not result.listed:
            raise _rg_error(result.stderr)
        ordered = result.found
        stopped = f"\n{timeout_note(result)}" if result.timed_out else ""
        if not ordered:
            return (
                f"No files match {verbatim(pattern)} in {where} (files ignored by .gitignore are not listed).{stopped}"
            )
        if result.matched > GLOB_MAX_FILES:
            shown = ordered[:GLOB_MAX_FILES]
            shown.append(
                f"[Showing the {GLOB_MAX_FILES} most recently modified of {result.matched:,} matching files; "
                "use a more specific pattern or path to see the others.]"
            )
            return "\n".join(shown) + stopped
        return "\n".join(ordered) + stopped
