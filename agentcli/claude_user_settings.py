"""The user's own Claude Code settings (``~/.claude/settings.json``, ``$CLAUDE_CONFIG_DIR/settings.json`` when that
is set): its hooks, permission rules, ``defaultMode`` and status line apply as the user's own agentcli settings
do, so a Claude Code user's hooks work unchanged. The file is the user's, so nothing in it needs trust; it
was written for Claude Code, so what agentcli cannot use (a hook event or type it does not have, a rule it
cannot read, a file that is not JSON) is left out with one notice rather than stopping agentcli.
``config.load_settings`` merges it with the ``user`` setting source, before agentcli's own ``config.toml``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core.policy.hooks import EVENTS


def shown(path: Path) -> str:
    """The file as the notices name it: under ~ when it is."""
    return str(path).replace(str(Path.home()), "~", 1)


def user_setting_parts(path: Path, convert: Callable[[Any], dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The file's settings (``convert``: ``config.from_claude_settings``) in small parts, one hook group or one
    rule each, so that one agentcli cannot use is left out alone; and what was left out already, one phrase each."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], []
    except (OSError, ValueError) as exc:
        return [], [f"all of it: it is not a readable JSON file ({exc})"]
    skipped: list[str] = []
    parts: list[dict[str, Any]] = []
    for key, value in convert(data).items():
        if key == "hooks" and isinstance(value, dict):
            skipped += [f"{event} hooks (an event agentcli does not have)" for event in value if event not in EVENTS]
            parts += [
                {"hooks": {event: [group]}}
                for event, groups in value.items()
                if event in EVENTS
                for group in (groups if isinstance(groups, list) else [groups])
            ]
        elif key == "permissions" and isinstance(value, dict):
            parts += [
                {"permissions": {name: [rule]}}
                for name, rules in value.items()
                for rule in (rules if isinstance(rules, list) else [rules])
            ]
        else:
            parts.append({key: value})
    return parts, skipped
