"""The workspace: the root directory the agent works in, and path confinement.

Every path a tool touches is resolved with symlinks followed and must lie inside the root;
``resolve`` raises ``OutsideWorkspace`` otherwise. Only the permission layer lets a single,
approved tool call past that (see ``Permissions.permits_outside``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


class OutsideWorkspace(Exception):
    """A path resolves (symlinks included) to a place outside the workspace root."""

    def __init__(self, path: str, resolved: Path, root: Path) -> None:
        super().__init__(f"{path} resolves to {resolved}, which is outside the workspace {root}.")
        self.path = path
        self.resolved = resolved


@dataclass(frozen=True)
class Workspace:
    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> "Workspace":
        return cls(Path(root).resolve())

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
        return resolved == self.root or self.root in resolved.parents

    def relative(self, path: Path) -> str:
        """A path as the user would write it: relative to the root where possible."""
        try:
            return str(path.relative_to(self.root)) or "."
        except ValueError:
            return str(path)
