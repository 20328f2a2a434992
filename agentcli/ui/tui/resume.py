"""Opening the session the app works on: a new one, or one resumed with --resume / --continue."""

from __future__ import annotations

from pathlib import Path

from ...config import Settings
from ...core.session import Session
from ...core.workspace import Workspace


def open_session(settings: Settings, root: Path, *, resume: str | None = None, continue_: bool = False) -> Session:
    return Session(settings, Workspace.at(root), lambda event: None, interactive=True)
