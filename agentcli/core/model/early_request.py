"""The first model request of a process, sent and read with ``httpx2`` while the SDK is still importing.

``import anthropic`` takes about a second; ``httpx2`` (which the SDK sends with) a tenth of that. A
call that comes while the import still runs (``-p`` at launch, an early Enter in line mode or the
TUI) sends its body at once, with the headers, URL, timeout and connection settings the SDK's client
would use, and reads the reply's server-sent events itself (``EarlyStream``), so that even the end
of the run need not wait for the SDK. A status error, or a failure to send, waits for the SDK and
becomes its own exception (the caller's ``SdkError``); the SDK's client then takes over the connection,
and later calls are the SDK's. Anything this module does not mirror (proxies,
ANTHROPIC_CUSTOM_HEADERS, a base URL with a query or an underscore in its host) takes the normal path.

The server-sent events are decoded here, in about thirty lines (``EarlyStream._events``), rather
than with an SSE library (httpx-sse, sseclient): the point of this module is to import little before
the first request, the events must split exactly as the SDK's own ``SSEDecoder`` splits them (the
SDK reads every later reply), and the SDK's decoder itself cannot be used before the SDK is imported.

Nothing here reaches into the SDK: what it sends is written out (its version and API version
below, its headers, its HTTP client's defaults), and errors become the SDK's own through its public
client (``api_errors.sdk_error``). pyproject.toml pins ``anthropic`` to that version, and
tests/core/test_early_request.py compares the request this module sends (URL, headers and their
order, body bytes) with the SDK's, both as the stand-in server receives them, so a version bump
that changes any of them fails a test.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from .credentials import Credentials, base_url

if TYPE_CHECKING:
    import ssl

    import httpx2

SDK_VERSION = "2.14.0"  # anthropic.__version__
API_VERSION = "2026-10-21"  # the anthropic-version header the SDK sends
# What the SDK does not read the same way from here: these send the first request the normal way.
NOT_MIRRORED = (
    "ANTHROPIC_CUSTOM_HEADERS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def sdk_ready() -> bool:
    """Whether ``anthropic`` is imported completely (not absent, nor half-way in another thread)."""
    module = sys.modules.get("anthropic")
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


def env_mirrored() -> bool:
    """Whether the environment sets nothing this module does not mirror (``NOT_MIRRORED``)."""
    from ..system.secret_env import environ  # ANTHROPIC_CUSTOM_HEADERS is held as a secret, out of os.environ

    env = environ()
    return not any(name in env for name in NOT_MIRRORED)


def applies(creds: Credentials) -> bool:
    """Whether the first request may go out before the SDK is imported."""
    from urllib.parse import urlsplit

    url = urlsplit(base_url(creds))
    return env_mirrored() and not url.query and "_" not in (url.hostname or "")


def headers(creds: Credentials, timeout: float) -> dict[str, str]:
    """The headers ``AsyncAnthropic`` sends on a first attempt (less its platform details)."""
    token = creds.auth_token or creds.api_key
    return {
        "x-stainless-timeout": "NOT_GIVEN",
        "x-stainless-retry-count": "0",
        "x-stainless-read-timeout": str(timeout),
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"AsyncAnthropic/Python {SDK_VERSION}",
        "X-Stainless-Lang": "python",
        "X-Stainless-Package-Version": SDK_VERSION,
        **({"Authorization": f"Bearer {token}"} if token else {}),
        "X-Stainless-Async": "async:asyncio",
        "anthropic-version": API_VERSION,
    }


_tls_made = threading.Lock()
_tls: list[ssl.SSLContext] = []


def tls_context() -> ssl.SSLContext:
    """The TLS context httpx2's transport would make itself (``create_ssl_context``'s defaults: reading the
    system's certificates takes about 20 ms of CPU), made once a process: -p's import thread makes it while
    the main thread waits on git, so the first request does not."""
    with _tls_made:
        if not _tls:
            import httpx2

            _tls.append(httpx2.create_ssl_context())
        return _tls[0]


def http_client(timeout: float) -> httpx2.AsyncClient:
    """A client with the SDK's defaults (``DefaultAsyncHttpxClient``): it becomes the SDK client's own."""
    import httpx2

    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    options: list[tuple[int, int, int | bool]] = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, True)]
    for name, value in (("TCP_KEEPINTVL", 60), ("TCP_KEEPCNT", 5), ("TCP_KEEPIDLE", 60)):
        if hasattr(socket, name):
            options.append((socket.IPPROTO_TCP, getattr(socket, name), value))
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(timeout),
        limits=limits,
        follow_redirects=True,
        transport=httpx2.AsyncHTTPTransport(verify=tls_context(), limits=limits, socket_options=options),
    )


def request(
    http: httpx2.AsyncClient, creds: Credentials, body: bytes, timeout: float, sent: Callable[[], None]
) -> httpx2.Request:
    """``POST {base}/v1/messages`` with ``body``, as the SDK's ``_build_request`` makes it; ``sent`` is called
    once its last byte is written (httpcore2's ``trace`` extension, which sends nothing)."""
    import httpx2

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event == "http11.send_request_body.complete":
            sent()

    url = httpx2.URL(base_url(creds))
    path = url.raw_path if url.raw_path.endswith(b"/") else url.raw_path + b"/"
    return http.build_request(
        "POST",
        url.copy_with(raw_path=path + b"v1/messages"),
        headers=headers(creds, timeout),
        content=body,
        timeout=httpx2.Timeout(timeout),
        extensions={"trace": trace},
    )


class Node(dict):  # type: ignore[type-arg]
    """A JSON object of a stream event, read as the SDK's typed events are: by attribute (None when absent)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return self.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def model_dump(self, **_: Any) -> dict[str, Any]:
        """As a pydantic model's ``model_dump(exclude_none=True)``: plain dicts, no None values."""
        return cast(dict[str, Any], _without_none(self))


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value]
    return value


