"""Read-only git tools (git_status, git_diff, git_log, git_blame) and the git snapshot for the system prompt.

Every git command runs through the hardened runner of ``system/git.py``. Outside a git repository (or
without a git binary) the tools are not offered and the snapshot is None.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..system.git import (
    Repository,
    Started,
    UnsafeRepository,
    _first_error,
    _workspace_git,
    find_repository,
    run_git,
    start_on,
)
from .base import Tool, ToolContext
from .file_access import resolve_path

STATUS_MAX_LINES = 300  # git_status output lines shown
BLAME_MAX_LINES = 400  # git_blame lines shown when no range is given
DIFF_STAT_OVER = 20_000  # characters of diff past which a --stat summary goes first
LOG_DEFAULT, LOG_MAX = 20, 200
MAIN_BRANCH_NAMES = ("main", "master", "trunk", "develop")


async def _git_output(ctx: ToolContext, *args: str) -> str:
    status, out, err = await asyncio.to_thread(_workspace_git, ctx.workspace.root, *args)
    if status != 0:
        raise ToolError(f"git {args[0]} failed: {_first_error(err)}.")
    return out


def _path_arg(ctx: ToolContext, path: str | None) -> tuple[str | None, Path | None]:
    """(the path for git, relative to the root; its real location) for an optional path argument."""
    if not path or path in (".", "./"):
        return None, None
    real = resolve_path(ctx, path)
    return ctx.workspace.relative(real), real


def _denied_pathspecs(ctx: ToolContext) -> list[str]:
    """Pathspecs that leave out what the deny rules on paths forbid reading (``Read(.env)``): a diff or a
    status of the whole workspace must not show a denied file either. Rules naming places outside the
    workspace have nothing to leave out here."""
    if ctx.permissions is None:
        return []
    specs = []
    for rule in ctx.permissions.read_denials():
        pattern = (rule.pattern or "").removeprefix("./")
        if not pattern or pattern.startswith(("~", "..", "!")):
            continue
        dir_only, pattern = pattern.endswith("/"), pattern.rstrip("/")
        if "/" in pattern:  # anchored at the root, as gitignore reads it
            stems = [pattern.lstrip("/")]
        else:
            stems = [f"**/{pattern}"]
        for stem in stems:
            specs += (
                [f":(exclude,glob){stem}/**"] if dir_only else [f":(exclude,glob){stem}", f":(exclude,glob){stem}/**"]
            )
    return specs


def _capped(lines: list[str], limit: int, advice: str) -> str:
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit]) + f"\n[{len(lines) - limit:,} more lines not shown; {advice}]"


class GitStatus(Tool):
    name = "git_status"
    built_in_types = ("explore",)  # the read-only scout is given it
    list_place = 8  # its place when a built-in agent type's tools are listed
    reads_files = True
    brief = "branch and changed files"  # its line in the index of tools on demand (on_demand.py)
    description = (
        "Show the git working tree status: the branch and how it tracks its upstream, then one line "
        "per changed file (XY path: X is the staged state, Y the unstaged one; ?? untracked). "
        "Read-only."
    )
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}
    kind = "read"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        out = await _git_output(
            ctx, "status", "--short", "--branch", "--untracked-files=normal", "--", ".", *_denied_pathspecs(ctx)
        )
        lines = out.rstrip("\n").splitlines()
        if len(lines) <= 1:
            lines.append("Working tree clean: nothing to commit.")
        return _capped(lines, STATUS_MAX_LINES, "pass a path to git_diff to look at one of them")


class GitDiff(Tool):
    name = "git_diff"
    built_in_types = ("explore",)  # the read-only scout is given it
    list_place = 9  # its place when a built-in agent type's tools are listed
    reads_files = True
    brief = "uncommitted changes as a diff"  # its line in the index of tools on demand (on_demand.py)
    description = (
        "Show uncommitted changes as a unified diff: unstaged ones by default, staged ones with "
        "staged=true. `path` narrows it to a file or directory. Untracked files do not appear "
        "(git_status lists them). Read-only."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File or directory to diff, relative to the workspace root."},
            "staged": {"type": "boolean", "description": "Diff the staged changes (the index) instead. Default false."},
        },
        "additionalProperties": False,
    }
    kind = "read"
    key_arg = "path"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        target, _ = await asyncio.to_thread(_path_arg, ctx, args.get("path"))
        base = ["diff", "--no-color", *(["--cached"] if args.get("staged") else [])]
        scope = ["--", target or ".", *_denied_pathspecs(ctx)]  # the workspace only, without denied files
        out = await _git_output(ctx, *base, *scope)
        if not out.strip():
            which = "staged" if args.get("staged") else "unstaged"
            where = f" in {target}" if target else ""
            hint = "" if args.get("staged") else " (untracked files never show here; git_status lists them)"
            return f"No {which} changes{where}{hint}."
        if len(out) > DIFF_STAT_OVER:
            stat = await _git_output(ctx, *base, "--stat", *scope)
            return f"{stat.rstrip()}\n\n{out}"
        return out


class GitLog(Tool):
    name = "git_log"
    built_in_types = ("explore",)  # the read-only scout is given it
    list_place = 10  # its place when a built-in agent type's tools are listed
    reads_files = True
    brief = "recent commits"  # its line in the index of tools on demand (on_demand.py)
    description = (
        "List recent commits, newest first: short hash, date, author and subject. `path` shows only "
        "commits that touched it (following renames for a file); `limit` defaults to 20. Read-only."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Only commits touching this file or directory."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": LOG_MAX,
                "description": f"How many commits to show (default {LOG_DEFAULT}).",
            },
        },
        "additionalProperties": False,
    }
    kind = "read"
    key_arg = "path"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        target, real = await asyncio.to_thread(_path_arg, ctx, args.get("path"))
        limit = int(args.get("limit") or LOG_DEFAULT)
        command = ["log", f"--max-count={limit}", "--date=short", "--format=%h %ad %an: %s"]
        if target:
            follow = ["--follow"] if real is not None and real.is_file() else []
            command += [*follow, "--", target]
        status, out, err = await asyncio.to_thread(_workspace_git, ctx.workspace.root, *command)
        if status != 0:
            if "does not have any commits" in err:
                return "No commits yet."
            raise ToolError(f"git log failed: {_first_error(err)}.")
        if not out.strip():
            return f"No commits touch {target}." if target else "No commits yet."
        return out.rstrip("\n")


class GitBlame(Tool):
    name = "git_blame"
    built_in_types = ("explore",)  # the read-only scout is given it
    list_place = 11  # its place when a built-in agent type's tools are listed
    reads_files = True
    brief = "who last changed each line"  # its line in the index of tools on demand (on_demand.py)
    description = (
        "Show who last changed each line of a file and in which commit: `hash (author date line) "
        f"text`. `start` and `end` (1-based, inclusive) pick a range; without them the first "
        f"{BLAME_MAX_LINES} lines are shown. Read-only."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file, relative to the workspace root."},
            "start": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
            "end": {"type": "integer", "minimum": 1, "description": "Last line, inclusive."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    kind = "read"
    key_arg = "path"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        target, real = await asyncio.to_thread(_path_arg, ctx, args["path"])
        if target is None or real is None or real.is_dir():
            raise ToolError(f"git_blame needs a file, and {args['path']} is a directory.")
        start, end = args.get("start"), args.get("end")
        if start is not None and end is not None and end < start:
            raise ToolError(f"end ({end}) is before start ({start}); give a range with start <= end.")
        command = ["blame", "--date=short"]
        if start is not None or end is not None:
            command.append(f"-L{start or 1},{end or ''}")
        out = await _git_output(ctx, *command, "--", target)
        lines = out.rstrip("\n").splitlines()
        if start is None and end is None:
            return _capped(lines, BLAME_MAX_LINES, "pass start and end to see the rest")
        return "\n".join(lines)


def git_tools() -> list[Tool]:
    return [GitStatus(), GitDiff(), GitLog(), GitBlame()]


# ---------------------------------------------------------------- the snapshot for the system prompt


@dataclass(frozen=True)
class GitSnapshot:
    branch: str  # the current branch, or "detached HEAD at <hash>"
    main_branch: str | None
    status: list[str]  # `git status --short` lines
    commits: list[str]  # "<hash> <subject>", newest first


def snapshot(root: Path, commits: int = 5) -> GitSnapshot | None:
    """The state of the repository ``root`` is in, or None outside one. Blocking.

    Its five gits run at once, each a process of its own: one after another, they were the longest part of
    building the system prompt, which a session's first request waits for."""
    try:
        repo = find_repository(root)
    except UnsafeRepository:
        return None  # the git tools say why when called
    if repo is None:
        return None
    head = start_on(repo, "symbolic-ref", "--short", "-q", "HEAD")
    status = start_on(repo, "status", "--short", "--untracked-files=normal", "--", ".", timeout=10)
    log = start_on(repo, "log", f"--max-count={commits}", "--format=%h %s")
    branches = main_branch_started(repo)
    code, out, _ = head.text()
    if code == 0 and out.strip():
        branch = out.strip()
    else:
        code, out, _ = run_git(repo, "rev-parse", "--short", "HEAD")
        branch = f"detached HEAD at {out.strip()}" if code == 0 else "unknown"
    code, out, _ = status.text()
    changed = out.rstrip("\n").splitlines() if code == 0 else []
    code, out, _ = log.text()
    recent = out.rstrip("\n").splitlines() if code == 0 else []
    return GitSnapshot(branch=branch, main_branch=main_branch_of(branch, *branches), status=changed, commits=recent)


def main_branch(repo: Repository, current: str) -> str | None:
    """The branch changes are merged into: origin's HEAD, else a local main/master/trunk/develop."""
    return main_branch_of(current, *main_branch_started(repo))


def main_branch_started(repo: Repository) -> tuple[Started, Started]:
    """The two gits ``main_branch_of`` reads, started together: origin's HEAD, and the local branches."""
    return (
        start_on(repo, "symbolic-ref", "--short", "-q", "refs/remotes/origin/HEAD"),
        start_on(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads"),
    )


def main_branch_of(current: str, origin_head: Started, heads: Started) -> str | None:
    """``main_branch`` from its two gits (``main_branch_started``), waited for here."""
    code, out, _ = origin_head.text()
    origin = out.strip() if code == 0 else ""
    code, out, _ = heads.text()  # waited for either way: no process is left unreaped
    if origin:
        return origin.removeprefix("origin/")
    local = out.split() if code == 0 else []
    for name in MAIN_BRANCH_NAMES:
        if name in local:
            return name
    if local == [current] or (not local and not current.startswith("detached")):
        return current
    return None
