"""Read-only views of a session's parts, for front ends: what they may read of the MCP servers, the tools and the
session's file, as Protocols the parts themselves match (``McpServers``, ``McpServer``, ``ToolRegistry``,
``SessionStore``), so a front end
typed against them can show a server or a saved file but not start, stop or write one (mypy says so). What a
front end may change goes through the session's verbs (``surface.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .mcp.config import ServerConfig
    from .mcp.remote import RemotePrompt, RemoteResource, RemoteTool
    from .tools.base import Tool


class McpServerView(Protocol):
    """One MCP server as /mcp, stream-json and the Agent SDK's mcp_status show it."""

    @property
    def name(self) -> str: ...
    @property
    def state(self) -> str: ...  # waiting, starting, ready, failed, stopped
    @property
    def error(self) -> str: ...  # its latest failure, one sentence
    @property
    def config(self) -> ServerConfig: ...  # how it is started, and from which file
    @property
    def tools(self) -> Sequence[RemoteTool]: ...
    @property
    def offered(self) -> Mapping[str, RemoteTool]: ...  # as offered: mcp__<server>__<tool> → the tool
    @property
    def held_back(self) -> Sequence[tuple[str, str]]: ...  # tools not offered, each with why
    @property
    def prompts(self) -> Sequence[RemotePrompt]: ...
    @property
    def resources(self) -> Sequence[RemoteResource]: ...


class McpView(Protocol):
    """The session's MCP servers, read only; ``bool()`` says whether any is configured."""

    @property
    def servers(self) -> Mapping[str, McpServerView]: ...  # by name, as configured
    @property
    def log(self) -> Path | None: ...  # where the details of what they did go
    def ready(self) -> Sequence[McpServerView]: ...
    def __bool__(self) -> bool: ...


class ToolsView(Protocol):
    """The main agent's tools, read only (the registry matches it): their names, and one by name."""

    def __iter__(self) -> Iterator[Tool]: ...
    def names(self) -> list[str]: ...
    def get(self, name: str) -> Tool | None: ...


class SavedView(Protocol):
    """The session's file, read only: where it is and whether writing it failed."""

    @property
    def session_id(self) -> str: ...
    @property
    def main_path(self) -> Path: ...
    @property
    def off(self) -> bool: ...  # a write failed: nothing more is saved
    @property
    def problem(self) -> str: ...  # why ("no space left on device")
    def path_for(self, agent_id: str) -> Path: ...  # a subagent's transcript
