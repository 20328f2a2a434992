"""/mcp in both front ends: servers start once the first screen is up, and the list shows each
server's state, tools and last error."""

from __future__ import annotations

from typing import Any

from agentcli.core.mcp.config import parse
from agentcli.ui.tui.widgets.entries import NoticeEntry
from tests import waiting
from tests.core.test_mcp import stdio
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode harness fixture)
from tests.ui.test_tui_support import SIZE, send, tui, until  # noqa: F401
from tests.ui.test_tui_support import plain as shown_text


def configured() -> dict[str, Any]:
    return parse({"mcpServers": {"fake": stdio(), "gone": {"command": "/nonexistent/mcp-server"}}}, "test")


async def test_line_mode_starts_servers_after_the_banner_and_lists_them(plain):  # noqa: F811
    ui = plain(mcp_servers=configured(), mcp_startup_timeout=60.0)
    servers = ui.app.session.mcp.servers
    await waiting.until(
        lambda: servers["fake"].state == "ready" and servers["gone"].state == "failed",
        "the MCP servers starting in line mode",
        detail=lambda: str({n: (s.state, s.error) for n, s in servers.items()}),
    )
    shown = await ui.submit("/mcp")
    assert "fake" in shown and "ready" in shown and "mcp__fake__echo" in shown
    assert "gone" in shown and "failed" in shown and "last error:" in shown and "/nonexistent/mcp-server" in shown


async def test_tui_starts_servers_after_the_first_screen_and_lists_them(tui):  # noqa: F811
    app = tui(mcp_servers=configured(), mcp_startup_timeout=60.0)
    async with app.run_test(size=SIZE) as pilot:
        servers = app.session.mcp.servers
        await until(
            pilot,
            lambda: servers["fake"].state == "ready" and servers["gone"].state == "failed",
            "the MCP servers starting in the TUI",
        )
        assert "mcp__fake__echo" in app.session.main.tools
        await send(pilot, "/mcp")
        await until(
            pilot,
            lambda: "mcp__fake__echo" in shown_text(list(app.conversation.query(NoticeEntry))[-1]),
            "the /mcp list",
        )
        listing = shown_text(list(app.conversation.query(NoticeEntry))[-1])
        assert "ready" in listing and "failed" in listing and "/nonexistent/mcp-server" in listing
