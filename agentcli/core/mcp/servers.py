"""Running MCP servers: started in the background, watched, and stopped with what they started.

Each server lives in one asyncio task that holds the SDK's ``Client`` open (the SDK's
transports are context managers that must be entered and left in the same task). The SDK is
imported in a thread the first time a server starts, so a session without servers never loads
it and one with servers does not wait for it.

A stdio server runs in a session of its own, with the environment bash gets (secrets scrubbed)
plus the ``env`` its config names, and a marker variable (``processes.MARKER``): whatever it
starts carries the marker too, so everything is found and stopped at exit, also on headless
runs' fast exit path (``cli.leave`` runs the exit hooks). A stdio server from the workspace's own
``.mcp.json`` runs in the OS sandbox, as bash does (``core/system/sandbox.py``); the user's own servers
run outside it.
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import importlib
import os
import tempfile
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, AsyncIterator, Callable, Literal, Mapping

from ... import __version__
from ..system import secret_env
from ..system import processes
from ..errors import ToolError
from ..system.sandbox import Sandbox, SandboxError, writable_dirs
from .config import McpConfigError, ServerConfig

State = Literal["waiting", "starting", "ready", "failed", "exited", "stopped"]

# The SDK modules a connection needs, imported in a thread before the first server starts.
SDK_MODULES = ("mcp.client.client", "mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.sse",
               "mcp.shared._httpx_utils", "mcp.shared.exceptions")
STOP_GRACE = 6.0  # seconds a server gets to stop politely (the SDK closes stdin, then SIGTERM, SIGKILL)
WATCH_INTERVAL = 1.0  # seconds between checks that a stdio server's process still lives
REQUEST_TIMEOUT = -32001  # the JSON-RPC error codes the SDK raises for a timeout and a closed connection
CONNECTION_CLOSED = -32000

_markers: set[str] = set()  # of servers that may still run: SIGKILLed at exit whatever happened


def _kill_leftovers() -> None:
    processes.kill_now(sorted(_markers))


atexit.register(_kill_leftovers)


def import_sdk() -> None:
    for name in SDK_MODULES:
        importlib.import_module(name)


@dataclass(frozen=True)
class RemoteTool:
    name: str
    description: str
    input_schema: dict[str, Any]


class McpServer:
    """One configured server: its state, its tools once listed, and calls to them."""

    def __init__(self, config: ServerConfig, *, root: Path, env: Mapping[str, str], tool_timeout: float,
                 on_change: Callable[["McpServer"], None], sandbox: "Sandbox | None" = None) -> None:
        self.config = config
        self.sandbox = sandbox if config.project and config.transport == "stdio" else None
        self.name = config.name
        self.root = root
        self.env = dict(env)
        self.tool_timeout = tool_timeout
        self.on_change = on_change
        self.state: State = "waiting"
        self.error = ""  # the latest failure, one sentence
        self.tools: list[RemoteTool] = []
        self.settled = asyncio.Event()  # set once ready or failed
        self.marker = processes.new_marker()
        self.pid: int | None = None
        self.client: Any = None
        self.task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._stderr: IO[str] | None = None
        self.relay: Callable[[dict[str, Any]], Any] | None = None  # type sdk: how its messages reach it

    # ------------------------------------------------------------ life

    def start(self) -> None:
        if self.task is None:
            self.state = "starting"
            self.task = asyncio.get_running_loop().create_task(self._life(), name=f"mcp-{self.name}")

    async def _life(self) -> None:
        try:
            await asyncio.to_thread(import_sdk)
            from mcp.client.client import Client
            from mcp_types import Implementation

            if self.config.transport == "sdk" and self.relay is None:
                self._set("failed", "it is an Agent SDK server, which only the program that drives agentcli "
                                    "through --input-format stream-json can serve")
                return
            config = self.config.expanded(secret_env.environ())
            if self.sandbox is not None and await asyncio.to_thread(self.sandbox.usable):
                argv = self.sandbox.wrap([config.command, *config.args], cwd=self.root,
                                         writable=writable_dirs(self.root))
                config = dataclasses.replace(config, command=argv[0], args=tuple(argv[1:]))
            info = Implementation(name="agentcli", version=__version__)
            async with Client(self._transport(config), client_info=info) as client:
                self.tools = await self._list_tools(client)
                self.client = client
                self._set("ready")
                await self._watch()
        except asyncio.CancelledError:
            if self.state in ("starting", "ready"):
                self._set("stopped")
        except McpConfigError as exc:
            self._set("failed", f"its configuration uses {exc}")
        except SandboxError as exc:
            self._set("failed", str(exc).rstrip("."))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - anything the SDK or the server does ends only this server
            if self.state == "ready" and not self._stop.is_set():
                self._set("exited", f"the connection ended ({describe(exc)}){self._stderr_tail()}")
            elif self.state == "starting":
                self._set("failed", f"{describe(exc)}{self._stderr_tail()}")
        finally:
            self.client = None
            if self.state in ("starting", "ready"):
                self._set("stopped")
            self.settled.set()
            self._forget_process()

    def _set(self, state: State, error: str = "") -> None:
        if state == self.state and not error:
            return
        self.state = state
        if error:
            self.error = error
        if state != "starting":
            self.settled.set()
        self.on_change(self)

    def _transport(self, config: ServerConfig) -> Any:
        if config.transport == "sdk":
            from .relay import relay_transport

            assert self.relay is not None
            return relay_transport(self.relay)
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            processes.active[self.marker] = -1  # a bash call ending meanwhile must not take it for a leftover
            _markers.add(self.marker)
            env = {**self.env, **dict(config.env), processes.MARKER: self.marker}
            return stdio_client(StdioServerParameters(command=config.command, args=list(config.args), env=env,
                                                      cwd=str(self.root)), errlog=self._stderr)
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=dict(config.headers))
        return _http_transport(config.url, dict(config.headers))

    async def _list_tools(self, client: Any) -> list[RemoteTool]:
        if self.config.transport == "stdio":
            self.pid = await asyncio.to_thread(_child_with_marker, self.marker)
            if self.pid is not None:
                processes.started(self.marker, self.pid)
        tools: list[RemoteTool] = []
        cursor = None
        for _ in range(100):  # pages
            page = await client.list_tools(cursor=cursor)
            tools += [RemoteTool(t.name, t.description or "", dict(t.input_schema or {"type": "object"}))
                      for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _watch(self) -> None:
        """Until asked to stop, or the server's process is gone."""
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._stop.wait(), WATCH_INTERVAL)
            except TimeoutError:
                pass
            if self.pid is not None and not _alive(self.pid):
                self._set("exited", f"the server process exited{self._stderr_tail()}")
                return

    def _stderr_tail(self) -> str:
        """The last line the server wrote to its standard error, as a clause."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            lines = [line.strip() for line in self._stderr.read()[-4000:].splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return f"; its last words: {lines[-1][:300]}" if lines else ""

    def _forget_process(self) -> None:
        if self.pid is not None:
            processes.ended(self.marker, self.pid)
        processes.active.pop(self.marker, None)
        processes.kill_now([self.marker])  # what it left behind
        _markers.discard(self.marker)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def give_up(self, why: str) -> None:
        """Stop a server that did not start in time."""
        if self.state == "starting":
            self._set("failed", why)
            if self.task is not None:
                self.task.cancel()

    async def restart(self) -> None:
        """Stop the server if it runs, start it again, and wait until it is ready or has failed."""
        await self.stop()
        self.task, self._stop, self.settled, self.error = None, asyncio.Event(), asyncio.Event(), ""
        self.start()
        await self.settled.wait()

    async def stop(self) -> None:
        self._stop.set()
        if self.task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self.task), STOP_GRACE)
        except TimeoutError:
            self.task.cancel()
        except asyncio.CancelledError:
            self.task.cancel()
            raise
        except Exception:  # noqa: BLE001 - it ended badly, but it ended
            pass
        if self.state in ("ready", "starting"):
            self._set("stopped")

    # ------------------------------------------------------------ calls

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        """The server's result for one tool call; ToolError with one sentence when there is none."""
        client = self.client
        if self.state != "ready" or client is None:
            raise ToolError(self.unavailable())
        try:
            return await client.call_tool(tool, args, read_timeout_seconds=self.tool_timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            code = getattr(exc, "code", None)
            if code == REQUEST_TIMEOUT:
                self.error = f"it did not answer a call to {tool} within {self.tool_timeout:g} s"
                self.on_change(self)
                raise ToolError(f"The MCP server '{self.name}' did not answer the call to {tool} within "
                                f"{self.tool_timeout:g} s (mcp_tool_timeout); it may be hung.") from None
            if code == CONNECTION_CLOSED or (self.pid is not None and not _alive(self.pid)):
                gone = "exited" if self.config.transport == "stdio" else "closed the connection"
                self._set("exited", f"it {gone} during a call to {tool}{self._stderr_tail()}")
                self._stop.set()
                raise ToolError(f"The MCP server '{self.name}' {gone} during the call to {tool}"
                                f"{self._stderr_tail()}; its tools cannot be used for the rest of this session.") from None
            raise ToolError(f"The MCP server '{self.name}' refused the call to {tool}: {describe(exc)}.") from None

    def unavailable(self) -> str:
        why = {"waiting": "has not started yet", "starting": "is still starting", "failed": "failed to start",
               "exited": "has exited", "stopped": "was stopped"}.get(self.state, self.state)
        detail = f" ({self.error})" if self.error else ""
        return f"The MCP server '{self.name}' {why}{detail}; its tools cannot be used now."


@asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers) as http, \
            streamable_http_client(url, http_client=http) as streams:
        yield streams


