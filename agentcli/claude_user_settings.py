"""The user's own Claude Code settings (``~/.claude/settings.json``, ``$CLAUDE_CONFIG_DIR/settings.json`` when that
is set): its hooks, permission rules, ``defaultMode`` and status line apply as the user's own agentcli settings
do, so a Claude Code user's hooks work unchanged. The file is the user's, so nothing in it needs trust; it
was written for Claude Code, so what agentcli cannot use (a hook event or type it does not have, a rule it
cannot read, a file that is not JSON) is left out with one notice rather than stopping agentcli.
It loads with the ``user`` setting source, before agentcli's own ``config.toml``, which may add to it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Settings


def add_claude_user_settings(settings: "Settings", path: Path) -> None:
    """Merge what agentcli understands of the user's Claude Code settings file at ``path`` into ``settings``."""
    from .config import ConfigError, from_claude_settings
    from .core.policy.hooks import EVENTS

    shown = str(path).replace(str(Path.home()), "~", 1)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    except (OSError, ValueError) as exc:
        settings.notices.append(f"Skipped {shown}: it is not a readable JSON file ({exc}).")
        return
    values = from_claude_settings(data)
    skipped: list[str] = []
    parts: list[dict[str, Any]] = []
    for key, value in values.items():
        if key == "hooks" and isinstance(value, dict):
            skipped += [f"{event} hooks (an event agentcli does not have)" for event in value if event not in EVENTS]
            parts += [{"hooks": {event: [group]}} for event, groups in value.items() if event in EVENTS
                      for group in (groups if isinstance(groups, list) else [groups])]
        elif key == "permissions" and isinstance(value, dict):
            parts += [{"permissions": {name: [rule]}} for name, rules in value.items()
                      for rule in (rules if isinstance(rules, list) else [rules])]
        else:
            parts.append({key: value})
    for part in parts:
        try:
            settings.merge(part, shown)
        except ConfigError as exc:
            skipped.append(str(exc).removeprefix(f"{shown}: ").rstrip("."))
    if shown in settings.sources:  # read once, whatever number of parts it came in
        settings.sources = [*(s for s in settings.sources if s != shown), shown]
    if skipped:
        settings.notices.append(f"Left out of {shown}, which agentcli cannot use: {'; '.join(skipped)}.")
