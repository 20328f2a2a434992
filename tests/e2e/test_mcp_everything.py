"""@modelcontextprotocol/server-everything (npm), a server nobody here wrote, on the 2025 protocol: installed by
`make test` (make mcp-everything) from tests/mcp_everything/package-lock.json. One session, one server start:
its Tasks-only tool is held back, its roots, progress, prompts and resources work as with our own server."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.core.events import ToolProgress
from agentcli.core.mcp.config import parse
from tests.fakes.anthropic_server import text, tool_names, tool_results, tool_use

EVERYTHING = Path(__file__).resolve().parents[1] / "mcp_everything" / "node_modules" / ".bin" / "mcp-server-everything"

pytestmark = pytest.mark.skipif(
    not EVERYTHING.exists(),
    reason="server-everything is not installed: it needs Node and npm, and `make test` (make mcp-everything) "
    "installs it from tests/mcp_everything/",
)


async def test_server_everything_beyond_tools(make_session, server, repo):
    server.script(
        tool_use("mcp__everything__get-roots-list", {}),
        tool_use("mcp__everything__trigger-long-running-operation", {"duration": 0.2, "steps": 2}),
        text("done"),
        text("prompted"),
        text("read"),
    )
    configs = parse({"mcpServers": {"everything": {"command": str(EVERYTHING)}}}, "test")
    session, events = make_session(
        mcp_servers=configs, mcp_startup_timeout=60.0, permissions={"allow": ["mcp__everything__*"]}
    )
    try:
        await session.send("go")
        offered = tool_names(server.requests[0])
        assert "mcp__everything__echo" in offered and "mcp__everything__simulate-research-query" not in offered
        everything = session.mcp.servers["everything"]
        assert [name for name, _ in everything.held_back] == ["simulate-research-query"]
        results = [block for body in server.requests for block in tool_results(body)]
        assert repo.resolve().as_uri() in str(results[0]["content"])
        assert len(events.of(ToolProgress)) == 2 and not results[1]["is_error"]
        assert "Everything" in str(server.requests[0]["system"])  # its instructions
        await session.send("/mcp__everything__args-prompt Lisbon")
        assert "Lisbon" in str(server.requests[-1]["messages"][-1])
        uri = next(r.uri for r in everything.resources if r.uri.endswith("features.md"))
        await session.send(f"Summarize @everything:{uri}")
        attached = server.requests[-1]["messages"][-1]["content"][1]["text"]
        assert attached.startswith(f'<resource server="everything" uri="{uri}">')
    finally:
        await session.aclose()
