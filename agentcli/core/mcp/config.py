"""MCP server configuration, in Claude Code's format.

```json
{"mcpServers": {
  "files": {"command": "npx", "args": ["-y", "some-server"], "env": {"LEVEL": "debug"}},
  "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
}}
```

Three places name servers, weakest first: the workspace's ``.mcp.json`` (the repository's: its
servers start only in a trusted workspace, ``agentcli/trust.py``), the user's ``mcp.json`` in the
config folder, and ``--mcp-config FILE_OR_JSON``. A later place wins for a name given twice.
``${VAR}`` and ``${VAR:-default}`` in the command, args, env, url and headers are filled in from
the user's environment when the server starts, so the trust question shows them as written.

Only the standard library is imported here: this runs on every start.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

PROJECT_FILE = ".mcp.json"
NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")  # what a tool name mcp__<server>__<tool> may hold
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")  # ${VAR} or ${VAR:-default}
Transport = Literal["stdio", "http", "sse", "sdk"]
TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
    "sdk": "sdk",
}
# type "sdk": a server inside the program that drives agentcli (the Agent SDK's create_sdk_mcp_server),
# reached through its control protocol on standard input and output (ui/stream_input.py).


PREFIX = "mcp__"


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, in the characters (and the 64 of them) the API allows."""
    return f"{PREFIX}{server}__{re.sub(r'[^A-Za-z0-9_-]', '_', tool)}"[:64]


class McpConfigError(ValueError):
    """A server definition cannot be used; the message names the file and says why."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: Transport
    source: str  # the file, or "--mcp-config"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    project: bool = False  # from the workspace's .mcp.json or a plugin: runs in the OS sandbox (and needs trust)
    plugin_root: str = ""  # a plugin's server: its folder, readable in the sandbox (engine/plugins.py)

    def describe(self, values: bool = False) -> str:
        """What starts, on one line, as written in the file. ``values``: with the env and header
        values too (the trust question: they may pass on ``${ANTHROPIC_API_KEY}``); else only their
        names (/mcp: your own file may hold a token)."""

        def pairs(items: tuple[tuple[str, str], ...]) -> str:
            return ", ".join(f"{k}={v!r}" if values else f"{k}=…" for k, v in items)

        if self.transport == "sdk":
            return "runs inside the program driving agentcli (Agent SDK)"
        if self.transport == "stdio":
            shown = " ".join([self.command, *self.args])
            return f"runs `{shown}`" + (f" with env {pairs(self.env)}" if self.env else "")
        return f"connects to {self.url} ({self.transport})" + (
            f" with headers {pairs(self.headers)}" if self.headers else ""
        )

    def expanded(self, environ: Mapping[str, str]) -> ServerConfig:
        """The config with ``${VAR}`` filled in; McpConfigError names a variable that is not set."""

        def fill(text: str) -> str:
            def one(match: re.Match[str]) -> str:
                value = environ.get(match.group(1))
                if value is None and match.group(2) is None:
                    raise McpConfigError(f"${{{match.group(1)}}} is not set")
                return value if value is not None else match.group(2)

            return VARIABLE.sub(one, text)

        return ServerConfig(
            self.name,
            self.transport,
            self.source,
            fill(self.command),
            tuple(map(fill, self.args)),
            tuple((k, fill(v)) for k, v in self.env),
            fill(self.url),
            tuple((k, fill(v)) for k, v in self.headers),
            self.project,
            self.plugin_root,
        )


def parse(data: Any, source: str, *, project: bool = False) -> dict[str, ServerConfig]:
    """The servers of one configuration (``{"mcpServers": {...}}``), checked."""
    if not isinstance(data, dict):
        raise McpConfigError(f'{source}: expected a JSON object with "mcpServers".')
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(f'{source}: "mcpServers" must be an object of servers by name.')
    return {name: _server(name, spec, source, project) for name, spec in servers.items()}


def _server(name: str, spec: Any, source: str, project: bool) -> ServerConfig:
    where = f"{source}: MCP server {name!r}"
    if not NAME.fullmatch(name):
        raise McpConfigError(f"{where}: a server name may hold only letters, digits, '_' and '-' (at most 40).")
    if not isinstance(spec, dict):
        raise McpConfigError(f"{where} must be an object with a command or a url.")
    kind = spec.get("type", "stdio" if "command" in spec or "url" not in spec else "http")
    transport = TRANSPORTS.get(kind) if isinstance(kind, str) else None
    if transport is None:
        raise McpConfigError(f"{where}: unknown type {kind!r}; use stdio, http or sse.")
    if transport == "sdk":
        return ServerConfig(name, transport, source, project=project)
    if transport == "stdio":
        command = spec.get("command")
        if not isinstance(command, str) or not command.strip():
            raise McpConfigError(f'{where}: a stdio server needs a "command".')
        return ServerConfig(
            name,
            transport,
            source,
            command=command,
            args=_strings(spec.get("args", []), where),
            env=_table(spec.get("env", {}), where, "env"),
            project=project,
        )
    url = spec.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise McpConfigError(f'{where}: an {transport} server needs a "url" starting with http:// or https://.')
    return ServerConfig(
        name, transport, source, url=url, headers=_table(spec.get("headers", {}), where, "headers"), project=project
    )


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise McpConfigError(f'{where}: "args" must be a list of strings.')
    return tuple(value)


def _table(value: Any, where: str, key: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f'{where}: "{key}" must be an object of strings.')
    return tuple(value.items())


def read_file(path: Path, *, project: bool = False) -> dict[str, ServerConfig]:
    """The servers a file names; {} when there is no such file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise McpConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise McpConfigError(f"{path} is not valid JSON: {exc}.") from None
    return parse(data, str(path), project=project)


