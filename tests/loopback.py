"""Small servers the tests start on this machine: a web site on the host's loopback, and a socket that greets."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def http_site(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 (a free port) while the block runs; yields the site's base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def greet(listener: socket.socket, greeting: bytes) -> list[str]:
    """Answer each connection to the listening ``listener`` with ``greeting``, in a thread, until it is closed;
    the list it returns gets "connection" for each one taken."""
    seen: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            seen.append("connection")
            conn.sendall(greeting)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return seen
