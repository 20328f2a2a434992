"""MCP's edges that need no server process: a name two servers' tools both clean to (one is refused with a
warning, none disappears silently), and what a server's transport hands agentcli instead of a message (a line
that is not JSON-RPC is told once; a cut-off stream is not called that, and /mcp keeps why)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.core.mcp import bridge
from agentcli.core.mcp.config import parse
from agentcli.core.mcp.remote import RemoteTool
from agentcli.core.mcp.session_servers import McpServers
from agentcli.core.tools import ToolRegistry


def servers(tmp_path: Path, **specs: dict[str, Any]) -> tuple[McpServers, list[str]]:
    told: list[str] = []
    made = McpServers(
        parse({"mcpServers": specs}, "mcp.json"),
        root=tmp_path,
        env={},
        startup_timeout=1,
        tool_timeout=1,
        on_ready=lambda server: None,
        on_trouble=told.append,
    )
    return made, told


def listing(made: McpServers, name: str, *tools: str) -> None:
    """What the server would have listed once ready."""
    server = made.servers[name]
    server.state, server.tools = "ready", [RemoteTool(tool, f"{tool} of {name}", {"type": "object"}) for tool in tools]
    server.offered = server._names(server.tools)


def test_a_name_another_servers_tool_holds_is_refused_with_a_warning(tmp_path):
    # Server a's tool b__c and server a__b's tool c are both mcp__a__b__c once named.
    made, _ = servers(tmp_path, a={"command": "x"}, a__b={"command": "y"})
    listing(made, "a", "b__c", "other")
    listing(made, "a__b", "c")
    registry, warnings = ToolRegistry([]), list[str]()
    bridge.sync_tools(registry, made.servers["a"], warnings.append)
    bridge.sync_tools(registry, made.servers["a__b"], warnings.append)
    assert sorted(registry.names()) == ["mcp__a__b__c", "mcp__a__other"]
    assert registry.get("mcp__a__b__c").server is made.servers["a"]  # type: ignore[union-attr]
    [warning] = warnings
    assert "'a__b'" in warning and "'c'" in warning and "mcp__a__b__c" in warning
    assert "another server" in warning and "left out" in warning
    bridge.sync_tools(registry, made.servers["a__b"], warnings.append)  # listed again: still refused, not taken
    assert registry.get("mcp__a__b__c").server is made.servers["a"]  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", ["stdio", "sse"])
async def test_a_message_that_is_not_json_rpc_is_told_once_and_a_cut_off_stream_is_only_recorded(tmp_path, transport):
    import httpx2
    from pydantic import TypeAdapter, ValidationError

    spec = {"command": "x"} if transport == "stdio" else {"type": "sse", "url": "http://127.0.0.1:9/sse"}
    made, told = servers(tmp_path, s=spec)
    server = made.servers["s"]
    # What the SDK's SSE reader hands on when the server's stream ends mid-message: not the server's words.
    await server._message(httpx2.RemoteProtocolError("peer closed connection without sending complete message body"))
    assert told == [] and "peer closed connection" in server.error
    try:
        TypeAdapter(int).validate_json("this is not json")
    except ValidationError as exc:  # what the SDK's transports hand on for a line they cannot parse
        for _ in range(2):
            await server._message(exc)
    [note] = told
    said = (
        "wrote a line that is not MCP (JSON-RPC) to its output"
        if transport == "stdio"
        else "sent a message that is not MCP (JSON-RPC)"
    )
    assert note == f"MCP server 's' {said}; agentcli ignored it (the MCP log has the details)."


def test_a_401_names_the_headers_or_the_url_that_carry_the_token():
    from agentcli.core.mcp.remote import unauthorized

    def told(spec: dict[str, Any]) -> str:
        [config] = parse({"mcpServers": {"docs": {"type": "http", **spec}}}, "mcp.json").values()
        return unauthorized(401, config)

    assert told({"url": "https://d.example/mcp", "headers": {"X-Key": "${A}", "X-Team": "${B}"}}) == (
        "the server answered 401 Unauthorized: check the X-Key, X-Team headers in mcp.json and the tokens in ${A}, ${B}"
    )
    assert told({"url": "https://d.example/mcp?key=${DOCS_KEY}"}) == (
        "the server answered 401 Unauthorized: check the credentials in its url in mcp.json and the token in "
        "${DOCS_KEY}"
    )
    assert "check the credentials in its url in mcp.json" in told({"url": "https://d.example/mcp?key=abc"})
    assert "it sends no credentials" in told({"url": "https://d.example/mcp"})
    assert unauthorized(403, parse({"mcpServers": {"d": {"type": "http", "url": "https://x"}}}, "f")["d"]) == ""


def test_two_tools_whose_names_collide_keep_their_names_when_listed_again_in_another_order(tmp_path):
    made, told = servers(tmp_path, s={"command": "x"})
    server = made.servers["s"]
    listing(made, "s", "a.b", "a_b")
    assert {name: remote.name for name, remote in server.offered.items()} == {
        "mcp__s__a_b": "a.b",
        "mcp__s__a_b_2": "a_b",
    }
    listing(made, "s", "a_b", "a?b", "a.b")  # listed again (tools/list_changed): the order changed, one more came
    assert {name: remote.name for name, remote in server.offered.items()} == {
        "mcp__s__a_b": "a.b",
        "mcp__s__a_b_2": "a_b",
        "mcp__s__a_b_3": "a?b",
    }
    listing(made, "s", "a_b")  # a.b went: a_b is still called what the conversation called it
    assert {name: remote.name for name, remote in server.offered.items()} == {"mcp__s__a_b_2": "a_b"}
    assert [note for note in server.notes if "'a?b'" in note]  # the third one is told as the second was
