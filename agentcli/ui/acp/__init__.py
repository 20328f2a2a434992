"""`agentcli acp`: an Agent Client Protocol agent on standard input and output, for editors.

Built on the official SDK (``agent-client-protocol``, ``import acp``): ``wire.py`` is the transport,
``agent.py`` the methods, ``updates.py`` the events as updates, ``approvals.py`` the questions,
``children.py`` subagents as child sessions (the one module that speaks raw JSON-RPC), ``editor.py`` the client's
files under the file tools, ``options.py`` the model picker and titles, ``elicitation.py`` a server's questions.
Like every front end, it uses only the session's public surface (``SessionSurface``, core/surface.py).
docs/acp.md is the user's side.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .wire import protect_stdout, stdio_transport


def run_acp(settings_for: Callable[[Path, bool, list[str]], Any], *, mode: str | None = None) -> int:
    """Serve one client until it closes standard input. Returns the exit code."""
    protocol_fd = protect_stdout()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="agentcli acp: %(message)s")
    try:
        asyncio.run(serve(protocol_fd, settings_for, mode))
    except KeyboardInterrupt:
        return 130
    return 0


async def serve(protocol_fd: int, settings_for: Callable[[Path, bool, list[str]], Any], mode: str | None) -> None:
    import acp
    from acp.connection import StreamDirection, StreamEvent

    from .agent import AcpAgent
    from .children import opted_in

    transport = await stdio_transport(protocol_fd)

    async def send_raw(params: dict[str, Any]) -> None:
        await transport.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    agent = AcpAgent(settings_for, send_raw, mode=mode)

    def observe(event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING and (said := opted_in(event.message)) is not None:
            agent.subagents = said

    try:
        await acp.run_agent(agent, transport, observers=[observe])  # type: ignore[arg-type]  # mypy names no member of the SDK's Agent Protocol it misses; to find
    except ConnectionError:  # the client went away mid-answer: nothing left to say to it
        pass
    finally:
        await agent.close()
