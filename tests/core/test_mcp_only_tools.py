"""--tools (``Session.only_tools``) gives the main agent and the subagents registries of their own: an MCP
server that connects afterwards must still reach both."""

from __future__ import annotations

from tests.core.test_mcp import run, servers, stdio
from tests.fakes.anthropic_server import offers_tool, text, tool_names, tool_use


async def test_a_server_ready_after_only_tools_reaches_the_main_agent_and_its_subagents(make_session, server):
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Echo a word", "prompt": "Echo hi."}),
        text("Done."),
    )
    server.when(lambda b: not offers_tool(b, "task"), tool_use("mcp__fake__echo", {"text": "hi"}), text("Echoed."))
    session, _ = make_session(
        mcp_servers=servers(fake=stdio()), permission_mode="bypassPermissions", mcp_startup_timeout=60.0
    )
    session.only_tools(["read_file", "task"])
    await run(session)
    main = [b for b in server.requests if offers_tool(b, "task")]
    child = [b for b in server.requests if not offers_tool(b, "task")]
    assert set(tool_names(main[0])) >= {"read_file", "task", "mcp__fake__echo"}
    assert "bash" not in tool_names(main[0])
    assert child and {"read_file", "mcp__fake__echo"} <= set(tool_names(child[0])), tool_names(child[0])
    assert "bash" not in tool_names(child[0])