def from_flag(value: str) -> dict[str, ServerConfig]:
    """``--mcp-config``: inline JSON when it looks like an object, else a file."""
    if value.lstrip().startswith("{"):
        try:
            data = json.loads(value)
        except ValueError as exc:
            raise McpConfigError(f"--mcp-config: the inline JSON is not valid: {exc}.") from None
        return parse(data, "--mcp-config")
    path = Path(value).expanduser()
    if not path.is_file():
        raise McpConfigError(f"--mcp-config: {value} is neither a file nor a JSON object.")
    return read_file(path)


def project_servers(root: Path) -> dict[str, ServerConfig]:
    return read_file(root / PROJECT_FILE, project=True)


def user_file() -> Path:
    from ... import paths

    return paths.config_home() / "mcp.json"


@dataclass
class Configured:
    servers: dict[str, ServerConfig] = field(default_factory=dict)  # what may start
    untrusted: dict[str, ServerConfig] = field(default_factory=dict)  # the project's, held back


def load(root: Path, flags: list[str] | tuple[str, ...] = (), *, trusted: bool) -> Configured:
    """Every configured server; the project's only when ``trusted``. Raises McpConfigError."""
    project = project_servers(root)
    own: dict[str, ServerConfig] = dict(read_file(user_file()))
    for value in flags:
        own.update(from_flag(value))
    if trusted:
        return Configured({**project, **own})
    return Configured(own, {name: server for name, server in project.items() if name not in own})


def trust_asks(root: Path) -> list[tuple[Path, list[str], Any]]:
    """For the trust check: the workspace's .mcp.json, what it would start, and the content itself."""
    servers = project_servers(root)
    if not servers:
        return []
    try:
        content = json.loads((root / PROJECT_FILE).read_text(encoding="utf-8")).get("mcpServers")
    except (OSError, ValueError, AttributeError):
        content = None
    asks = [f"MCP server {s.name}: {s.describe(values=True)}" for s in servers.values()]
    return [(root / PROJECT_FILE, asks, content)]
