"""Worktree isolation: a subagent that edits works in its own git worktree, on its own branch.

The worktree starts from ``HEAD`` plus the user's uncommitted changes (tracked modifications and
untracked files that are not ignored), committed there as the *base*. It lives in the session's
folder, outside the repository, so searches of the main tree never see its copies. What the child
changed is the diff from the base to its branch. ``merge`` applies that diff to the user's working
tree file by file, three-way (``git merge-file``), and refuses the whole merge, changing nothing,
when a file changed on both sides in overlapping ways. Merged or discarded worktrees go, with their
branches.

Every git command goes through the hardened runner of ``tools/git.py``: the repository's hooks,
filters, fsmonitor and drivers never run. Blocking functions: call them through asyncio.to_thread.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from ..system.git import (
    Repository,
    UnsafeRepository,
    _first_error,
    absorb_child_objects,
    find_repository,
    run_git,
    run_git_bytes,
)

BRANCH_PREFIX = "agentcli/"  # branches are agentcli/<session id>/<subagent id>/work: each child's ref in a
BRANCH_TAIL = "work"  # folder of its own, the one its sandbox may write (agentcli/<session>/<id>: older ones)
IDENTITY = ("-c", "user.name=agentcli", "-c", "user.email=agentcli@localhost")


class WorktreeError(ToolError):
    """A worktree that cannot be made, found, merged or removed; the message is one sentence."""


@dataclass(frozen=True)
class Place:
    """Where a session's isolated children get their worktrees."""

    folder: Path  # <session folder>/worktrees
    session: str
    session_file: Path | None = None


@dataclass(frozen=True)
class Worktree:
    id: str  # the subagent's id, sa-3
    session: str
    branch: str
    path: Path  # the worktree's top folder
    prefix: str  # where the workspace lies inside the repository ("" at its top)
    base: str  # the commit the child started from
    main: Path  # the user's work tree (the repository's top folder)
    session_file: str = ""  # the session's main transcript, to tell a live session from a dead one
    git_dir: Path | None = None  # its admin folder in the main repository's .git/worktrees (None: gone)

    @property
    def root(self) -> Path:
        """The child's workspace root: the workspace's place inside the worktree."""
        return self.path / self.prefix if self.prefix else self.path

    @property
    def present(self) -> bool:
        return self.path.is_dir()


@dataclass(frozen=True)
class FileChange:
    path: str
    added: int | None  # None for a binary file
    removed: int | None


def summary(changes: list[FileChange]) -> str:
    """'2 files changed (+5 −1): a.py +3 −1, b.png binary'."""
    added = sum(c.added or 0 for c in changes)
    removed = sum(c.removed or 0 for c in changes)
    each = ", ".join(f"{c.path} " + ("binary" if c.added is None else f"+{c.added} −{c.removed}") for c in changes[:10])
    more = f", and {len(changes) - 10} more" if len(changes) > 10 else ""
    files = f"{len(changes)} file{'' if len(changes) == 1 else 's'}"
    return f"{files} changed (+{added} −{removed}): {each}{more}"


def repository(root: Path, outside: str = "") -> Repository:
    """The repository the workspace lies in; WorktreeError (``outside``, or a default sentence) outside one."""
    try:
        repo = find_repository(root)
    except UnsafeRepository as exc:
        raise WorktreeError(f"Worktree isolation is not available here: {exc}") from None
    if repo is None:
        raise WorktreeError(
            outside
            or f"isolation: worktree needs a git repository, and {root} is not in one; "
            "run the subagent without isolation."
        )
    return repo


# git has no lock of its own over .git/worktrees: while one `worktree add` makes its admin folder, another
# worktree or branch command that walks the worktrees reads the half-made one and fails ("failed to read
# …/worktrees/sa-2/commondir"), as two children starting side by side did. This process's such commands take turns.
_WORKTREE_COMMANDS = threading.Lock()


def _run(repo: Repository, *args: str) -> tuple[int, str, str]:
    """``run_git``, with worktree and branch commands taking turns in this process."""
    if args[0] not in ("worktree", "branch"):
        return run_git(repo, *args)
    with _WORKTREE_COMMANDS:
        return run_git(repo, *args)


def _git(repo: Repository, *args: str) -> str:
    code, out, err = _run(repo, *args)
    if code != 0:
        raise WorktreeError(f"git {args[0]} failed: {_first_error(err)}.")
    return out


# ---------------------------------------------------------------- making one


