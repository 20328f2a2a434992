"""Running MCP servers: started in the background, watched, and stopped with what they started.

Each server lives in one asyncio task that holds the SDK's ``Client`` open (the SDK's
transports are context managers that must be entered and left in the same task). The SDK is
imported in a thread the first time a server starts, so a session without servers never loads
it and one with servers does not wait for it.

A stdio server runs in a session of its own, with the environment bash gets (secrets scrubbed)
plus the ``env`` its config names, and a marker variable (``processes.MARKER``): whatever it
starts carries the marker too, so everything is found and stopped at exit, also on headless
runs' fast exit path (``leaving.leave`` runs the exit hooks). A stdio server from the workspace's own
``.mcp.json`` runs in the OS sandbox, as bash does (``core/system/sandbox.py``); the user's own servers
run outside it.
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import importlib
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

from ... import __version__
from ..errors import ToolError
from ..system import processes, secret_env
from ..system.sandbox import Sandbox, SandboxError, writable_dirs
from .config import McpConfigError, ServerConfig, tool_name
from .remote import (
    INSTRUCTIONS_CAP,
    LOG,
    NO_ONE_TO_ASK,
    Ask,
    Elicitation,
    Progress,
    RemotePrompt,
    RemoteResource,
    RemoteTool,
    State,
    _alive,
    _child_with_marker,
    describe,
    tasks_required,
    unauthorized,
)

# The SDK modules a connection needs, imported in a thread before the first server starts.
SDK_MODULES = (
    "mcp.client.client",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.client.sse",
    "mcp.shared._httpx_utils",
    "mcp.shared.exceptions",
)
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


class McpServer:
    """One configured server: its state, its tools, prompts and resources once listed, and calls to them."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        root: Path,
        env: Mapping[str, str],
        tool_timeout: float,
        on_change: Callable[[McpServer], None],
        sandbox: Sandbox | None = None,
        roots: Callable[[], list[Path]] | None = None,
        ask: Ask | None = None,
    ) -> None:
        self.config = config
        self.sandbox = sandbox if config.project and config.transport == "stdio" else None
        self.name = config.name
        self.root = root
        self.env = dict(env)
        self.tool_timeout = tool_timeout
        self.on_change = on_change
        self.roots = roots or (lambda: [root])
        self.ask = ask  # who answers the server's questions (elicitation); None: nobody, each is refused
        self.state: State = "waiting"
        self.error = ""  # the latest failure, one sentence
        self.tools: list[RemoteTool] = []
        self.offered: dict[str, RemoteTool] = {}  # the tools as offered: mcp__<server>__<tool> → the tool
        self.held_back: list[tuple[str, str]] = []  # tools not offered, each with why
        self.prompts: list[RemotePrompt] = []
        self.resources: list[RemoteResource] = []
        self.instructions = ""  # what the server says about using it, capped (INSTRUCTIONS_CAP)
        self.changed = False  # its tools changed since the registry last took them (tools/list_changed)
        self.settled = asyncio.Event()  # set once ready or failed
        self.marker = processes.new_marker()
        self.pid: int | None = None
        self.client: Any = None
        self.task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._relist: set[str] = set()  # what the server said changed: "tools", "prompts", "resources"
        self._wake = asyncio.Event()
        self._stderr: IO[str] | None = None
        self._told_bad_output = False
        self._told_clashes: set[str] = set()
        self.http_status: int | None = None  # the latest HTTP error status the server answered (http, sse)
        self.notes: list[str] = []  # warnings for the user not yet given (McpServers hands them on)
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
                self._set(
                    "failed",
                    "it is an Agent SDK server, which only the program that drives agentcli "
                    "through --input-format stream-json can serve",
                )
                return
            config = self.config.expanded(secret_env.environ())
            if self.sandbox is not None and await asyncio.to_thread(self.sandbox.usable):
                argv = await asyncio.to_thread(
                    self.sandbox.wrap,
                    [config.command, *config.args],
                    cwd=self.root,
                    writable=writable_dirs(self.root),
                    readable=[Path(config.plugin_root)] if config.plugin_root else [],
                )
                config = dataclasses.replace(config, command=argv[0], args=tuple(argv[1:]))
            info = Implementation(name="agentcli", version=__version__)
            async with Client(
                self._transport(config),
                client_info=info,
                cache=None,
                list_roots_callback=self._list_roots,
                elicitation_callback=self._elicit,
                message_handler=self._message,
                logging_callback=self._logged,
            ) as client:
                await self._find_process()
                await self._list(client, {"tools", "prompts", "resources"})
                self.instructions = (client.instructions or "").strip()[:INSTRUCTIONS_CAP]
                self.client = client
                self._set("ready")
                await self._watch(client)
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
            LOG.debug("MCP server %r ended", self.name, exc_info=True)
            if (told := unauthorized(self.http_status, self.config)) and self.state == "starting":
                self._set("failed", told)
            elif self.state == "ready" and not self._stop.is_set():
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
            return stdio_client(
                StdioServerParameters(command=config.command, args=list(config.args), env=env, cwd=str(self.root)),
                errlog=self._stderr,
            )
        if config.transport == "sse":
            from mcp.client.sse import sse_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            def client(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
                made = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
                made.event_hooks["response"].append(self._seen)
                return made

            return sse_client(config.url, headers=dict(config.headers), httpx_client_factory=client)
        return _http_transport(config.url, dict(config.headers), self._seen)

    async def _seen(self, response: Any) -> None:
        if response.status_code >= 400:
            self.http_status = response.status_code

    async def _find_process(self) -> None:
        if self.config.transport == "stdio":
            self.pid = await asyncio.to_thread(_child_with_marker, self.marker)
            if self.pid is not None:
                processes.started(self.marker, self.pid)

    async def _list(self, client: Any, what: set[str]) -> None:
        """List the server's tools, prompts and resources (those in ``what`` it has)."""
        capabilities = client.server_capabilities
        if "tools" in what:
            listed = await _pages(client.list_tools, "tools")
            self.held_back = [
                (t.name, "it runs only as an MCP Task, which agentcli does not support")
                for t in listed
                if tasks_required(t)
            ]
            self.tools = [
                RemoteTool(t.name, t.description or "", dict(t.input_schema or {"type": "object"}))
                for t in listed
                if not tasks_required(t)
            ]
            self.offered = self._names(self.tools)
            self.changed = True
        for kind, present in (("prompts", capabilities.prompts), ("resources", capabilities.resources)):
            if kind not in what or present is None:
                continue
            try:
                items = await _pages(getattr(client, f"list_{kind}"), kind)
            except Exception as exc:  # noqa: BLE001 - the tools still work without them
                LOG.warning("MCP server %r: listing its %s failed", self.name, kind, exc_info=True)
                self.error = f"listing its {kind} failed: {describe(exc)}"
                continue
            if kind == "prompts":
                self.prompts = [
                    RemotePrompt(
                        p.name, p.description or "", tuple((a.name, bool(a.required)) for a in p.arguments or ())
                    )
                    for p in items
                ]
            else:
                self.resources = [
                    RemoteResource(self.name, str(r.uri), r.name, r.description or "", r.mime_type or "") for r in items
                ]

    def _names(self, tools: list[RemoteTool]) -> dict[str, RemoteTool]:
        """Each tool's name as offered. Two whose cleaned names collide (``a.b`` and ``a_b``) both stay
        reachable: the later one gets a number (``mcp__s__a_b_2``), and a warning says so. A tool listed again
        keeps the name it had, whatever the new order: the conversation has called it by that name."""
        had = {remote.name: name for name, remote in self.offered.items()}
        offered: dict[str, RemoteTool] = {}
        kept: set[int] = set()  # the positions in ``tools`` of those that keep their name
        for at, remote in enumerate(tools):
            if remote.name in had and had[remote.name] not in offered:
                offered[had[remote.name]] = remote
                kept.add(at)
        for at, remote in enumerate(tools):
            if at in kept:
                continue
            name = tool_name(self.name, remote.name)
            number = 2
            while name in offered:
                name = f"{tool_name(self.name, remote.name)[:60]}_{number}"
                number += 1
            if number > 2 and name not in self._told_clashes:
                self._told_clashes.add(name)
                clash = tool_name(self.name, remote.name)
                self.notes.append(
                    f"MCP server '{self.name}' has two tools named {clash} once cleaned "
                    f"({offered[clash].name!r} and {remote.name!r}); the second is offered as {name}."
                )
            offered[name] = remote
        return offered

    async def _watch(self, client: Any) -> None:
        """Until asked to stop, or the server's process is gone; lists again what the server says changed."""
        listening = asyncio.get_running_loop().create_task(self._listen(client), name=f"mcp-{self.name}-listen")
        try:
            await self._watch_until_done(client)
        finally:
            listening.cancel()
            try:
                await listening
            except BaseException:  # noqa: BLE001 - cancelled, or it had ended
                pass

    async def _listen(self, client: Any) -> None:
        """On the 2026 protocol, changes come on a ``subscriptions/listen`` stream, not as notifications."""
        from mcp.client.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        kinds = {ToolsListChanged: "tools", PromptsListChanged: "prompts", ResourcesListChanged: "resources"}
        try:
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as subscription:
                async for event in subscription:
                    if (kind := kinds.get(type(event))) is not None:
                        self._relist.add(kind)
                        self._wake.set()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - without the stream, the lists stay as they are
            LOG.info("MCP server %r: no subscriptions/listen stream", self.name, exc_info=True)

    async def _watch_until_done(self, client: Any) -> None:
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._wake.wait(), WATCH_INTERVAL)
            except TimeoutError:
                pass
            self._wake.clear()
            if self._relist and not self._stop.is_set():
                what, self._relist = self._relist, set()
                try:
                    await self._list(client, what)
                except Exception as exc:  # noqa: BLE001 - the old lists stay
                    LOG.warning("MCP server %r: listing again failed", self.name, exc_info=True)
                    self.error = f"listing its {', '.join(sorted(what))} again failed: {describe(exc)}"
                self.on_change(self)
            if self.pid is not None and not _alive(self.pid):
                self._set("exited", f"the server process exited{self._stderr_tail()}")
                return

    # ------------------------------------------------------------ what the server sends

    async def _message(self, message: Any) -> None:
        """A notification, or something the transport could not read (logged, and told once)."""
        if isinstance(message, Exception):
            if not isinstance(message, ValueError):  # the transport failed (an SSE stream cut off), not the
                # server's words: a connection that ends is told by the server's state, so /mcp says it
                LOG.warning("MCP server %r: reading from it failed", self.name, exc_info=message)
                self.error = f"reading from it failed: {describe(message)}"
                return
            LOG.warning("MCP server %r sent something that is not MCP", self.name, exc_info=message)
            if not self._told_bad_output:
                self._told_bad_output = True
                sent = (
                    "wrote a line that is not MCP (JSON-RPC) to its output"
                    if self.config.transport == "stdio"
                    else "sent a message that is not MCP (JSON-RPC)"
                )
                self.notes.append(
                    f"MCP server '{self.name}' {sent}; agentcli ignored it (the MCP log has the details)."
                )
                self.on_change(self)
            return
        method = getattr(message, "method", "")
        kind = {
            "notifications/tools/list_changed": "tools",
            "notifications/prompts/list_changed": "prompts",
            "notifications/resources/list_changed": "resources",
        }.get(method)
        if kind is not None:
            self._relist.add(kind)
            self._wake.set()

    async def _logged(self, params: Any) -> None:
        LOG.info("MCP server %r logged (%s): %s", self.name, getattr(params, "level", ""), getattr(params, "data", ""))

    async def _list_roots(self, context: Any) -> Any:
        from mcp_types import ListRootsResult, Root

        return ListRootsResult(
            roots=[
                Root(uri=path.resolve().as_uri(), name=path.name or str(path))  # type: ignore[arg-type]
                for path in self.roots()
            ]
        )

    async def _elicit(self, context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult, ErrorData

        question = Elicitation(
            self.name,
            str(getattr(params, "message", "")),
            dict(getattr(params, "requested_schema", None) or {}),
            str(getattr(params, "url", "") or ""),
        )
        if self.ask is None:
            return ErrorData(code=-32603, message=NO_ONE_TO_ASK)
        answer = await self.ask(question)
        if answer.refused:
            return ErrorData(code=-32603, message=answer.refused)
        return ElicitResult(action=answer.action, content=answer.content)

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

    async def call(self, tool: str, args: dict[str, Any], progress: Progress | None = None) -> Any:
        """The server's result for one tool call; ToolError with one sentence when there is none.
        ``progress`` gets the server's progress notifications for the call."""
        client = self.client
        if self.state != "ready" or client is None:
            raise ToolError(self.unavailable())
        try:
            return await client.call_tool(
                tool, args, read_timeout_seconds=self.tool_timeout, progress_callback=progress
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            code = getattr(exc, "code", None)
            if code == REQUEST_TIMEOUT:
                self.error = f"it did not answer a call to {tool} within {self.tool_timeout:g} s"
                self.on_change(self)
                raise ToolError(
                    f"The MCP server '{self.name}' did not answer the call to {tool} within "
                    f"{self.tool_timeout:g} s (mcp_tool_timeout); it may be hung."
                ) from None
            if code == CONNECTION_CLOSED or (self.pid is not None and not _alive(self.pid)):
                gone = "exited" if self.config.transport == "stdio" else "closed the connection"
                self._set("exited", f"it {gone} during a call to {tool}{self._stderr_tail()}")
                self._stop.set()
                raise ToolError(
                    f"The MCP server '{self.name}' {gone} during the call to {tool}"
                    f"{self._stderr_tail()}; its tools cannot be used for the rest of this session."
                ) from None
            raise ToolError(f"The MCP server '{self.name}' refused the call to {tool}: {describe(exc)}.") from None

    async def get_prompt(self, prompt: str, arguments: dict[str, str]) -> Any:
        """The server's messages for one of its prompts; ToolError with one sentence when there are none."""
        return await self._get("prompts", f"its prompt {prompt}", lambda client: client.get_prompt(prompt, arguments))

    async def read_resource(self, uri: str) -> Any:
        """The server's contents for one resource; ToolError with one sentence when there are none."""
        return await self._get("resources", f"the resource {uri}", lambda client: client.read_resource(uri))

    async def _get(self, kind: str, what: str, request: Callable[[Any], Awaitable[Any]]) -> Any:
        """One request for something of the server's ``kind`` ("prompts", "resources"), named ``what``."""
        client = self.client
        if self.state != "ready" or client is None:
            raise ToolError(self.unavailable().replace("its tools", f"its {kind}"))
        try:
            return await asyncio.wait_for(request(client), self.tool_timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            LOG.warning("MCP server %r: getting %s failed", self.name, what, exc_info=True)
            raise ToolError(f"The MCP server '{self.name}' did not give {what}: {describe(exc)}.") from None

    def unavailable(self) -> str:
        why = {
            "waiting": "has not started yet",
            "starting": "is still starting",
            "failed": "failed to start",
            "exited": "has exited",
            "stopped": "was stopped",
        }.get(self.state, self.state)
        detail = f" ({self.error})" if self.error else ""
        return f"The MCP server '{self.name}' {why}{detail}; its tools cannot be used now."


async def _pages(list_page: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paged MCP listing (at most 100 pages)."""
    items: list[Any] = []
    cursor = None
    for _ in range(100):
        page = await list_page(cursor=cursor)
        items += getattr(page, field)
        cursor = page.next_cursor
        if not cursor:
            break
    return items


@asynccontextmanager
async def _http_transport(
    url: str, headers: dict[str, str], seen: Callable[[Any], Awaitable[None]]
) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        http.event_hooks["response"].append(seen)
        yield streams
