"""Line mode on a real terminal (a pty, read through a terminal emulator): an MCP server's question asked in
the middle of a turn shows its answer prompts and echoes what is typed, and Enter moves on to the next field.
(The turn's live line, redrawn four times a second under the prompt, erased each prompt as it was drawn, so
a user saw the question and nothing else; only ctrl+c got out.)"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from tests.core.test_mcp_features import results
from tests.e2e.terminal import Terminal
from tests.fakes.anthropic_server import text, tool_use
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def servers_ready(term: Terminal) -> bool:
    """Ask /mcp until it says the server is ready (line mode starts its servers while the user types)."""
    asked = term.text.count("› /mcp")
    term.type("/mcp\r")
    wait_until(
        lambda: term.text.count("› /mcp") > asked and term.text.rsplit("› /mcp", 1)[1].count("\n›"),
        "the /mcp report",
        detail=lambda: term.text[-3000:],
    )
    return bool(re.search(r"^features\s+ready", term.text.rsplit("› /mcp", 1)[1], re.M))


def test_a_servers_question_in_a_turn_shows_its_prompts_and_takes_the_typed_answers(
    server, api_env, repo, isolated_home
):
    config = isolated_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "features": {
                        "command": sys.executable,
                        "args": ["-m", "tests.fakes.mcp_features"],
                        "env": {"PYTHONPATH": str(ROOT)},
                    }
                }
            }
        )
    )
    (config / "config.toml").write_text('mcp_startup_timeout = 60.0\n[permissions]\nallow = ["mcp__features__*"]\n')
    server.script(tool_use("mcp__features__ask", {}), text("Thanks, noted."))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    term = Terminal([sys.executable, "-m", "agentcli", "--plain"], cwd=repo, env=env)
    try:
        term.wait_for("line mode")
        wait_until(lambda: servers_ready(term), "the MCP server ready")
        term.type("ask me\r")
        term.wait_for("? The MCP server features asks: What name should the report use?")
        term.wait_for("Answer it? [Y]es, [n]o declines, ctrl+c cancels:")
        term.type("y\r")
        term.wait_for("  Name:")
        term.type("Ada")
        term.wait_for("  Name: Ada")  # echoed as typed
        term.type("\r")
        term.wait_for("  Count (a whole number, optional):")
        term.type("3\r")
        wait_until(lambda: "accept: Ada x3" in results(server), "the server's answer")
        term.wait_for("Thanks, noted.")
        # What was asked and answered stays on the screen, above the turn's end.
        assert (
            "? The MCP server features asks: What name should the report use?\n"
            "  Answer it? [Y]es, [n]o declines, ctrl+c cancels: y\n"
            "  Name: Ada\n"
            "  Count (a whole number, optional): 3\n"
        ) in term.text, term.text[-3000:]
    finally:
        term.close()