def create(root: Path, folder: Path, session: str, agent_id: str, session_file: Path | None = None) -> Worktree:
    """A fresh worktree for ``agent_id`` under ``folder``, from HEAD plus the user's uncommitted changes."""
    repo = repository(root)
    code, head, _ = run_git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    if code != 0:
        raise WorktreeError("isolation: worktree needs a commit to start from, and this repository has none yet.")
    path = folder / agent_id
    branch = f"{BRANCH_PREFIX}{session}/{agent_id}/{BRANCH_TAIL}"
    folder.mkdir(parents=True, exist_ok=True)
    _git(repo, "worktree", "add", "-q", "-b", branch, str(path), head.strip())
    prefix = "" if repo.root.resolve() == repo.work_tree else str(repo.root.resolve().relative_to(repo.work_tree))
    worktree = Worktree(
        agent_id,
        session,
        branch,
        path,
        prefix,
        head.strip(),
        repo.work_tree,
        str(session_file) if session_file else "",
        _admin_dir(repo, path),
    )
    try:
        child = _child(worktree)
        if _copy_uncommitted(repo, path):
            _git(child, "add", "-A")
            _git(
                child,
                *IDENTITY,
                "commit",
                "-q",
                "--no-verify",
                "-m",
                f"agentcli: uncommitted changes as {agent_id} began",
            )
        worktree = dataclasses.replace(worktree, base=_git(child, "rev-parse", "HEAD").strip())
        _write_meta(worktree)
    except (OSError, WorktreeError) as exc:
        discard(worktree)  # no half-made worktree stays behind
        reason = exc if isinstance(exc, WorktreeError) else f"{exc.strerror or exc} ({exc.filename})"
        raise WorktreeError(f"Could not copy your uncommitted changes into a worktree: {reason}") from None
    return worktree


def _admin_dir(repo: Repository, path: Path) -> Path | None:
    """The worktree's git directory, as the main repository records it (never from the worktree's own
    ``.git`` file, which the child could rewrite to point git at a repository of its making)."""
    common = Path(_git(repo, "rev-parse", "--git-common-dir").strip())
    folder = (repo.root / common if not common.is_absolute() else common).resolve() / "worktrees"
    try:
        admins = sorted(folder.iterdir())
    except OSError:
        return None
    for admin in admins:
        try:
            if Path((admin / "gitdir").read_text(encoding="utf-8").strip()).parent.resolve() == path.resolve():
                return admin
        except OSError:
            continue
    return None


def _copy_uncommitted(repo: Repository, path: Path) -> bool:
    """Copy tracked changes (against HEAD) and untracked, not ignored files into the worktree. Any?"""
    changed = _git(repo, "diff", "HEAD", "--name-only", "-z", "--no-renames", "--", ".").split("\0")
    untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "-z", "--full-name", "--", ".").split("\0")
    names = [name for name in {*changed, *untracked} if name and _plain(name)]
    for name in names:
        source, target = repo.work_tree / name, path / name
        if not source.is_symlink() and not source.exists():  # deleted in the user's tree
            target.unlink(missing_ok=True)
            continue
        if not source.is_symlink() and not source.is_file():
            continue  # a submodule or a nested repository: left as it is
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.exists():
            target.unlink()
        shutil.copy2(source, target, follow_symlinks=False)
    return bool(names)


def _plain(name: str) -> bool:
    """A relative path that stays inside the tree (git gives these; a check costs nothing)."""
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts


def _meta_path(path: Path) -> Path:
    return path.parent / f"{path.name}.json"


def _write_meta(worktree: Worktree) -> None:
    data = {
        "id": worktree.id,
        "session": worktree.session,
        "branch": worktree.branch,
        "base": worktree.base,
        "prefix": worktree.prefix,
        "main": str(worktree.main),
        "session_file": worktree.session_file,
    }
    _meta_path(worktree.path).write_text(json.dumps(data), encoding="utf-8")


# ---------------------------------------------------------------- finding them


