"""Standard input and output as the SDK's message transport, with two things the SDK's own stdio lacks.

- Only protocol reaches standard output. The process's file descriptor 1 is pointed at standard error
  before anything runs, so a print, a child process or a library that writes to "stdout" lands in the
  diagnostics; the protocol goes to a private copy of the real standard output.
- A line that is not JSON, or JSON that is not a JSON-RPC message, gets a JSON-RPC error (parse error,
  invalid request) instead of being dropped in silence, as JSON-RPC 2.0 asks.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

LIMIT = 50 * 1024 * 1024  # bytes of one message (images come inline), as the SDK's default


def protect_stdout() -> int:
    """Keep the real standard output for the protocol (the returned descriptor) and point descriptor 1 and
    ``sys.stdout`` at standard error."""
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


class StdioTransport:
    """The ``acp`` ``Transport`` over newline-delimited JSON: one message a line."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def send(self, message: dict[str, Any]) -> None:
        self.writer.write(json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
        await self.writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                line = exc.partial
                if not line.strip():
                    return None
            except asyncio.LimitOverrunError as exc:
                await self.skip_line(exc.consumed)
                await self.error(-32700, f"Parse error: a message longer than {LIMIT} bytes")
                continue
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                await self.error(-32700, f"Parse error: {exc}")
                continue
            if (
                not isinstance(message, dict)
                or message.get("jsonrpc") != "2.0"
                or not (isinstance(message.get("method"), str) or "id" in message)
            ):
                ident = message.get("id") if isinstance(message, dict) else None
                await self.error(-32600, "Invalid request: not a JSON-RPC 2.0 message", ident)
                continue
            return message

    async def skip_line(self, seen: int) -> None:
        """Drop the rest of a line too long to take."""
        while True:
            await self.reader.readexactly(seen)
            try:
                await self.reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                seen = exc.consumed
            except asyncio.IncompleteReadError:
                return

    async def error(self, code: int, text: str, ident: Any = None) -> None:
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": ident if isinstance(ident, (str, int)) else None,
                "error": {"code": code, "message": text},
            }
        )

    async def close(self) -> None:
        self.writer.close()


async def stdio_transport(protocol_fd: int) -> StdioTransport:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = os.fdopen(protocol_fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return StdioTransport(reader, writer)
