"""An MCP server's prompts as slash commands in the TUI and in line mode. Servers connect after the first
screen, so after the prompt took the session's commands: '/' still completes their prompts, /help lists them,
and sending one runs it (the stand-in API gets the prompt's text, not the command); '@' completes its resources. One features server
(tests/fakes/mcp_features.py) over streamable HTTP serves the whole module: a server process costs about a
second of CPU to import the mcp SDK."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.core.mcp.config import parse
from agentcli.ui.tui.widgets.entries import ReportEntry
from agentcli.ui.tui.widgets.prompt import Completions, PromptInput
from tests import waiting
from tests.fakes.anthropic_server import text
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode harness fixture)
from tests.ui.test_tui_support import SIZE, send, until
from tests.ui.test_tui_support import plain as shown_text

ROOT = Path(__file__).resolve().parents[2]
SERVE = (
    "import sys; from tests.fakes.mcp_features import build; "
    "build().run('streamable-http', host='127.0.0.1', port=int(sys.argv[1]))"
)
REVIEWED = "Please review app.py, looking at security."  # what the server's prompt says for these arguments


@pytest.fixture(scope="module")
def features(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The features server over HTTP, as the mcp_servers setting naming it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log_path = tmp_path_factory.mktemp("features") / "server.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-c", SERVE, str(port)], cwd=ROOT, stdout=log, stderr=log)

        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return proc.poll() is not None  # it died: fail below, with its log

        try:
            waiting.wait_until(listening, "the features MCP server listening", detail=log_path.read_text)
            assert proc.poll() is None, log_path.read_text()
            yield parse({"mcpServers": {"features": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}}, "test")
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def sent_first(server: Any) -> str:
    return str(server.requests[0]["messages"][0]["content"])


async def test_tui_completes_and_runs_the_prompt_of_a_server_that_connected_after_the_first_screen(
    server, tui, features
):
    server.script(text("Reviewed."))
    app = tui(mcp_servers=features, mcp_startup_timeout=60.0)
    async with app.run_test(size=SIZE) as pilot:
        area, menu = app.query_one(PromptInput), app.query_one(Completions)
        remote = app.session.mcp.servers["features"]
        await until(pilot, lambda: remote.state == "ready", "the features server to connect")
        area.focus()
        area.load_text("/mcp__f")
        area.move_cursor(area.document.end)  # before the Changed message the load posted is handled
        await until(pilot, lambda: menu.showing and menu.items, "the prompt offered after '/'")
        [offered] = menu.items
        assert offered.label == "/mcp__features__review FILE [FOCUS]"
        assert "Review a file." in offered.hint and "MCP features" in offered.hint
        await pilot.press("tab")
        assert area.text == "/mcp__features__review "
        area.insert("app.py security")
        await pilot.press("enter")
        await until(pilot, lambda: len(server.requests) == 1 and not app.busy, "the prompt's answer")
        assert REVIEWED in sent_first(server) and "/mcp__features" not in sent_first(server)
        await send(pilot, "/help")
        await until(pilot, lambda: app.conversation.query(ReportEntry), "the /help report")
        assert "/mcp__features__review FILE [FOCUS]" in shown_text(list(app.conversation.query(ReportEntry))[-1])
        area.load_text("read @features:no")  # and '@' completes the server's resources
        area.move_cursor(area.document.end)
        await until(pilot, lambda: menu.showing and menu.items, "the resource offered after '@'")
        assert [(c.label, c.hint) for c in menu.items] == [("features:notes://today", "Today's notes.")]


async def test_line_mode_completes_lists_and_runs_a_servers_prompt(plain, server, features):  # noqa: F811
    server.script(text("Reviewed."))
    ui = plain(mcp_servers=features, mcp_startup_timeout=60.0)
    remote = ui.app.session.mcp.servers["features"]
    await ui.until(lambda: remote.state == "ready", "the features server to connect")
    await ui.idle()
    buffer = ui.app.prompt.default_buffer
    ui.pipe.send_text("/mcp__f")
    await ui.until(lambda: buffer.complete_state and buffer.complete_state.completions, "the prompt offered")
    [offered] = buffer.complete_state.completions
    assert offered.text == "/mcp__features__review" and "Review a file." in offered.display_meta_text
    ui.pipe.send_text("\t")
    await ui.until(lambda: buffer.text == "/mcp__features__review", "the completion to be taken")
    prompts = ui.app.prompts
    ui.pipe.send_text(" app.py security\r")
    await ui.until(lambda: ui.app.prompts > prompts and ui.app.at_prompt, "the next prompt")
    assert len(server.requests) == 1 and REVIEWED in sent_first(server)
    assert "Reviewed." in ui.text
    assert "/mcp__features__review FILE [FOCUS]" in await ui.submit("/help")
    ui.pipe.send_text("read @features:no")  # and '@' completes the server's resources
    await ui.until(lambda: buffer.complete_state and buffer.complete_state.completions, "the resource offered")
    assert [c.text for c in buffer.complete_state.completions] == ["@features:notes://today"]
    ui.pipe.send_text("\x03")  # ctrl+c clears the line
    await ui.quit()
