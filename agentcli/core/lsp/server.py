"""Running language servers: one per language per workspace, started on first use, shared by every agent of a
session, restarted once if it dies, stopped at exit.

The JSON-RPC framing and the LSP messages are pygls' client (``LanguageClient``) and lsprotocol's types. Its
answers are read as plain JSON (``Raw``): lsprotocol's strict typing of a reply refuses what real servers send
(pylsp's notebook capabilities), and a refused reply would leave its request unanswered.

A server analyses the repository and may run its code (rust-analyzer runs build scripts, Python servers
import plugins), so it runs in the OS sandbox like bash (``core/system/sandbox.py``), with the environment bash
gets and a marker of its own (``processes.MARKER``) by which what it started is found and stopped. Whatever goes
wrong (no program, a crash, no answer) becomes one sentence (``LspUnavailable``) for the tool's result.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ... import __version__
from ..system import processes
from ..system.sandbox import Sandbox, SandboxError, writable_dirs
from .specs import ServerSpec

STOP_GRACE = 3.0  # seconds a server gets to shut down politely before it is killed
OPEN_WAIT = 10.0  # seconds a query waits for the server's first diagnostics of a file it just opened
SETTLE = 0.3  # … and then until it has published nothing more for this long
STDERR_KEPT = 4_000  # characters of a server's standard error kept for the sentence saying why it ended

_markers: set[str] = set()  # of servers that may still run: SIGKILLed at exit whatever happened
atexit.register(lambda: processes.kill_now(sorted(_markers)))
logging.getLogger("pygls").setLevel(logging.CRITICAL)  # a server's bad message is its failure, not our log


class LspUnavailable(Exception):
    """A server cannot answer; the message is one sentence for the tool's result."""


def plain(value: Any) -> Any:
    """pygls' reply objects (named tuples) and lsprotocol's types as dicts and lists, all the way down."""
    if hasattr(value, "__attrs_attrs__"):
        from lsprotocol.converters import get_converter

        return get_converter().unstructure(value)
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def uri_of(path: Path) -> str:
    return path.as_uri()


def path_of(uri: str) -> Path | None:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


