"""Where agentcli keeps its data and reads its configuration."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def data_home() -> Path:
    """$AGENTCLI_HOME, else $XDG_DATA_HOME/agentcli, else ~/.local/share/agentcli."""
    if os.environ.get("AGENTCLI_HOME"):
        return Path(os.environ["AGENTCLI_HOME"]).expanduser()
    return _xdg("XDG_DATA_HOME", ".local/share")


def config_home() -> Path:
    """The user's config folder: $AGENTCLI_HOME/config when set, else $XDG_CONFIG_HOME/agentcli."""
    if os.environ.get("AGENTCLI_HOME"):
        return data_home() / "config"
    return _xdg("XDG_CONFIG_HOME", ".config")


def claude_home() -> Path:
    """Claude Code's own folder, whose settings.json and plugins agentcli reads as the user's: $CLAUDE_CONFIG_DIR,
    else ~/.claude."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()


def _xdg(variable: str, default: str) -> Path:
    return Path(os.environ.get(variable) or Path.home() / default) / "agentcli"


def all_homes() -> list[Path]:
    """Every folder that may hold agentcli's config or data: those in use and, as AGENTCLI_HOME or the XDG
    variables move them for this process only, the usual ones too (~/.config/agentcli, ~/.local/share/agentcli),
    where the user's other sessions keep their settings, rules and transcripts."""
    usual = [Path.home() / ".config" / "agentcli", Path.home() / ".local" / "share" / "agentcli"]
    return list(
        dict.fromkeys(
            [
                config_home(),
                data_home(),
                _xdg("XDG_CONFIG_HOME", ".config"),
                _xdg("XDG_DATA_HOME", ".local/share"),
                *usual,
            ]
        )
    )


def own_dirs() -> list[tuple[Path, str]]:
    """The folders whose files steer agentcli or git for the user, each with what it is called: its
    config (settings, trust answers, per-workspace rules, mcp.json, agent and command files), its data
    (sessions), Claude Code's folder (whose settings.json hooks and plugins run as the user's own) and git's
    own config folder. Unresolved: callers resolve them when they compare."""
    git = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "git"
    return [
        (config_home(), "agentcli's config folder"),
        (data_home(), "agentcli's data folder"),
        (claude_home(), "Claude Code's folder"),
        (git, "git's config folder"),
    ]


def user_config_file() -> Path:
    return config_home() / "config.toml"


def project_config_file(root: Path) -> Path:
    return root / ".agentcli" / "settings.toml"


def workspace_config_file(root: Path) -> Path:
    """Your own settings for one workspace, kept in your config folder: the rules you answered
    "Always" there. Being yours, they apply without the workspace's trust, and the repository's
    files (and its git status) stay as they were."""
    return config_home() / "workspaces" / f"{project_slug(root)}.toml"


def project_slug(root: Path) -> str:
    """A folder name for a workspace: the path made readable, plus a short hash of the path.

    /home/me/src/app → home-me-src-app-1f3a9c2e. The hash keeps apart paths that read alike
    (/x/a-b and /x/a/b); a long path keeps its last part, the one that tells workspaces apart.
    """
    resolved = str(root.resolve())
    digest = hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{legacy_project_slug(root)[-80:].lstrip('-')}-{digest}"


def legacy_project_slug(root: Path) -> str:
    """The folder name sessions were saved under before the hash (shared by paths that read alike)."""
    text = str(root.resolve()).strip("/\\").replace(":", "")
    slug = "".join(c if c.isalnum() or c in "._" else "-" for c in text)
    return slug or "root"
