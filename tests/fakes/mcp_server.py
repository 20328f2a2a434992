"""A real MCP server for the tests, written with the ``mcp`` SDK.

    python -m tests.fakes.mcp_server [--http PORT] [--touch FILE] [--mute]

stdio by default; ``--http PORT`` serves streamable HTTP on 127.0.0.1:PORT/mcp. ``--touch FILE``
writes its pid to FILE at start (the attack a hostile .mcp.json would make). ``--mute`` never answers at all
(reads nothing, writes nothing): a server that hangs before the handshake.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def build() -> MCPServer:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.utilities.types import Image
    from mcp_types import ResourceLink

    server = MCPServer("fake")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return f"echo: {text}"

    @server.tool(description="Add two numbers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Return an environment variable of the server process.")
    def env(name: str) -> str:
        return os.environ.get(name, "(unset)")

    @server.tool(description="Return a picture and a link.")
    def picture() -> list:  # type: ignore[type-arg]  # the SDK reads it: a bare list is content, list[X] a result
        return [
            "a one-pixel picture",
            Image(data=PIXEL, format="png"),
            ResourceLink(name="notes", uri="file:///notes.txt", mime_type="text/plain"),
        ]

    @server.tool(description="Fail as a tool.")
    def fail() -> str:
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError("the tool failed on purpose")

    @server.tool(description="Die in the middle of the call.")
    def crash() -> str:
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool(description="Never answer.")
    async def hang() -> str:
        import anyio

        await anyio.sleep_forever()
        return ""

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--touch")
    parser.add_argument("--mute", action="store_true")
    args = parser.parse_args()
    if args.touch:
        Path(args.touch).write_text(f"{os.getpid()}\n")
    if args.mute:  # a server that never answers: it blocks here until it is killed
        threading.Event().wait()
    server = build()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
