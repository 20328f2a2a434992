"""The workspace: the root directory the agent works in, path confinement, and file bookkeeping.

Every path a tool touches is resolved with symlinks followed and must lie inside the root;
``resolve`` raises ``OutsideWorkspace`` otherwise. Only the permission layer lets a single,
approved tool call past that (see ``Permissions.permits_outside``).

One Workspace serves one session, so it also carries the session's ``FileLedger``: what each
agent last saw of each file, and one lock per file for read-modify-write.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path


def display_path(path: Path, root: Path | None) -> str:
    """A file's path as the user knows it: relative to the workspace, or with ~ for the home folder."""
    if root is not None:
        try:
            return str(path.relative_to(root))
        except ValueError:
            pass
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


class OutsideWorkspace(Exception):
    """A path resolves (symlinks included) to a place outside the workspace root."""

    def __init__(self, path: str, resolved: Path, root: Path) -> None:
        super().__init__(f"{path} resolves to {resolved}, which is outside the workspace {root}.")
        self.path = path
        self.resolved = resolved


class FileLedger:
    """Per file: a lock shared by every agent of the session, and what each agent last saw of it.

    A "seen" entry is a digest of the file's bytes at the agent's last read_file or own write;
    edits compare it with the file as it is now, so nobody overwrites changes they never saw.
    """

    def __init__(self) -> None:
        self._locks: dict[Path, tuple[asyncio.Lock, int]] = {}  # lock and how many callers hold or wait
        self._seen: dict[tuple[str, Path], bytes] = {}

    @contextlib.asynccontextmanager
    async def lock(self, path: Path) -> AsyncIterator[None]:
        """Hold ``path`` for one read-modify-write; other agents' writes to it wait."""
        lock, users = self._locks.get(path) or (asyncio.Lock(), 0)
        self._locks[path] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[path]
            if users == 1:
                del self._locks[path]  # unused locks go, so none outlives its event loop
            else:
                self._locks[path] = (lock, users - 1)

    def saw(self, agent_id: str, path: Path, digest: bytes) -> None:
        self._seen[(agent_id, path)] = digest

    def seen(self, agent_id: str, path: Path) -> bytes | None:
        return self._seen.get((agent_id, path))


@dataclass(frozen=True)
class Workspace:
    """The folder the tools work in (and the ones --add-dir adds), with the ledger of the files they read."""

    root: Path
    files: FileLedger = field(default_factory=FileLedger, compare=False, repr=False)
    extra_dirs: tuple[Path, ...] = ()  # more folders the tools may use (--add-dir), resolved, confined alike
    branch: str = ""  # an isolated child's: the one branch of the main repository its commands may move

    @classmethod
    def at(cls, root: str | os.PathLike[str], extra_dirs: tuple[Path, ...] = (), branch: str = "") -> Workspace:
        return cls(Path(root).resolve(), extra_dirs=tuple(Path(d).resolve() for d in extra_dirs), branch=branch)

    def resolve(self, path: str) -> Path:
        """The real location of ``path`` (relative to the root, or absolute), symlinks resolved.

        Raises OutsideWorkspace when it lies outside the root.
        """
        resolved = self.locate(path)
        if not self.contains(resolved):
            raise OutsideWorkspace(path, resolved, self.root)
        return resolved

    def locate(self, path: str) -> Path:
        """Like resolve(), without the confinement check."""
        return self._absolute(path).resolve()

    def lexical(self, path: str) -> Path:
        """Where ``path`` points before symlinks are followed: absolute, with ``..`` and ``.`` folded."""
        return Path(os.path.normpath(self._absolute(path)))

    def _absolute(self, path: str) -> Path:
        p = Path(os.path.expanduser(path)) if path.startswith("~") else Path(path)
        return p if p.is_absolute() else self.root / p

    def contains(self, resolved: Path) -> bool:
        return self.base_of(resolved) is not None

    def base_of(self, resolved: Path) -> Path | None:
        """The root or added folder that holds ``resolved``; None when it lies outside them all."""
        return next(
            (base for base in (self.root, *self.extra_dirs) if resolved == base or base in resolved.parents), None
        )

    def relative(self, path: Path) -> str:
        """A path as the user would write it: relative to the root where possible."""
        try:
            return str(path.relative_to(self.root)) or "."
        except ValueError:
            return str(path)
