"""The checks of setting values that are more than a type: ``[agents.<type>]`` tables and the ``statusLine``
table, text and true/false values, each wrong value one sentence (``ConfigError``) that names the file and key;
``checked`` applies the right one to a setting's new value. config.py reads the files and merges what these return."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .core.policy.hooks import WORKSPACE_MARK, HookConfigError, parse_hooks

# The checks of permission rules and language servers load when a file sets them (core/policy/rules.py with the
# bash parser it needs, core/lsp/specs.py): about 5 ms of imports before the TUI's first screen otherwise.

AGENT_TYPE_SETTINGS = ("model",)  # what [agents.<type>] may set; Subagents reads them per type
WEB_SEARCH = {
    True: "true",
    False: "false",
    "auto": "auto",
    "true": "true",
    "false": "false",
}  # core/tools/web_search.py


class ConfigError(Exception):
    """A setting a user wrote is wrong; the message says which and why."""


def agent_tables(value: Any, source: str) -> dict[str, dict[str, str]]:
    """``[agents.<type>]`` tables, checked: each a table of known settings with text values."""
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: 'agents' must be a table of agent types, such as [agents.explore].")
    tables: dict[str, dict[str, str]] = {}
    for name, table in value.items():
        if not isinstance(table, dict):
            raise ConfigError(
                f"{source}: 'agents.{name}' must be a table, such as "
                f'[agents.{name}] with model = "claude-haiku-4-5", not {table!r}.'
            )
        for setting, text in table.items():
            if setting not in AGENT_TYPE_SETTINGS:
                raise ConfigError(
                    f"{source}: unknown setting 'agents.{name}.{setting}' (known: {', '.join(AGENT_TYPE_SETTINGS)})."
                )
            as_text(text, f"agents.{name}.{setting}", source)
        tables[name] = dict(table)
    return tables


def status_line(value: Any, source: str) -> dict[str, Any]:
    """A ``statusLine`` table, checked: a command (``type`` "command", the only kind Claude Code has), a
    ``padding`` of zero or more columns, and a ``timeout`` in seconds (agentcli's; 5 by default)."""
    if not isinstance(value, dict) or value.get("type", "command") != "command":
        raise ConfigError(
            f'{source}: \'statusLine\' must be a table such as {{"type": "command", '
            f'"command": "~/.claude/statusline.sh"}}, not {value!r}.'
        )
    unknown = sorted(set(value) - {"type", "command", "padding", "timeout", WORKSPACE_MARK})
    if unknown:
        raise ConfigError(
            f"{source}: unknown setting 'statusLine.{unknown[0]}' (known: type, command, padding, timeout)."
        )
    as_text(value.get("command"), "statusLine.command", source)
    for name, kind in (("padding", int), ("timeout", float)):
        number = value.get(name, 1)
        if (
            isinstance(number, bool)
            or not isinstance(number, (int, float))
            or number < 0
            or (kind is int and number != int(number))
            or (name == "timeout" and number == 0)
        ):
            raise ConfigError(
                f"{source}: 'statusLine.{name}' must be "
                f"{'a number of columns, 0 or more' if name == 'padding' else 'a positive number of seconds'}"
                f", not {number!r}."
            )
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


def checked(key: str, value: Any, current: Any, source: str, meta: Mapping[str, Any]) -> Any:
    """The value a file gives the setting ``key`` (whose value so far is ``current`` and whose declaration's
    metadata is ``meta``), checked as the setting's kind asks: rule lists, hooks, agent tables and language servers
    add up across files, and a switch, a text or a number is read as the type of its default."""
    if key == "permissions":  # rule lists add up across files
        from .core.policy.rules import RuleError, merge_lists

        try:
            value = merge_lists(current, value)
        except RuleError as exc:
            raise ConfigError(f"{source}: {exc}") from None
    elif key == "hooks":  # hooks add up across files, event by event
        try:
            parse_hooks(value, source)
        except HookConfigError as exc:
            raise ConfigError(f"{exc}.") from None
        value = {**current, **{event: [*current.get(event, []), *groups] for event, groups in value.items()}}
    elif key == "agents":
        value = {**current, **agent_tables(value, source)}
    elif key == "status_line":
        value = status_line(value, source)
    elif key == "task_models":
        if not isinstance(value, list) or not all(isinstance(m, str) and m.strip() for m in value):
            raise ConfigError(
                f'{source}: \'task_models\' must be a list of models, such as ["haiku", "sonnet"], not {value!r}.'
            )
        value = [m.strip() for m in value]
    elif key == "lsp":  # servers add up across files, by name
        from .core.lsp.specs import LspConfigError
        from .core.lsp.specs import parse_setting as parse_lsp

        try:
            parse_lsp(value, source)
        except LspConfigError as exc:
            raise ConfigError(str(exc)) from None
        value = {**current, **value}
    elif key == "sandbox_allowed_hosts":
        if not isinstance(value, list) or not all(isinstance(h, str) and h.strip() for h in value):
            raise ConfigError(f"{source}: '{key}' must be a list of host names, not {value!r}.")
        value = list(dict.fromkeys([*current, *value]))
    elif key == "web_search":  # true, false or "auto", kept as text
        if isinstance(value, (bool, str)) and value in WEB_SEARCH:
            value = WEB_SEARCH[value]
        else:
            raise ConfigError(f'{source}: web_search must be true, false or "auto", not {value!r}.')
    elif isinstance(current, bool):
        value = as_bool(value, key, source)
    elif isinstance(current, str):
        value = as_text(value, key, source)
    elif isinstance(current, (int, float)):
        if isinstance(value, bool):  # int(True) would pass as 1
            raise ConfigError(f"{source}: '{key}' must be a number, not {value!r}.")
        try:
            value = type(current)(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{source}: '{key}' must be a number, not {value!r}.") from None
        if value < 0 or (value == 0 and not meta["may_be_zero"]):
            raise ConfigError(f"{source}: '{key}' must be positive, not {value}.")
        if meta["fraction"] and value > 1:
            raise ConfigError(f"{source}: '{key}' is a share of the context window, at most 1, not {value}.")
        if key == "compact_threshold":
            from .core.engine.compaction import MIN_THRESHOLD, RECENT_SHARE  # only here: it loads the model client

            if value < MIN_THRESHOLD:
                raise ConfigError(
                    f"{source}: 'compact_threshold' must be at least {MIN_THRESHOLD:g}, not {value}: "
                    f"a compaction keeps the latest turns (up to {RECENT_SHARE:.0%} of the window) "
                    "whole, so below that it cannot free enough."
                )
    return value
