"""Where agentcli keeps its data and reads its configuration."""

from __future__ import annotations

import os
from pathlib import Path


def data_home() -> Path:
    """$AGENTCLI_HOME, else $XDG_DATA_HOME/agentcli, else ~/.local/share/agentcli."""
    if os.environ.get("AGENTCLI_HOME"):
        return Path(os.environ["AGENTCLI_HOME"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "agentcli"


def config_home() -> Path:
    """The user's config folder: $AGENTCLI_HOME/config when set, else $XDG_CONFIG_HOME/agentcli."""
    if os.environ.get("AGENTCLI_HOME"):
        return data_home() / "config"
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "agentcli"


def user_config_file() -> Path:
    return config_home() / "config.toml"


def project_config_file(root: Path) -> Path:
    return root / ".agentcli" / "settings.toml"


def project_slug(root: Path) -> str:
    """A folder name for a workspace path: /home/me/src/app → home-me-src-app."""
    text = str(root.resolve()).strip("/\\").replace(":", "")
    slug = "".join(c if c.isalnum() or c in "._" else "-" for c in text)
    return slug or "root"
