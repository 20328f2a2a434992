"""Settings: defaults < user TOML < project TOML < environment < command-line flags."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paths
from .core import secret_env
from .core.llm import DEFAULT_MODEL, resolve_model
from .core.permissions import MODES
from .core.rules import RuleError, merge_lists


MAY_BE_ZERO = {"api_retries"}  # numbers that may be 0; every other number must be positive
FRACTIONS = {"compact_threshold"}  # numbers between 0 and 1
AGENT_TYPE_SETTINGS = ("model",)  # what [agents.<type>] may set; Subagents reads them per type
USER_ONLY_SETTINGS = ("api_key_helper",)  # they start a process: a workspace's own files cannot set them


class ConfigError(Exception):
    """A setting a user wrote is wrong; the message says which and why."""


@dataclass
class Settings:
    model: str = DEFAULT_MODEL
    max_tokens: int = 16_000
    permission_mode: str = "default"
    max_turns: int = 200  # main agent, per user message
    subagent_max_turns: int = 30
    subagent_timeout: float = 900.0  # seconds
    max_parallel_subagents: int = 3
    api_retries: int = 8  # retries of overloaded, failing or broken model calls
    stall_timeout: float = 60.0  # seconds without stream data before a call counts as dead
    compact_threshold: float = 0.85  # compact the context when it is this full
    keep_secret_env: bool = False  # pass *KEY*/*TOKEN*/*SECRET* variables to bash
    search_timeout: float = 60.0  # seconds before grep or glob stops and returns what it found
    output_copy_max_mb: float = 64.0  # cap of one full copy of a long tool output
    output_session_max_mb: float = 512.0  # cap of all full-output copies of a session
    theme: str = "agentcli"
    api_key_helper: str = ""  # a command printing the API key, run once at startup (user config only)
    # Per agent type overrides, e.g. {"explore": {"model": "claude-haiku-4-5"}}.
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Permission rules, e.g. {"allow": ["bash(npm test *)"], "deny": [...]}.
    permissions: dict[str, list[str]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # files that were read

    def merge(self, values: dict[str, Any], source: str) -> None:
        known = {f.name: f for f in dataclasses.fields(self) if f.name != "sources"}
        for key, value in values.items():
            key = key.replace("-", "_")
            if key not in known:
                raise ConfigError(f"{source}: unknown setting '{key}'.")
            current = getattr(self, key)
            if key == "permissions":  # rule lists add up across files
                try:
                    value = merge_lists(current, value)
                except RuleError as exc:
                    raise ConfigError(f"{source}: {exc}") from None
            elif key == "agents":
                value = {**current, **_agent_tables(value, source)}
            elif isinstance(current, bool):
                value = _as_bool(value, key, source)
            elif isinstance(current, str):
                value = _as_text(value, key, source)
            elif isinstance(current, (int, float)):
                if isinstance(value, bool):  # int(True) would pass as 1
                    raise ConfigError(f"{source}: '{key}' must be a number, not {value!r}.")
                try:
                    value = type(current)(value)
                except (TypeError, ValueError):
                    raise ConfigError(f"{source}: '{key}' must be a number, not {value!r}.") from None
                if value < 0 or (value == 0 and key not in MAY_BE_ZERO):
                    raise ConfigError(f"{source}: '{key}' must be positive, not {value}.")
                if key in FRACTIONS and value > 1:
                    raise ConfigError(f"{source}: '{key}' is a share of the context window, at most 1, not {value}.")
            setattr(self, key, value)
        if self.permission_mode not in MODES:
            raise ConfigError(f"{source}: permission mode must be one of {', '.join(MODES)}, "
                              f"not {self.permission_mode!r}.")
        self.sources.append(source)


def _agent_tables(value: Any, source: str) -> dict[str, dict[str, str]]:
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
            _as_text(text, f"agents.{name}.{setting}", source)
        tables[name] = dict(table)
    return tables


def _as_text(value: Any, key: str, source: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{source}: '{key}' must be a string, not {value!r}.")
    if not value.strip():
        raise ConfigError(f"{source}: '{key}' must not be empty.")
    return value


def _as_bool(value: Any, key: str, source: str) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("1", "true", "yes", "on"):
        return True
    if str(value).lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{source}: '{key}' must be true or false, not {value!r}.")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}.") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from None


ENV_SETTINGS = {
    "ANTHROPIC_MODEL": "model",
    "AGENTCLI_MODEL": "model",
    "AGENTCLI_PERMISSION_MODE": "permission_mode",
    "AGENTCLI_SUBAGENT_MAX_TURNS": "subagent_max_turns",
    "AGENTCLI_API_RETRIES": "api_retries",
    "AGENTCLI_API_KEY_HELPER": "api_key_helper",
}


def load_settings(root: Path, flags: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> Settings:
    settings = Settings()
    user_file = paths.user_config_file()
    for path in (user_file, paths.project_config_file(root)):
        values = _read_toml(path)
        if path != user_file:
            values = {k: v for k, v in values.items() if k.replace("-", "_") not in USER_ONLY_SETTINGS}
        if values:
            settings.merge(values, str(path))
    env = secret_env.environ() if env is None else env  # AGENTCLI_API_KEY_HELPER is held as a secret
    from_env = {key: env[name] for name, key in ENV_SETTINGS.items() if env.get(name)}
    if from_env:
        settings.merge(from_env, "environment")
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    if given:
        settings.merge(given, "command line")
    settings.model = resolve_model(settings.model)
    return settings
