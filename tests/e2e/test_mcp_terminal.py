"""What `agentcli -p` puts on the terminal when MCP servers misbehave, run as a user runs it (a real subprocess,
real servers): a server that writes a line that is not JSON-RPC to its standard output, one whose session ends
badly (it dies in the middle of a call), and HTTP and SSE servers that answer 401. Each gets one line on standard
error, never the mcp library's tracebacks or log lines; those go to the session's MCP log. Standard output holds
the answer alone. One run; the misbehaving server is tests/fakes/mcp_raw.py, which needs no mcp SDK to start."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tests.core.test_mcp_features import refusing_http  # noqa: F401 (a fixture: an MCP endpoint that answers 401)
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text, tool_results, tool_use

ROOT = Path(__file__).resolve().parents[2]
# Library output that must never reach the terminal: tracebacks, logging's level names, the SDK's module names.
LIBRARY_NOISE = re.compile(
    r"Traceback|\b(ERROR|WARNING|INFO|DEBUG)\b|mcp\.(client|shared)|pydantic|JSONRPC|"
    r"File \"|Exception"
)


def test_misbehaving_servers_get_one_line_each_on_the_terminal_and_their_details_go_to_the_log(
    server, api_env, repo, isolated_home, refusing_http
):
    (isolated_home / "config").mkdir(parents=True, exist_ok=True)
    (isolated_home / "config" / "config.toml").write_text("mcp_startup_timeout = 60\n")  # a loaded machine
    # A line that is not JSON-RPC on its standard output, a notification the mcp library cannot validate (it logs
    # a traceback), and a crash tool that kills it mid-call.
    noisy = {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_raw", "--noise", "--bad-notification"],
        "env": {"PYTHONPATH": str(ROOT)},
    }
    docs = {"type": "http", "url": refusing_http, "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
    feed = {"type": "sse", "url": refusing_http.replace("/mcp", "/sse")}  # no credentials at all
    config = json.dumps({"mcpServers": {"noisy": noisy, "docs": docs, "feed": feed}})
    server.script(tool_use("mcp__noisy__echo", {"text": "hi"}), tool_use("mcp__noisy__crash", {}), text("All done."))
    proc = agentcli(
        "-p",
        "go",
        "--mcp-config",
        config,
        "--allowedTools",
        "mcp__noisy__*",
        cwd=repo,
        env={**api_env, "DOCS_TOKEN": "wrong"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "All done.\n"
    # `--allowedTools 'mcp__noisy__*'` (Claude Code's form) let the server's tools run without asking.
    results = [str(block["content"]) for body in server.requests for block in tool_results(body)]
    assert "echo: hi" in results[0] and "exited during the call to crash" in results[1]

    lines = proc.stderr.splitlines()
    assert not LIBRARY_NOISE.search(proc.stderr), proc.stderr
    assert all(line.startswith("agentcli: ") for line in lines), proc.stderr
    [noise] = [line for line in lines if "not MCP" in line]
    assert "'noisy'" in noise and "MCP log" in noise
    [refused] = [line for line in lines if "'docs'" in line]
    assert "401 Unauthorized" in refused and "Authorization header" in refused and "${DOCS_TOKEN}" in refused
    [bare] = [line for line in lines if "'feed'" in line]
    assert "401 Unauthorized" in bare and "sends no credentials" in bare
    [ended] = [line for line in lines if "stopped working" in line]
    assert "'noisy'" in ended and "crash" in ended and "crashing on purpose" in ended  # its last stderr line
    assert len(lines) == 4, proc.stderr

    [log] = list(isolated_home.rglob("mcp.log"))
    details = log.read_text()
    assert "Traceback" in details and "starting up, not json" in details
    assert "sent something that is not MCP" in details
    assert "Failed to validate notification: notifications/progress" in details  # the library's, kept here
