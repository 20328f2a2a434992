"""The checks of setting values that are more than a type: ``[agents.<type>]`` tables and the ``statusLine``
table, text and true/false values, each wrong value one sentence (``ConfigError``) that names the file and key.
config.py reads the files and applies these."""

from __future__ import annotations

from typing import Any

from .core.policy.hooks import WORKSPACE_MARK

AGENT_TYPE_SETTINGS = ("model",)  # what [agents.<type>] may set; Subagents reads them per type


class ConfigError(Exception):
    """A setting a user wrote is wrong; the message says which and why."""


def agent_tables(value: Any, source: str) -> dict[str, dict[str, str]]:
    """``[agents.<type>]`` tables, checked: each a table of known settings with text values."""
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: 'agents' must be a table of agent types, such as [agents.explore].")
    tables: dict[str, dict[str, str]] = {}
    for name, table in value.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{source}: 'agents.{name}' must be a table, such as "
                              f"[agents.{name}] with model = \"claude-haiku-4-5\", not {table!r}.")
        for setting, text in table.items():
            if setting not in AGENT_TYPE_SETTINGS:
                raise ConfigError(f"{source}: unknown setting 'agents.{name}.{setting}' "
                                  f"(known: {', '.join(AGENT_TYPE_SETTINGS)}).")
            as_text(text, f"agents.{name}.{setting}", source)
        tables[name] = dict(table)
    return tables


def status_line(value: Any, source: str) -> dict[str, Any]:
    """A ``statusLine`` table, checked: a command (``type`` "command", the only kind Claude Code has), a
    ``padding`` of zero or more columns, and a ``timeout`` in seconds (agentcli's; 5 by default)."""
    if not isinstance(value, dict) or value.get("type", "command") != "command":
        raise ConfigError(f"{source}: 'statusLine' must be a table such as {{\"type\": \"command\", "
                          f"\"command\": \"~/.claude/statusline.sh\"}}, not {value!r}.")
    unknown = sorted(set(value) - {"type", "command", "padding", "timeout", WORKSPACE_MARK})
    if unknown:
        raise ConfigError(f"{source}: unknown setting 'statusLine.{unknown[0]}' (known: type, command, padding, "
                          "timeout).")
    as_text(value.get("command"), "statusLine.command", source)
    for name, kind in (("padding", int), ("timeout", float)):
        number = value.get(name, 1)
        if isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0 \
                or (kind is int and number != int(number)) or (name == "timeout" and number == 0):
            raise ConfigError(f"{source}: 'statusLine.{name}' must be "
                              f"{'a number of columns, 0 or more' if name == 'padding' else 'a positive number of seconds'}"
                              f", not {number!r}.")
    return {"type": "command", **value}


def as_text(value: Any, key: str, source: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{source}: '{key}' must be a string, not {value!r}.")
    if not value.strip():
        raise ConfigError(f"{source}: '{key}' must not be empty.")
    return value


def as_bool(value: Any, key: str, source: str) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("1", "true", "yes", "on"):
        return True
    if str(value).lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{source}: '{key}' must be true or false, not {value!r}.")
