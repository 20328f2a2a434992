"""A misbehaving MCP server over stdio in the standard library alone (no mcp SDK to import, so it starts in
a blink), speaking the 2025-06-18 protocol's JSON-RPC lines by hand:

    python -m tests.fakes.mcp_raw [--noise] [--bad-notification]

- ``--noise`` writes a line that is not JSON-RPC to standard output before anything else;
- ``--bad-notification`` sends, once the client says it is initialized, a progress notification without the
  fields the protocol requires (a client library that cannot validate it logs a traceback);
- the tool ``echo`` answers ``echo: <text>``; the tool ``crash`` writes a line to standard error and exits in the
  middle of the call.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {"name": "crash", "description": "Die in the middle of the call.", "inputSchema": {"type": "object"}},
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The result of a request, or {"error": …}."""
    if method == "initialize":
        return {
            "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
        }
    if method == "ping":
        return {"result": {}}
    if method == "tools/list":
        return {"result": {"tools": TOOLS}}
    if method == "tools/call" and params.get("name") == "echo":
        said = (params.get("arguments") or {}).get("text", "")
        return {"result": {"content": [{"type": "text", "text": f"echo: {said}"}], "isError": False}}
    if method == "tools/call" and params.get("name") == "crash":
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    return {"error": {"code": -32601, "message": f"no method {method}"}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--bad-notification", action="store_true")
    args = parser.parse_args()
    if args.noise:
        sys.stdout.write("starting up, not json\n")
        sys.stdout.flush()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, ident = message.get("method", ""), message.get("id")
        if method == "notifications/initialized" and args.bad_notification:
            send({"method": "notifications/progress", "params": {"bogus": 1}})
        if ident is not None and method:
            send({"id": ident, **answer(method, message.get("params") or {})})


if __name__ == "__main__":
    main()
