"""A session's MCP servers together: started at once in the background, each given the startup timeout, their
troubles told once each, and stopped together (``servers.McpServer`` is one of them)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..system.sandbox import Sandbox
from .config import ServerConfig
from .remote import Ask, RemoteResource, log_to
from .servers import McpServer


class McpServers:
    """A session's servers. ``on_ready`` gets each server once its tools are listed; ``on_trouble``
    gets one sentence when a server fails to start or exits, or has something to warn about. ``roots``:
    the folders servers may work in (the workspace and --add-dir); ``ask``: who answers a server's
    question to the user (None: nobody, and each question is refused saying why)."""

    def __init__(
        self,
        configs: Mapping[str, ServerConfig],
        *,
        root: Path,
        env: Mapping[str, str],
        startup_timeout: float,
        tool_timeout: float,
        on_ready: Callable[[McpServer], None],
        on_trouble: Callable[[str], None],
        sandbox: Sandbox | None = None,
        roots: Callable[[], list[Path]] | None = None,
        ask: Ask | None = None,
        log: Path | None = None,
    ) -> None:
        self.startup_timeout = startup_timeout
        self.log = log  # where the SDK's log lines and the details of failures go (log_to)
        self.on_ready, self.on_trouble = on_ready, on_trouble
        self.servers = {
            name: McpServer(
                config,
                root=root,
                env=env,
                tool_timeout=tool_timeout,
                on_change=self._changed,
                sandbox=sandbox,
                roots=roots,
                ask=ask,
            )
            for name, config in configs.items()
        }
        self._announced: set[tuple[str, str]] = set()
        self._started = False
        self._deadlines: list[asyncio.Task[None]] = []

    def set_ask(self, ask: Ask | None) -> None:
        """Who answers the servers' questions from now on (a front end, the Agent SDK)."""
        for server in self.servers.values():
            server.ask = ask

    def ready(self) -> list[McpServer]:
        return [server for server in self.servers.values() if server.state == "ready"]

    def take_changed(self) -> list[McpServer]:
        """The ready servers whose tools changed since last asked (tools/list_changed): a turn boundary
        takes them, so a turn's tool list never changes under it."""
        changed = [server for server in self.ready() if server.changed]
        for server in changed:
            server.changed = False
        return changed

    def resources(self) -> list[RemoteResource]:
        """Every resource the ready servers list, by server: what ``@server:uri`` may attach."""
        return [resource for server in self.ready() for resource in server.resources]

    async def read_resource(self, server: str, uri: str) -> Any:
        """One resource's contents (the SDK's ReadResourceResult); ToolError with one sentence."""
        found = self.servers.get(server)
        if found is None:
            raise ToolError(f"There is no MCP server '{server}'; /mcp lists the servers.")
        return await found.read_resource(uri)

    def instructions(self, trusted: bool) -> list[tuple[str, str]]:
        """(server, instructions) of the ready servers that give some. A repository's own server
        (.mcp.json) counts only in a trusted workspace: its words are the repository's."""
        return [
            (server.name, server.instructions)
            for server in self.ready()
            if server.instructions and (trusted or not server.config.project)
        ]

    def __bool__(self) -> bool:
        return bool(self.servers)

    def start(self) -> None:
        """Start every server in the background (once; needs a running event loop)."""
        if self._started or not self.servers:
            return
        self._started = True
        log_to(self.log)
        for server in self.servers.values():
            server.start()
            self._deadlines.append(asyncio.get_running_loop().create_task(self._deadline(server)))

    async def _deadline(self, server: McpServer) -> None:
        try:
            await asyncio.wait_for(server.settled.wait(), self.startup_timeout)
        except TimeoutError:
            server.give_up(f"it did not finish starting within {self.startup_timeout:g} s (mcp_startup_timeout)")

    async def wait_started(self) -> None:
        """Until every server is ready or has failed (each gets at most the startup timeout)."""
        self.start()
        await asyncio.gather(*(server.settled.wait() for server in self.servers.values()))

    def _changed(self, server: McpServer) -> None:
        notes, server.notes = server.notes, []
        for note in notes:
            self.on_trouble(note)
        if server.state == "ready" and (server.name, "ready") not in self._announced:
            self._announced.add((server.name, "ready"))
            self.on_ready(server)
        elif server.state in ("failed", "exited") and (server.name, server.state) not in self._announced:
            self._announced.add((server.name, server.state))
            if server.state == "failed":
                self.on_trouble(
                    f"MCP server '{server.name}' failed to start: {server.error}. Its tools are "
                    "left out; /mcp shows the servers."
                )
            else:
                self.on_trouble(
                    f"MCP server '{server.name}' stopped working: {server.error}. Its tools return errors from now on."
                )

    async def restart(self, server: McpServer) -> None:
        """Start one server again (the Agent SDK's reconnect); its tools are offered once it is ready, and
        its troubles are told again."""
        self._announced = {(name, state) for name, state in self._announced if name != server.name}
        try:
            await asyncio.wait_for(server.restart(), self.startup_timeout)
        except TimeoutError:
            server.give_up(f"it did not finish starting within {self.startup_timeout:g} s (mcp_startup_timeout)")

    async def stop(self) -> None:
        for deadline in self._deadlines:
            deadline.cancel()
        await asyncio.gather(*(server.stop() for server in self.servers.values()))
