"""The OS sandbox's way to the allowed hosts (``sandbox_allowed_hosts``): outside the sandbox, ``HostProxy``, an HTTP
proxy on a Unix socket that connects only to those hosts; inside, ``BRIDGE``, a TCP port on the sandbox's own
loopback that reaches the socket, which the sandbox binds in read-only at ``PROXY_FOLDER`` (sandbox.py)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from . import session_dirs

PROXY_FOLDER = "/run/agentcli-proxy"  # inside the sandbox, read-only: the proxy's socket
PROXY_SOCKET = "proxy.sock"

# Inside the sandbox, before the command: a bridge from a TCP port of the sandbox's own loopback to the
# proxy's Unix socket (programs speak TCP to a proxy), in a child the command's PID namespace ends with it.
# The proxy variables point at it; the bridge's pid goes to the leftover counter, which skips it.
BRIDGE = r"""import os, socket, sys, threading
path, argv = sys.argv[1], sys.argv[2:]
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
url = "http://127.0.0.1:%d" % listener.getsockname()[1]
pid = os.fork()
if pid == 0:
    import ctypes  # the relay makes Unix sockets, so the seccomp filter comes after it: none may steer it
    if ctypes.CDLL(None).prctl(4, ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)):
        os._exit(1)
    def pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    def relay(conn):
        up = socket.socket(socket.AF_UNIX)
        try:
            up.connect(path)
        except OSError:
            conn.close()
            return
        threading.Thread(target=pump, args=(up, conn), daemon=True).start()
        pump(conn, up)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=relay, args=(conn,), daemon=True).start()
listener.close()
for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
    os.environ[name] = url
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "localhost,127.0.0.1,::1"
os.environ["AGENTCLI_PROXY_PID"] = str(pid)
os.execvp(argv[0], argv)
"""


def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    """Whether ``host`` is one of ``allowed``: a name exactly (any case, a final dot ignored), or under a
    ``*.example.com`` entry (a subdomain, not example.com itself). An IP address only when listed as is."""
    host = host.strip().strip("[]").lower().rstrip(".")
    for entry in allowed:
        entry = entry.strip().lower().rstrip(".")
        if host == entry or (entry.startswith("*.") and host.endswith(entry[1:]) and len(host) > len(entry) - 1):
            return True
    return False


class HostProxy:
    """Outside the sandbox: an HTTP proxy on a Unix socket, bound read-only into the sandbox, that connects
    only to the allowed hosts: ``CONNECT host:port`` (HTTPS and any TCP) and plain HTTP requests with an
    absolute URL. Anything else, or any other host, gets 403 and no connection. One thread with its own
    event loop per session."""

    def __init__(self, hosts: Sequence[str]) -> None:
        import asyncio

        self.hosts = tuple(hosts)
        self.folder = session_dirs.make("agentcli-proxy-")
        self.path = self.folder / PROXY_SOCKET
        self.refused: list[str] = []  # hosts refused, in order (the result of a call may name them)
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._server: Any = None

        async def start() -> None:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=65536)
            os.chmod(self.path, 0o600)

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="agentcli-sandbox-proxy", daemon=True)
        self._thread.start()
        ready.wait(30)

    async def _serve(self, reader: Any, writer: Any) -> None:
        import asyncio
        from urllib.parse import urlsplit

        upstream = None
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            if method.upper() == "CONNECT":
                host, _, port_text = target.rpartition(":")
            else:
                url = urlsplit(target)
                host, port_text = (url.hostname or "", str(url.port or 80)) if url.scheme == "http" else ("", "")
            port = int(port_text) if port_text.isdigit() else 0
            if not host or not 0 < port < 65536 or not host_allowed(host, self.hosts):
                self.refused.append(host or target)
                writer.write(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
                    + f"agentcli's OS sandbox connects only to the hosts in sandbox_allowed_hosts, and "
                    f"{host or target} is not one of them.\n".encode()
                )
                await writer.drain()
                return
            try:
                upstream = await asyncio.wait_for(asyncio.open_connection(host.strip("[]"), port), 30)
            except (TimeoutError, OSError) as exc:
                writer.write(f"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n{exc}\n".encode())
                await writer.drain()
                return
            if method.upper() == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream[1].write(head)
            await asyncio.gather(_pump(reader, upstream[1]), _pump(upstream[0], writer))
        except (TimeoutError, OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            for w in (writer, upstream[1] if upstream else None):
                if w is not None:
                    w.close()

    def close(self) -> None:
        def stop() -> None:
            if self._server is not None:
                self._server.close()
            self._loop.stop()

        if self._loop.is_running():
            self._loop.call_soon_threadsafe(stop)
            self._thread.join(10)
        session_dirs.remove(self.folder)


async def _pump(reader: Any, writer: Any) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        pass
