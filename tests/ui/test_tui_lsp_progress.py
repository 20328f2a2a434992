"""A language server's work in progress (LSP's ``$/progress``) in the TUI's status bar, from a scripted server
(tests/fakes/lsp_progress.py) that holds its indexing until the test lets it end."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from textual.content import Content

from agentcli.ui.tui.app import AgentApp
from agentcli.ui.tui.widgets.status_bar import StatusBar
from tests.fakes import lsp_progress
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use
from tests.narrow import of
from tests.ui.test_tui_support import SIZE, send, until


def bar(app: AgentApp) -> str:
    return of(Content, app.query_one(StatusBar).content).plain


async def test_a_language_server_s_indexing_shows_in_the_status_bar_until_it_ends(server, tui, repo: Path):
    fifo = repo / "indexed.fifo"
    os.mkfifo(fifo)
    server.script(tool_use("lsp", {"operation": "document_symbols", "path": "src/app/views.py"}), text("Done."))
    app = tui(
        lsp={
            "scripted": {
                "command": [sys.executable, lsp_progress.__file__, str(fifo)],
                "languages": ["python"],
                "patterns": ["*.py"],
            }
        }
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "symbols of views.py")
            await until(pilot, lambda: "indexing: python 40 %" in bar(app), "the server's progress in the status bar")
            await asyncio.to_thread(fifo.write_text, "done\n")  # the server ends its indexing
            await until(pilot, lambda: not app.busy, "the turn's end")
            assert "indexing" not in bar(app)
    finally:
        await app.session.lsp.stop()
    [result] = tool_results(server.requests[1])
    assert tool_result_text(result) == "symbols of src/app/views.py: 0"
