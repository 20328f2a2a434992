"""A language server that reports work in progress and holds it until told: at ``initialized`` it asks to create
a progress token and begins "indexing" at 40 %; once a line can be read from the FIFO named by its first argument
(the test writes it) it reports 70 %, then ends the work. It publishes empty diagnostics for each file opened and
answers documentSymbol with none. Standard library only; run as ``python lsp_progress.py FIFO``."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

_lock = threading.Lock()


def read() -> dict[str, Any] | None:
    headers: dict[str, str] = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        key, _, value = line.decode().partition(":")
        headers[key.strip().lower()] = value.strip()
    message: dict[str, Any] = json.loads(sys.stdin.buffer.read(int(headers["content-length"])))
    return message


def send(message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    with _lock:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()


def progress(value: dict[str, Any]) -> None:
    send({"method": "$/progress", "params": {"token": "index", "value": value}})


def work(fifo: str) -> None:
    send({"id": "create-1", "method": "window/workDoneProgress/create", "params": {"token": "index"}})
    progress({"kind": "begin", "title": "indexing", "percentage": 40})
    with open(fifo) as told:  # blocks until the test opens it to write
        told.readline()
    progress({"kind": "report", "percentage": 70})
    progress({"kind": "end"})


def main() -> None:
    while (message := read()) is not None:
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            send({"id": ident, "result": {"capabilities": {"textDocumentSync": 1, "documentSymbolProvider": True}}})
        elif method == "initialized":
            threading.Thread(target=work, args=(sys.argv[1],), daemon=True).start()
        elif method == "textDocument/didOpen":
            uri = message["params"]["textDocument"]["uri"]
            send({"method": "textDocument/publishDiagnostics", "params": {"uri": uri, "diagnostics": []}})
        elif method == "shutdown":
            send({"id": ident, "result": None})
        elif method == "exit":
            return
        elif ident is not None and method is not None:
            send({"id": ident, "result": [] if method == "textDocument/documentSymbol" else None})


if __name__ == "__main__":
    main()