def listing(root: Path) -> list[Worktree]:
    """Every agentcli worktree of the repository ``root`` lies in, oldest session first.

    Only worktrees in agentcli's own folders count: a repository's .git could name others, and
    discarding one removes its folder."""
    from .store import projects_home

    ours = projects_home().resolve()
    repo = repository(root, f"{root} is not in a git repository, so it has no subagent worktrees.")
    found: list[Worktree] = []
    entry: dict[str, str] = {}
    for line in [*_git(repo, "worktree", "list", "--porcelain").splitlines(), ""]:
        if line:
            key, _, value = line.partition(" ")
            entry[key] = value
            continue
        branch = entry.get("branch", "").removeprefix("refs/heads/")
        entry, current = {}, entry
        parts = branch.split("/")
        if not branch.startswith(BRANCH_PREFIX) or parts[3:] not in ([], [BRANCH_TAIL]) or len(parts) < 3:
            continue
        session, agent_id = parts[1:3]
        path = Path(current["worktree"])
        if not path.resolve().is_relative_to(ours):
            continue
        meta = _read_meta(path)
        base = meta.get("base") or _git(repo, "merge-base", branch, "HEAD").strip()
        found.append(
            Worktree(
                agent_id,
                session,
                branch,
                path,
                meta.get("prefix", ""),
                base,
                repo.work_tree,
                meta.get("session_file", ""),
                _admin_dir(repo, path),
            )
        )
    return sorted(found, key=lambda w: (w.session, _number(w.id)))


def _number(agent_id: str) -> int:
    tail = agent_id.removeprefix("sa-")
    return int(tail) if tail.isdigit() else 0


