"""An MCP transport whose server lives in another program: each JSON-RPC message the client sends is
handed to ``send``, which delivers it (the Agent SDK's ``mcp_message`` control request, for its
in-process servers) and returns the server's reply, or None for a notification.

Requests are relayed at once, each in its own task, so a slow tool call holds up no other message.
A message that cannot be delivered is answered with a JSON-RPC error, so that one request fails
and the connection stays.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

Send = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
DELIVERY_FAILED = -32603  # JSON-RPC's internal error


@asynccontextmanager
async def relay_transport(send: Send) -> AsyncIterator[Any]:
    import anyio
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    async def deliver(message: dict[str, Any], replies: Any) -> None:
        try:
            reply = await send(message)
        except Exception as exc:  # noqa: BLE001 - the one request fails, with the reason
            reply = {
                "jsonrpc": "2.0",
                "id": message.get("id"),
                "error": {"code": DELIVERY_FAILED, "message": str(exc) or type(exc).__name__},
            }
        if message.get("id") is None or not isinstance(reply, dict) or "id" not in reply:
            return  # a notification, or its acknowledgement
        try:
            await replies.send(SessionMessage(jsonrpc_message_adapter.validate_python(reply, by_name=False)))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        except ValueError as exc:
            await replies.send(exc)

    async with create_client_server_memory_streams() as (client_streams, (requests, replies)):
        async with anyio.create_task_group() as group:

            async def pump() -> None:
                async for item in requests:
                    if isinstance(item, SessionMessage):
                        group.start_soon(
                            deliver, item.message.model_dump(by_alias=True, mode="json", exclude_unset=True), replies
                        )

            group.start_soon(pump)
            try:
                yield client_streams
            finally:
                group.cancel_scope.cancel()
