"""The settings files of a workspace and what each says, read: agentcli's own TOML files, and the part of Claude
Code's ``.claude/settings.json`` and ``.claude/settings.local.json`` agentcli understands, as agentcli settings.
Which of them load is the setting sources' choice (``SETTING_SOURCES``, ``SOURCE_OF``); config.py merges what they
say, and decides what a project file may widen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import paths
from .config_values import ConfigError
from .core.vocabulary import LISTS, MODES

SETTING_SOURCES = ("user", "project", "local")  # Claude Code's setting sources (SOURCE_OF: which files are which)


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML settings file's table ({} when there is no such file); one sentence when it cannot be read. The TOML
    parser loads with the first file there is (its import and patterns, about 1 ms, were part of every launch)."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from None
    import tomllib

    try:
        with f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}.") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from None


CLAUDE_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
SOURCE_OF = {
    ".claude/settings.json": "project",
    ".claude/settings.local.json": "local",  # a workspace file's source
    ".agentcli/settings.toml": "project",
}


def _read_claude(path: Path) -> dict[str, Any]:
    """What agentcli understands of a Claude Code settings file, as agentcli settings: the
    ``permissions`` allow/ask/deny rules, ``defaultMode`` when it names an agentcli mode, ``hooks`` and
    ``statusLine``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}.") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from None
    return from_claude_settings(data)


def from_claude_settings(data: Any) -> dict[str, Any]:
    """Claude Code settings (a parsed settings.json) as agentcli settings: the ``permissions``
    allow/ask/deny rules, ``defaultMode`` when it names an agentcli mode, ``hooks`` and ``statusLine``."""
    values: dict[str, Any] = {}
    if isinstance(data, dict) and data.get("hooks"):
        values["hooks"] = data["hooks"]
    if isinstance(data, dict) and data.get("statusLine"):
        values["status_line"] = data["statusLine"]
    table = data.get("permissions") if isinstance(data, dict) else None
    if not isinstance(table, dict):
        return values
    if table.get("defaultMode") in MODES:  # Claude Code's other modes mean nothing here
        values["permission_mode"] = table["defaultMode"]
    lists = {name: table[name] for name in LISTS if name in table}
    if lists:
        values["permissions"] = lists
    return values


def project_files(
    root: Path, sources: tuple[str, ...] | list[str] = SETTING_SOURCES
) -> list[tuple[Path, dict[str, Any]]]:
    """The workspace's settings files of ``sources`` that say something, weakest first, each with its settings."""
    found = [(root / name, _read_claude(root / name)) for name in CLAUDE_SETTINGS if SOURCE_OF[name] in sources]
    if SOURCE_OF[".agentcli/settings.toml"] in sources:
        found.append((paths.project_config_file(root), read_toml(paths.project_config_file(root))))
    return [(path, values) for path, values in found if values]