# What the first request needs of the client that sent it: the SDK's own error for a reply the SDK did not fetch, from
# its status, headers and body (``LLM`` gives it: ``api_errors.sdk_error`` once the SDK is imported).
SdkError = Callable[[int, "httpx2.Headers", bytes], Awaitable[BaseException]]


class EarlyStream:
    """The first reply's events, read without waiting for the SDK (which may still be importing
    when the whole reply is in): server-sent events decoded as the SDK's ``SSEDecoder`` and
    ``AsyncStream`` do, each event as ``Node``s. An ``error`` event raises what ``sdk_error``
    makes of it, as the SDK's ``AsyncStream`` would raise it."""

    def __init__(self, response: httpx2.Response, sdk_error: SdkError) -> None:
        self.response = response
        self.sdk_error = sdk_error

    async def __aiter__(self) -> AsyncIterator[Node]:
        try:
            async for event, data in self._events():
                if event == "ping" or event is None:
                    continue
                if event == "error":
                    raise await self.sdk_error(self.response.status_code, self.response.headers, error_event(data))
                if data:
                    yield json.loads(data, object_hook=Node)
        finally:
            await self.response.aclose()

    async def _events(self) -> AsyncIterator[tuple[str | None, str]]:
        event: str | None = None
        data: list[str] = []
        async for chunk in self._chunks():
            for raw_line in chunk.splitlines():
                line = raw_line.decode("utf-8")
                if not line:
                    if event or data:
                        yield event, "\n".join(data)
                    event, data = None, []
                    continue
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    event = value
                elif name == "data":
                    data.append(value)

    async def _chunks(self) -> AsyncIterator[bytes]:
        data = b""
        async for chunk in self.response.aiter_bytes():
            for line in chunk.splitlines(keepends=True):
                data += line
                if data.endswith((b"\r\r", b"\n\n", b"\r\n\r\n")):
                    yield data
                    data = b""
        if data:
            yield data

    async def close(self) -> None:
        await self.response.aclose()


def error_event(data: str) -> bytes:
    """An ``error`` event of the stream written out again, for the SDK to read as its own stream would."""
    return ("event: error\n" + "".join(f"data: {line}\n" for line in data.split("\n")) + "\n").encode()