def describe(exc: BaseException) -> str:
    """One line for an exception, looking inside the groups anyio raises."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"the command {exc.filename} was not found"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).strip() or type(exc).__name__
    if text.startswith("(") and "," in text:  # MCPError's args tuple
        text = getattr(exc, "message", text)
    return text.splitlines()[0][:300]


def _alive(pid: int) -> bool:
    stat = processes._stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def _child_with_marker(marker: str) -> int | None:
    """Our child process that carries ``marker``: the stdio server we just started (Linux)."""
    me = os.getpid()
    for pid in processes._pids():
        stat = processes._stat(pid)
        if stat is not None and stat[1] == me and processes._marker_of(pid) == marker:
            return pid
    return None


class McpServers:
    """A session's servers. ``on_ready`` gets each server once its tools are listed; ``on_trouble``
    gets one sentence when a server fails to start or exits."""

    def __init__(self, configs: Mapping[str, ServerConfig], *, root: Path, env: Mapping[str, str],
                 startup_timeout: float, tool_timeout: float, on_ready: Callable[[McpServer], None],
                 on_trouble: Callable[[str], None], sandbox: Sandbox | None = None) -> None:
        self.startup_timeout = startup_timeout
        self.on_ready, self.on_trouble = on_ready, on_trouble
        self.servers = {name: McpServer(config, root=root, env=env, tool_timeout=tool_timeout,
                                        on_change=self._changed, sandbox=sandbox) for name, config in configs.items()}
        self._announced: set[tuple[str, str]] = set()
        self._started = False
        self._deadlines: list[asyncio.Task[None]] = []

    def __bool__(self) -> bool:
        return bool(self.servers)

    def start(self) -> None:
        """Start every server in the background (once; needs a running event loop)."""
        if self._started or not self.servers:
            return
        self._started = True
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
        if server.state == "ready" and (server.name, "ready") not in self._announced:
            self._announced.add((server.name, "ready"))
            self.on_ready(server)
        elif server.state in ("failed", "exited") and (server.name, server.state) not in self._announced:
            self._announced.add((server.name, server.state))
            if server.state == "failed":
                self.on_trouble(f"MCP server '{server.name}' failed to start: {server.error}. Its tools are "
                                "left out; /mcp shows the servers.")
            else:
                self.on_trouble(f"MCP server '{server.name}' stopped working: {server.error}. Its tools "
                                "return errors from now on.")

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
