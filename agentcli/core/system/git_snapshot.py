"""The repository's state for the system prompt (``snapshot``): its branch, main branch, short status and last
commits, read with five gits at once. ``take_ahead`` starts it at launch in a thread, so that its gits run beside
the start-up's imports (on the other core: a process holds no interpreter lock) instead of after them."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from .git import Repository, Started, UnsafeRepository, find_repository, run_git, start_on
from .threads import in_thread

MAIN_BRANCH_NAMES = ("main", "master", "trunk", "develop")
_ahead: dict[Path, Future[GitSnapshot | None]] = {}  # started by take_ahead, taken by the next snapshot of that root


def take_ahead(root: Path) -> None:
    """Start ``snapshot(root)`` now, in a thread of its own: the next ``snapshot`` of ``root`` takes its outcome
    (once; a later one reads git again). For a front end that opens a session on ``root`` soon."""
    where = root.resolve()
    if where not in _ahead:
        _ahead[where] = in_thread(lambda: read_snapshot(where), "git-snapshot")


@dataclass(frozen=True)
class GitSnapshot:
    """What ``snapshot`` read of a repository."""

    branch: str  # the current branch, or "detached HEAD at <hash>"
    main_branch: str | None
    status: list[str]  # `git status --short` lines
    commits: list[str]  # "<hash> <subject>", newest first


def snapshot(root: Path) -> GitSnapshot | None:
    """The state of the repository ``root`` is in, or None outside one: the one ``take_ahead`` started, else read
    now. Blocking."""
    ahead = _ahead.pop(root.resolve(), None)
    return ahead.result() if ahead is not None else read_snapshot(root)


def read_snapshot(root: Path, commits: int = 5) -> GitSnapshot | None:
    """``snapshot`` read now. Its five gits run at once, each a process of its own: one after another, they were
    the longest part of building the system prompt, which a session's first request waits for."""
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