class LanguageServer:
    """One server process and the documents it has open."""

    def __init__(
        self,
        spec: ServerSpec,
        root: Path,
        env: Mapping[str, str],
        sandbox: Sandbox | None,
        timeout: float,
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        self.spec = spec
        self.root = root
        self.env = dict(env)
        self.sandbox = sandbox
        self.timeout = timeout  # seconds to start, or to answer one request
        self.on_progress = on_progress
        self.client: Any = None
        self.capabilities: dict[str, Any] = {}
        self.starts = 0
        self.failed = ""  # why it will not be started again
        self.marker = processes.new_marker()
        self.documents: dict[str, tuple[int, str]] = {}  # uri → (version, text) as the server has it
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}  # uri → what it published last
        self.published: dict[str, int] = {}  # uri → how many times it published
        self._waiters: set[asyncio.Future[None]] = set()  # wait_published's, woken by each publication
        self.stderr = ""
        self.progress: dict[str, str] = {}  # token → its title, while in progress
        self.said: dict[str, str] = {}  # token → how its latest report reads ("indexing: python 40 %")
        self._lock = asyncio.Lock()
        self._stderr_task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self.client is not None and self.client._server is not None and self.client._server.returncode is None

    async def ready(self) -> Any:
        """The running client: started on first use, started again once if it died."""
        async with self._lock:
            if self.alive:
                return self.client
            if self.failed:
                raise LspUnavailable(self.failed)
            died = self.starts > 0
            if self.starts >= 2:
                self.failed = f"{self.spec.name} stopped again after a restart{self._last_words()}"
                await self._forget()
                raise LspUnavailable(self.failed)
            await self._forget()
            self.starts += 1
            try:
                await asyncio.wait_for(self._start(), self.timeout)
            except asyncio.CancelledError:
                await self._forget()
                raise
            except TimeoutError:
                self.failed = f"{self.spec.name} did not answer its start within {self.timeout:g} s"
            except (OSError, SandboxError) as exc:
                self.failed = f"{self.spec.name} could not be started ({exc})"
            except Exception as exc:  # noqa: BLE001 - whatever the server did ends only this server
                self.failed = f"{self.spec.name} failed to start ({type(exc).__name__}: {exc}){self._last_words()}"
            if self.failed:
                await self._forget()
                raise LspUnavailable(self.failed + (" (after it had stopped once)" if died else ""))
            return self.client

    async def _start(self) -> None:
        from lsprotocol import types
        from pygls.lsp.client import LanguageClient
        from pygls.protocol import LanguageServerProtocol

        class Raw(LanguageServerProtocol):
            def get_result_type(self, method: str) -> Any:  # type: ignore[override]
                return None  # replies stay plain JSON (pygls.protocol.Object): see the module's note

        client = LanguageClient("agentcli", __version__, protocol_cls=Raw)
        handlers: dict[str, Callable[[Any], Any]] = {  # pygls marks each handler: a function of its own, not a method
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: lambda params: self._published(params),
            types.WINDOW_WORK_DONE_PROGRESS_CREATE: lambda params: None,
            types.PROGRESS: lambda params: self._progress(params),
            types.WORKSPACE_CONFIGURATION: lambda params: [None for _ in params.items],
        }
        for method, handler in handlers.items():
            client.feature(method)(handler)
        argv, env = list(self.spec.command), {**self.env, **dict(self.spec.env), processes.MARKER: self.marker}
        readable = [Path(self.spec.plugin_root)] if self.spec.plugin_root else []  # a plugin's folder
        if self.spec.plugin_root:
            env["CLAUDE_PLUGIN_ROOT"] = self.spec.plugin_root
        program = shutil.which(argv[0], path=self.env.get("PATH"))
        if program is None:
            raise OSError(f"{argv[0]} was not found")
        argv[0] = program
        if self.sandbox is not None and await asyncio.to_thread(self.sandbox.usable):
            argv = await asyncio.to_thread(
                self.sandbox.wrap, argv, cwd=self.root, writable=writable_dirs(self.root), readable=readable
            )
            env["XDG_CACHE_HOME"] = "/tmp/cache"  # home is read-only there; servers cache (jedi, gopls) in its /tmp
        processes.active[self.marker] = -1  # a bash call ending meanwhile must not take it for a leftover
        _markers.add(self.marker)
        self.client = client
        await client.start_io(*argv, cwd=str(self.root), start_new_session=True, env=env)
        process = client._server
        assert process is not None  # start_io set it
        processes.started(self.marker, process.pid)
        self._stderr_task = asyncio.get_running_loop().create_task(self._read_stderr(process))
        folder = types.WorkspaceFolder(uri=uri_of(self.root), name=self.root.name)
        capabilities = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
                hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText]),
                document_symbol=types.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
            ),
            window=types.WindowClientCapabilities(work_done_progress=True),
        )
        reply = await client.initialize_async(
            types.InitializeParams(
                capabilities=capabilities,
                process_id=None,
                root_uri=uri_of(self.root),
                workspace_folders=[folder],
                initialization_options=dict(self.spec.initialization_options) or None,
            )
        )
        self.capabilities = plain(reply).get("capabilities") or {}
        client.initialized(types.InitializedParams())

    async def _read_stderr(self, server: Any) -> None:
        try:
            while chunk := await server.stderr.read(4096):
                self.stderr = (self.stderr + chunk.decode(errors="replace"))[-STDERR_KEPT:]
        except (OSError, ValueError, AttributeError):
            pass

    def _last_words(self) -> str:
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        return f"; its last words: {lines[-1][:200]}" if lines else ""

    def _published(self, params: Any) -> None:
        uri = str(params.uri)
        self.diagnostics[uri] = [plain(d) for d in (params.diagnostics or [])]
        self.published[uri] = self.published.get(uri, 0) + 1
        self._wake()

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _progress(self, params: Any) -> None:
        """A piece of work begun, advanced or ended (``$/progress``): said as "indexing: python 40 %" to
        ``on_progress``, which gets the latest piece still in progress, or "" when none is."""
        value, token = plain(params.value), str(params.token)
        if not isinstance(value, dict):
            return
        kind = value.get("kind")
        if kind == "end":
            self.progress.pop(token, None)
            self._wake()
        elif kind == "begin" or token in self.progress:
            title = "".join(c for c in " ".join(str(value.get("title") or "").split()) if c.isprintable())[:40]
            title = title or self.progress.get(token, "indexing")  # the server's words: no escape reaches a screen
            self.progress[token] = title
            percent = value.get("percentage")
            self.said[token] = f"{title}: {self.spec.languages[0]}" + (
                f" {int(percent)} %" if isinstance(percent, (int, float)) and 0 <= percent <= 100 else ""
            )
        else:
            return  # a report of work it never began
        self.said = {key: text for key, text in self.said.items() if key in self.progress}
        if self.on_progress is not None:
            self.on_progress(next(reversed(self.said.values()), ""))

    async def sync(self, path: Path) -> str:
        """Open ``path`` in the server, or send it the file's text if it changed since: its uri."""
        await self.ready()
        text = await asyncio.to_thread(path.read_text, encoding="utf-8", errors="replace")
        uri, opening = uri_of(path), uri_of(path) not in self.documents
        self.open_text(path, text)
        if opening:
            await self.first_analysis(uri)
        return uri

    async def first_analysis(self, uri: str) -> None:
        """Wait, bounded, for the server's first analysis of a file it just opened: answers before it are partial
        (a cold typescript-language-server answers from tsserver's syntax server, which knows only the open files:
        an import's alias as a definition, the file's own places as its references). It is done when the server
        has published the file's diagnostics and stops publishing more (a syntactic pass, then a semantic one) and
        reports no work in progress (``$/progress``, up to ``timeout``). A server silent for ``OPEN_WAIT`` is asked
        all the same, unless its answers are partial until its diagnostics (``partial_until_diagnostics``)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        deadline, before = now + self.timeout, self.published.get(uri, 0)
        quiet_until = deadline if self.spec.partial_until_diagnostics else now + OPEN_WAIT
        while self.alive and (now := loop.time()) < deadline:
            if self.progress:  # it says it works (loading its project): wait for that, however long it takes,
                await self._woken(deadline)
                quiet_until = max(quiet_until, loop.time() + OPEN_WAIT)  # and a while for its word after it
            elif self.published.get(uri, 0) == before:  # nothing yet: wait a while for its first word
                if now >= quiet_until or not await self._woken(min(quiet_until, deadline)):
                    return
            elif not await self.wait_published(uri, self.published.get(uri, 0), SETTLE):
                return

    def open_text(self, path: Path, text: str) -> str:
        """Give the running server ``text`` as the content of ``path`` (opened, or changed): its uri."""
        from lsprotocol import types

        client, uri = self.client, uri_of(path)
        if client is None:
            raise LspUnavailable(f"{self.spec.name} is not running")
        known = self.documents.get(uri)
        if known is None:
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(uri=uri, language_id=self.spec.language_id(path), version=1, text=text)
                )
            )
            self.documents[uri] = (1, text)
        elif known[1] != text:
            version = known[0] + 1
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
            self.documents[uri] = (version, text)
        return uri

    async def request(self, method: str, params: Any) -> Any:
        """One request's plain JSON answer. Raises LspUnavailable with why in one sentence."""
        client = await self.ready()
        try:
            reply = await asyncio.wait_for(client.protocol.send_request_async(method, params), self.timeout)
        except TimeoutError:
            raise LspUnavailable(f"{self.spec.name} did not answer {method} within {self.timeout:g} s") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - its error, or its death, is this answer's
            if not self.alive:
                raise LspUnavailable(
                    f"{self.spec.name} stopped while answering{self._last_words()}; "
                    "it is started again on the next call"
                ) from None
            raise LspUnavailable(f"{self.spec.name} could not answer {method}: {exc}") from None
        return plain(reply)

    async def wait_published(self, uri: str, seen: int, timeout: float) -> bool:  # noqa: ASYNC109 - the answer is whether it came in time
        """Whether the server publishes diagnostics of ``uri`` for the ``seen``+1-th time within ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.published.get(uri, 0) <= seen and self.alive and loop.time() < deadline:
            if not await self._woken(deadline):
                break
        return self.published.get(uri, 0) > seen

    async def _woken(self, deadline: float) -> bool:
        """Whether the server published diagnostics or ended a piece of work before ``deadline`` (the loop's time)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.add(waiter)
        try:
            async with asyncio.timeout_at(deadline):
                await waiter
        except TimeoutError:
            return False
        finally:
            self._waiters.discard(waiter)
        return True

    async def stop(self) -> None:
        client = self.client
        if client is not None and self.alive:
            try:
                await asyncio.wait_for(client.shutdown_async(None), STOP_GRACE)
                client.exit(None)
                await asyncio.wait_for(client._server.wait(), STOP_GRACE)
            except (Exception, TimeoutError):  # noqa: BLE001 - it is killed below all the same
                pass
        await self._forget()

    async def _forget(self) -> None:
        client, self.client = self.client, None
        self.documents.clear()
        if self.said and self.on_progress is not None:  # what it was working on ended with it
            self.on_progress("")
        self.progress.clear()
        self.said.clear()
        if client is None:
            return
        server = client._server
        if server is not None:
            processes.kill_group(server.pid)
            processes.ended(self.marker, server.pid)
            await server.wait()
        client._stop_event.set()
        for task in client._async_tasks:
            task.cancel()
        await asyncio.gather(*client._async_tasks, return_exceptions=True)
        processes.active.pop(self.marker, None)
        processes.kill_now([self.marker])
        _markers.discard(self.marker)
        self.marker = processes.new_marker()


class LanguageServers:
    """A session's servers, by language: one per language, made on first use and shared by its agents."""

    def __init__(
        self,
        specs: list[ServerSpec],
        root: Path,
        env: Mapping[str, str] | Callable[[], Mapping[str, str]],
        sandbox: Sandbox | None,
        timeout: float,
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        self.specs = specs
        self.root = root
        self.env = env  # or what makes it when a server starts: most sessions start none (5 KiB held for nothing)
        self.sandbox = sandbox
        self.timeout = timeout
        self.on_progress = on_progress
        self.running: dict[str, LanguageServer] = {}  # by spec name
        self._present: list[ServerSpec] | None = None  # those the workspace has files for, once asked

    def __bool__(self) -> bool:
        return bool(self.specs)

    async def with_files(self) -> list[ServerSpec]:
        """The servers the workspace has files for (present.py), asked once: a search of the workspace's symbols
        starts only those."""
        if self._present is None:
            from .present import WorkspaceLanguages

            self._present = await WorkspaceLanguages(self.root, self.specs).found()
        return self._present

    def languages(self) -> list[str]:
        return list(dict.fromkeys(language for spec in self.specs for language in spec.languages))

    def spec_for(self, path: Path) -> ServerSpec | None:
        return next((spec for spec in self.specs if spec.serves(path)), None)

    def for_path(self, path: Path) -> LanguageServer | None:
        spec = self.spec_for(path)
        if spec is None:
            return None
        if spec.name not in self.running:
            env = self.env() if callable(self.env) else self.env
            self.running[spec.name] = LanguageServer(spec, self.root, env, self.sandbox, self.timeout, self.on_progress)
        return self.running[spec.name]

    def started(self) -> list[LanguageServer]:
        return [server for server in self.running.values() if server.alive]

    async def stop(self) -> None:
        servers = list(self.running.values())
        self.running.clear()
        await asyncio.gather(*(server.stop() for server in servers), return_exceptions=True)