def _read_meta(path: Path) -> dict[str, str]:
    try:
        data = json.loads(_meta_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def find(root: Path, ident: str, session: str | None = None) -> Worktree:
    """The worktree named ``ident`` (sa-3, 3, or its branch): this session's first, else the newest."""
    ident = ident.strip()
    wanted = f"sa-{ident}" if ident.isdigit() else ident
    every = listing(root)
    matches = [w for w in every if wanted in (w.id, w.branch)]
    if not matches:
        have = ", ".join(w.id if w.session == session else w.branch for w in every) or "none"
        raise WorktreeError(f"No subagent worktree {ident!r} in this repository; there are: {have}.")
    own = [w for w in matches if w.session == session]
    return (own or matches)[-1]


# ---------------------------------------------------------------- what the child did


def save_work(worktree: Worktree) -> str:
    """Commit whatever the child left in its worktree to its branch; the branch's commit.

    Through plumbing, to the branch by name: the child may have pointed its HEAD, or its branch's ref, at
    another branch (``git symbolic-ref HEAD refs/heads/main``), and a ``git commit`` here, outside its
    sandbox, would then move the user's branch. Its branch is set to a plain ref and its HEAD back on it."""
    child = _child(worktree)
    try:
        absorb_child_objects(child)  # what its commits added, kept in a folder of its own until now
    except UnsafeRepository as exc:
        raise WorktreeError(str(exc)) from None
    ref = f"refs/heads/{worktree.branch}"
    head = _git(child, "rev-parse", "--verify", "HEAD^{commit}").strip()
    _git(child, "add", "-A")
    tree = _git(child, "write-tree").strip()
    tip = head
    if tree != _git(child, "rev-parse", "--verify", f"{head}^{{tree}}").strip():
        tip = _git(
            child, *IDENTITY, "commit-tree", tree, "-p", head, "-m", f"agentcli: {worktree.id}'s changes"
        ).strip()
    _git(child, "update-ref", "--no-deref", "-m", "agentcli: save work", ref, tip)
    _git(child, "symbolic-ref", "HEAD", ref)
    return tip


def _child(worktree: Worktree) -> Repository:
    if not worktree.present:
        raise WorktreeError(
            f"The worktree of {worktree.id} ({worktree.path}) is gone; "
            f"`agentcli worktrees discard {worktree.id}` removes its branch."
        )
    if worktree.git_dir is None:
        raise WorktreeError(
            f"The main repository has no record of the worktree of {worktree.id}; "
            f"`agentcli worktrees discard {worktree.id}` removes its branch."
        )
    return Repository(worktree.path, worktree.git_dir, worktree.path)


def changes(worktree: Worktree) -> list[FileChange]:
    tip = save_work(worktree)
    out = _git(_child(worktree), "diff", "--numstat", "-z", "--no-renames", worktree.base, tip)
    found = []
    for item in out.split("\0"):
        if item.count("\t") == 2:
            added, removed, path = item.split("\t")
            found.append(
                FileChange(path, int(added) if added.isdigit() else None, int(removed) if removed.isdigit() else None)
            )
    return found


def reset_to(worktree: Worktree, tip: str) -> None:
    """Put the worktree back at its saved work ``tip`` (``save_work``): what a command run there since (a best-of-N
    attempt's check) added or changed is dropped, so a merge takes the child's work alone. Files git ignores stay."""
    child = _child(worktree)
    ref = f"refs/heads/{worktree.branch}"
    _git(child, "symbolic-ref", "HEAD", ref)  # its HEAD back on its own branch first: the command may have moved it
    _git(child, "update-ref", "--no-deref", "-m", "agentcli: back to its work", ref, tip)
    _git(child, "reset", "-q", "--hard", tip)
    _git(child, "clean", "-q", "-f", "-d")


def diff(worktree: Worktree) -> str:
    """The child's changes as a unified diff (from its base to its work)."""
    tip = save_work(worktree)
    out = _git(_child(worktree), "diff", "--no-color", "--no-renames", worktree.base, tip)
    return out or f"{worktree.id} changed no files."


def finish(worktree: Worktree) -> str:
    """When the child ends: save its work and say what changed; a worktree with no changes goes."""
    found = changes(worktree)
    if not found:
        discard(worktree)
        return f"{worktree.id} changed no files, so its worktree was removed."
    return (
        f"Worktree branch {worktree.branch}: {summary(found)}. The user's files are untouched: "
        f"/diff {worktree.id} shows the changes, /merge {worktree.id} applies them, /discard {worktree.id} "
        "drops them (the worktree tool does the same when the user asks)."
    )


# ---------------------------------------------------------------- merging and discarding


class MergeConflict(WorktreeError):
    """Files changed on both sides in overlapping ways; nothing was written."""


def merge(worktree: Worktree) -> str:
    """Apply the child's changes to the user's working tree, three-way; remove the worktree after."""
    tip = save_work(worktree)
    child = _child(worktree)
    raw = run_git_bytes(child, "diff", "--raw", "-z", "--no-renames", "--no-abbrev", worktree.base, tip)
    if raw[0] != 0:
        raise WorktreeError(f"git diff failed: {_first_error(raw[2])}.")
    fields = raw[1].decode("utf-8", errors="surrogateescape").split("\0")
    plan: list[tuple[str, bytes | None, str]] = []  # path, new content (None: delete), new mode
    conflicts: list[str] = []
    for head, name in zip(fields[::2], fields[1::2], strict=False):
        if not head.startswith(":") or not _plain(name):
            continue
        old_mode, new_mode, old_sha, new_sha = head[1:].split(" ")[:4]
        base = _blob(child, old_sha) if int(old_mode, 8) else None
        theirs = _blob(child, new_sha) if int(new_mode, 8) else None
        target = worktree.main / name
        if not target.parent.resolve().is_relative_to(worktree.main):
            conflicts.append(name)
            continue
        ours = _read(target)
        if ours == theirs:
            continue
        if ours == base:
            plan.append((name, theirs, new_mode))
            continue
        merged = _merge_file(child, ours, base, theirs, worktree.id)
        if merged is None:
            conflicts.append(name)
        else:
            plan.append((name, merged, new_mode))
    outside = [
        name
        for name, content, mode in plan
        if mode == "120000" and content is not None and not _link_inside(worktree.main, name, content)
    ]
    if outside:
        raise WorktreeError(
            f"Cannot merge {worktree.id}: it made {', '.join(outside)} a symbolic link that points outside your "
            f"working tree, which a merge does not bring in. Nothing was changed; /diff {worktree.id} shows its "
            f"changes to apply by hand, /discard {worktree.id} drops them."
        )
    if conflicts:
        raise MergeConflict(
            f"Cannot merge {worktree.id}: {', '.join(conflicts)} changed both in your working tree and in "
            f"{worktree.id}'s worktree, in overlapping places. Nothing was changed; /diff {worktree.id} shows its "
            f"changes to apply by hand, /discard {worktree.id} drops them."
        )
    for name, content, mode in plan:
        _write(worktree.main / name, content, mode)
    found = changes(worktree)
    discard(worktree)
    applied = summary(found) if found else "no changes"
    return f"Merged {worktree.id} into your working tree: {applied}. Removed its worktree and branch {worktree.branch}."


def _link_inside(main: Path, name: str, target: bytes) -> bool:
    """Whether a symbolic link at ``name`` in the work tree ``main``, pointing at ``target``, stays inside it
    (read as written: a link through another link is that one's own)."""
    where = Path(os.path.normpath(main / name)).parent / target.decode("utf-8", errors="surrogateescape")
    return Path(os.path.normpath(where)).is_relative_to(main)


def _blob(repo: Repository, sha: str) -> bytes:
    code, out, err = run_git_bytes(repo, "cat-file", "blob", sha)
    if code != 0:
        raise WorktreeError(f"git cat-file failed: {_first_error(err)}.")
    return out


def _read(path: Path) -> bytes | None:
    try:
        if path.is_symlink():
            return os.readlink(path).encode("utf-8", errors="surrogateescape")
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _merge_file(
    repo: Repository, ours: bytes | None, base: bytes | None, theirs: bytes | None, label: str
) -> bytes | None:
    """A clean three-way merge of one text file, or None when the changes overlap (or a side is gone)."""
    if ours is None or base is None or theirs is None or any(b"\0" in x for x in (ours, base, theirs)):
        return None
    with tempfile.TemporaryDirectory(prefix="agentcli-merge-") as tmp:
        files = []
        for name, content in (("yours", ours), ("base", base), ("theirs", theirs)):
            (Path(tmp) / name).write_bytes(content)
            files.append(str(Path(tmp) / name))
        code, out, _ = run_git_bytes(repo, "merge-file", "-p", "-L", "yours", "-L", "base", "-L", label, *files)
    return out if code == 0 else None


def _write(path: Path, content: bytes | None, mode: str) -> None:
    if path.is_symlink() or (content is None and path.exists()):
        path.unlink()
    if content is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        os.symlink(content.decode("utf-8", errors="surrogateescape"), path)
        return
    path.write_bytes(content)
    if mode == "100755":
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def discard(worktree: Worktree) -> str:
    """Remove the worktree, its branch and its note."""
    repo = repository(worktree.main)
    if worktree.present:
        if worktree.git_dir is not None:  # git removes only a worktree whose .git file points back
            dot_git = worktree.path / ".git"
            if dot_git.is_dir() and not dot_git.is_symlink():
                shutil.rmtree(dot_git, ignore_errors=True)
            dot_git.unlink(missing_ok=True)
            (worktree.path / ".git").write_text(f"gitdir: {worktree.git_dir}\n", encoding="utf-8")
        code, _, err = _run(repo, "worktree", "remove", "--force", "--force", str(worktree.path))
        if code != 0:
            raise WorktreeError(f"Could not remove the worktree of {worktree.id}: {_first_error(err)}.")
    _run(repo, "worktree", "prune")
    code, _, err = _run(repo, "branch", "-D", worktree.branch)
    if code != 0 and "not found" not in err:
        raise WorktreeError(f"Could not delete branch {worktree.branch}: {_first_error(err)}.")
    _meta_path(worktree.path).unlink(missing_ok=True)
    return f"Discarded {worktree.id}: removed its worktree and branch {worktree.branch}."


def leftovers(root: Path, session: str) -> list[Worktree]:
    """Worktrees of other sessions that no agentcli has open (a crash, or a -p run, left them)."""
    from .store import in_use

    try:
        every = listing(root)
    except WorktreeError:
        return []
    return [w for w in every if w.session != session and not (w.session_file and in_use(Path(w.session_file)))]


def leftover_warning(root: Path, session: str) -> list[str]:
    """One warning naming the worktrees that sessions no longer running left behind, if any."""
    left = leftovers(root, session)
    if not left:
        return []
    names = ", ".join(f"{w.id} (session {w.session})" for w in left)
    return [
        f"Subagent worktrees left by earlier sessions: {names}. `agentcli worktrees list` shows what "
        "each changed; `agentcli worktrees merge ID` applies one, `agentcli worktrees discard ID` removes it."
    ]


def act(
    root: Path, action: str, ident: str, session: str | None = None, running: Callable[[str], bool] | None = None
) -> str:
    """diff, merge or discard one worktree, as /diff, /merge, /discard and `agentcli worktrees` do."""
    worktree = find(root, ident, session)
    if action != "diff" and worktree.session == session and running is not None and running(worktree.id):
        raise WorktreeError(f"{worktree.id} is still running; wait for it to finish, or cancel it first.")
    if action == "diff":
        return diff(worktree)
    if action == "merge":
        return merge(worktree)
    return discard(worktree)


def listing_lines(worktrees: list[Worktree], session: str | None = None) -> list[str]:
    """One line per worktree: id, session, branch, what changed (or why it cannot be read)."""
    lines = []
    for worktree in worktrees:
        try:
            what = summary(changes(worktree)) if worktree.present else "its folder is gone"
        except WorktreeError as exc:
            what = str(exc)
        whose = "this session" if worktree.session == session else f"session {worktree.session}"
        lines.append(f"{worktree.id} ({whose}) · branch {worktree.branch} · {what}")
    return lines
