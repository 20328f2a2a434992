"""Folders agentcli makes for a session that must not outlive it (the sandbox's private ``/tmp``, the host proxy's
socket folder): each is removed when what made it closes, and whatever is left is removed at exit, whatever happened."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

_made: list[Path] = []  # still to remove


def make(prefix: str) -> Path:
    """A new private folder (mode 0700), removed at exit unless ``remove`` came first."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    _made.append(folder)
    return folder


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    if folder in _made:
        _made.remove(folder)


@atexit.register
def _remove_all() -> None:
    for folder in list(_made):
        shutil.rmtree(folder, ignore_errors=True)
