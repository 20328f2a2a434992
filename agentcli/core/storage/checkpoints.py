"""Checkpoints: what each file held before the agents first changed it after a user prompt.

Before ``write_file``, ``edit_file`` (of any agent of the session) or a ``bash`` call first changes a file
after prompt N, its previous bytes (or the fact that it did not exist) are kept under the session's
folder: ``checkpoints/blobs/<sha256>`` holds each content once, ``checkpoints/index.jsonl`` one line per
fact, appended and flushed like the transcripts, so checkpoints survive a crash and ``--continue``.

Facts in the index:
- ``before``: prompt N, a path (relative to the workspace root), the blob (None: the file did not
  exist) and its mode, or a ``note`` when the content could not be kept (too large);
- ``after``: the bytes an agent left in the file (its blob, or None for a deleted file), so a rewind
  can tell an edit the user made by hand since then and never overwrite it silently;
- ``unrestorable``: a bash call changed a file whose earlier content nobody kept.

Restoring "before prompt N" puts back, for each file changed at or after prompt N, the earliest
``before`` fact from prompt N on.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 16 * 1024 * 1024  # a bigger file is noted, not kept (setting checkpoint_file_max_mb)
MAX_TOTAL_BYTES = 512 * 1024 * 1024  # all of a session's checkpoint contents (setting checkpoint_session_max_mb)
MAX_SCANNED_FILES = 50_000  # a bigger tree is not scanned around bash calls; the list says so
TOO_LARGE = "too large to keep"
BASH_UNKNOWN = "bash may have changed files that rewind cannot restore"


@dataclass
class Before:
    prompt: int
    path: str
    blob: str | None  # None: the file did not exist
    mode: int | None = None
    note: str = ""  # why the content was not kept


@dataclass
class Checkpoint:
    """One user prompt and what the agents changed after it."""

    prompt: int
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Restore:
    """What restoring files did, or would do."""

    restored: list[str] = field(default_factory=list)
    changed_by_hand: list[str] = field(default_factory=list)  # left alone unless the user said overwrite
    not_kept: list[str] = field(default_factory=list)  # too large, or changed by bash with no copy


class Checkpoints:
    """The checkpoints of one session. ``folder`` None keeps them in memory only (no session file)."""

    def __init__(
        self,
        root: Path,
        folder: Path | None,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
    ) -> None:
        self.root = root.resolve()
        self.folder = folder
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.prompt = 0  # the user prompt the changes belong to
        self.befores: list[Before] = []
        self.after: dict[str, str | None] = {}  # path -> blob an agent left there last
        self.unrestorable: list[tuple[int, str]] = []
        self.memory: dict[str, bytes] = {}  # blobs, when there is no folder
        self.stored_bytes = 0
        if folder is not None:
            self._load()

    # ------------------------------------------------------------ keeping

    def begin(self, prompt: int) -> None:
        self.prompt = prompt

    def relative(self, real: Path) -> str | None:
        """``real`` relative to the workspace root; None outside it (say, a child's own worktree)."""
        try:
            return real.resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return None

    def kept(self, path: str) -> bool:
        return any(b.path == path and b.prompt == self.prompt for b in self.befores)

    def before_change(self, real: Path, old: bytes | None, mode: int | None = None) -> None:
        """Keep ``old`` (None: no such file) unless this file was kept already for the current prompt."""
        path = self.relative(real)
        if path is None or self.prompt == 0 or self.kept(path):
            return
        note, blob = "", None
        if old is not None:
            if len(old) > self.max_file_bytes or self.stored_bytes + len(old) > self.max_total_bytes:
                note = TOO_LARGE
            else:
                blob = self._keep_blob(old)
        self._record(
            {
                "kind": "before",
                "prompt": self.prompt,
                "path": path,
                "blob": blob,
                "mode": mode,
                "note": note,
                "existed": old is not None,
            }
        )

    def after_change(self, real: Path, new: bytes | None) -> None:
        """Note what an agent left in the file (None: it removed it)."""
        path = self.relative(real)
        if path is None or self.prompt == 0:
            return
        self._record({"kind": "after", "path": path, "blob": _sha(new) if new is not None else None})

    def bash_changed(self, changes: dict[str, bytes | None | str]) -> None:
        """After a bash call: each changed path with its earlier bytes, None (it was new) or
        ``"unknown"`` (nobody kept them); the path "" for a tree too big to scan. The after states are
        read from the disk."""
        if self.prompt == 0:
            return
        for path, old in changes.items():
            real = self.root / path
            if path == "":
                if ("", self.prompt) not in {(p, n) for n, p in self.unrestorable}:
                    self._record({"kind": "unrestorable", "prompt": self.prompt, "path": ""})
                continue
            if old == "unknown":
                if not self.kept(path):
                    self._record({"kind": "unrestorable", "prompt": self.prompt, "path": path})
            else:
                self.before_change(real, old if isinstance(old, bytes) else None)
            try:
                self.after_change(real, real.read_bytes())
            except OSError:
                self.after_change(real, None)

    # ------------------------------------------------------------ reading

    def list(self) -> list[Checkpoint]:
        """The prompts after which something changed, with the files and notes."""
        by_prompt: dict[int, Checkpoint] = {}
        for b in self.befores:
            point = by_prompt.setdefault(b.prompt, Checkpoint(b.prompt))
            point.files.append(b.path)
            if b.note:
                point.notes.append(f"{b.path}: {b.note}")
        for prompt, path in self.unrestorable:
            point = by_prompt.setdefault(prompt, Checkpoint(prompt))
            if not path:
                point.notes.append(f"the work tree was too big to scan: {BASH_UNKNOWN}")
                continue
            if path not in point.files:
                point.files.append(path)
            point.notes.append(f"{path}: {BASH_UNKNOWN}")
        return [by_prompt[p] for p in sorted(by_prompt)]

    def targets(self, prompt: int) -> dict[str, Before | None]:
        """For each file changed at or after ``prompt``: its earliest kept state (None: not kept)."""
        out: dict[str, Before | None] = {}
        for b in self.befores:
            if b.prompt >= prompt and b.path not in out:
                out[b.path] = b if not b.note else None
        for p, path in self.unrestorable:
            if p >= prompt and path and path not in out:
                out[path] = None
        return out

    def restore(self, prompt: int, overwrite: bool = False, dry_run: bool = False) -> Restore:
        """Put back every file changed at or after ``prompt`` as it was before. A file whose content
        is not what an agent left there (edited by hand since) is left alone unless ``overwrite``."""
        result = Restore()
        for path, before in self.targets(prompt).items():
            if before is None:
                result.not_kept.append(path)
                continue
            real = self.root / path
            if not self.inside(real):  # a folder on the way became a link out of the workspace since
                result.not_kept.append(path)
                continue
            current = _read(real)
            was = self._blob(before.blob) if before.blob is not None else None
            if current == was:
                continue  # already as it was
            if (
                path in self.after
                and (_sha(current) if current is not None else None) != self.after[path]
                and not overwrite
            ):
                result.changed_by_hand.append(path)
                continue
            result.restored.append(path)
            if dry_run:
                continue
            if before.blob is None:
                if current is not None or real.is_symlink():
                    real.unlink()
            else:
                from ..system.files import replace_in

                real.parent.mkdir(parents=True, exist_ok=True)
                folder = os.open(real.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
                try:  # through a temporary file in that folder and a rename: a link in its place is replaced
                    replace_in(folder, real.name, self._blob(before.blob), before.mode)
                finally:
                    os.close(folder)
            self._record({"kind": "after", "path": path, "blob": before.blob})
        return result

    def inside(self, real: Path) -> bool:
        """Whether ``real``'s folder still lies in the workspace, links followed."""
        try:
            return real.parent.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):
            return False

    def size(self) -> int:
        """Bytes of kept contents."""
        return self.stored_bytes

    # ------------------------------------------------------------ storage

    def _record(self, fact: dict[str, Any]) -> None:
        self._apply(fact)
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(self.folder / "index.jsonl", "a", encoding="utf-8") as index:
                index.write(json.dumps({"ts": time.time(), **fact}) + "\n")
                index.flush()

    def _apply(self, fact: dict[str, Any]) -> None:
        kind, path = fact.get("kind"), fact.get("path")
        if not isinstance(path, str):
            return
        if kind == "before":
            self.befores.append(
                Before(
                    int(fact.get("prompt") or 0), path, fact.get("blob"), fact.get("mode"), str(fact.get("note") or "")
                )
            )
        elif kind == "after":
            self.after[path] = fact.get("blob")
        elif kind == "unrestorable":
            self.unrestorable.append((int(fact.get("prompt") or 0), path))

    def _load(self) -> None:
        assert self.folder is not None
        try:
            lines = (self.folder / "index.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for line in lines:
            try:
                fact = json.loads(line)
            except ValueError:
                continue  # a torn last line
            if isinstance(fact, dict):
                self._apply(fact)
        self.stored_bytes = checkpoint_bytes(self.folder)

    def _keep_blob(self, data: bytes) -> str:
        sha = _sha(data)
        if self.folder is None:
            if sha not in self.memory:
                self.memory[sha] = data
                self.stored_bytes += len(data)
            return sha
        blob = self.folder / "blobs" / sha
        if not blob.exists():
            blob.parent.mkdir(parents=True, exist_ok=True)
            tmp = blob.with_suffix(".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, blob)
            self.stored_bytes += len(data)
        return sha

    def _blob(self, sha: str) -> bytes:
        if self.folder is None:
            return self.memory[sha]
        return (self.folder / "blobs" / sha).read_bytes()


# ---------------------------------------------------------------- around a bash call


@dataclass
class TreeScan:
    """Stat data of the work tree's files (tracked and untracked, not ignored), before a bash call."""

    stats: dict[str, tuple[int, int, int]]  # path -> (size, mtime_ns, inode)
    clean: set[str]  # tracked files whose content is the index's, so git can give it back
    repo: Any = None


def scan_tree(root: Path, clean_too: bool = True) -> TreeScan | None:
    """Stat every file of the work tree, and with ``clean_too`` find the tracked files git could give back;
    None when the tree is too big or cannot be listed. Blocking: two git processes, or one."""
    from ..system.files import is_temporary
    from ..system.git import UnsafeRepository, find_repository, run_git

    try:
        repo = find_repository(root)
    except UnsafeRepository:
        return None
    if repo is not None:
        code, out, _ = run_git(repo, "ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard")
        if code != 0:
            return None
        tagged = [entry for entry in out.split("\0") if len(entry) > 2]  # "H path"; "? path" is untracked
        names: list[str] | None = [entry[2:] for entry in tagged]
        tracked = {entry[2:] for entry in tagged if entry[0] != "?"}
        dirty: set[str] = set()
        if clean_too:
            code, status, _ = run_git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=no")
            if code != 0:
                return None
            dirty = {entry[3:] for entry in status.split("\0") if len(entry) > 3}
        base = repo.work_tree
        prefix = root.resolve().relative_to(base.resolve()).as_posix() if root.resolve() != base.resolve() else ""
    else:
        names, tracked, dirty, base, prefix = _walk(root), set(), set(), root, ""
    if names is None or len(names) > MAX_SCANNED_FILES:
        return None
    stats: dict[str, tuple[int, int, int]] = {}
    clean: set[str] = set()
    for name in names:
        if prefix and not name.startswith(prefix + "/"):
            continue
        relative = name[len(prefix) + 1 :] if prefix else name
        if is_temporary(name):  # another agent's write in flight
            continue
        try:
            info = os.lstat(base / name)
        except OSError:
            continue
        stats[relative] = (info.st_size, info.st_mtime_ns, info.st_ino)
        if clean_too and name in tracked and name not in dirty:
            clean.add(relative)
    return TreeScan(stats, clean, repo)


def _walk(root: Path) -> list[str] | None:
    names: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            names.append(os.path.relpath(os.path.join(folder, name), root))
        if len(names) > MAX_SCANNED_FILES:
            return None
    return names


def tree_changes(root: Path, before: TreeScan) -> dict[str, bytes | None | str]:
    """What a bash call changed since ``before``: each path with its earlier bytes when they can be had
    (a clean tracked file, from git), None for a new file, else ``"unknown"``. Blocking."""
    from ..system.git import run_git_bytes

    after = scan_tree(root, clean_too=False)
    if after is None:
        return {}
    changes: dict[str, bytes | None | str] = {}
    for path in sorted(set(before.stats) | set(after.stats)):
        old, new = before.stats.get(path), after.stats.get(path)
        if old == new:
            continue
        if old is None:
            changes[path] = None
        elif path in before.clean and before.repo is not None:
            prefix = root.resolve().relative_to(before.repo.work_tree.resolve()).as_posix()
            name = path if prefix in ("", ".") else f"{prefix}/{path}"
            code, blob, _ = run_git_bytes(before.repo, "cat-file", "blob", f":{name}")
            changes[path] = blob if code == 0 else "unknown"
        else:
            changes[path] = "unknown"
    return changes


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(real: Path) -> bytes | None:
    try:
        return real.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def checkpoint_bytes(folder: Path) -> int:
    """What the checkpoints in ``folder`` hold on disk."""
    return sum(entry.stat().st_size for entry in _blobs(folder))


def _blobs(folder: Path) -> Iterator[Path]:
    blobs = folder / "blobs"
    return blobs.iterdir() if blobs.is_dir() else iter(())
