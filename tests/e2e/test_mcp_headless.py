"""MCP servers from the command line, the user's config and a cloned repository's .mcp.json, with
`agentcli -p` and `agentcli mcp list` run as a user runs them (real subprocesses, real servers)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.core.mcp.remote import _alive
from tests import waiting
from tests.conftest import stranger_clone
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import offers_tool, text, tool_names, tool_result_text, tool_results, tool_use

ROOT = Path(__file__).resolve().parents[2]


def server_spec(*extra: str) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server", *extra],
        "env": {"PYTHONPATH": str(ROOT)},
    }


@pytest.fixture(autouse=True)
def patient_startup(isolated_home: Path) -> None:
    """The user's config gives servers 60 s to start: the default 10 s is short for a loaded machine, where a
    Python server's imports alone took longer, and these tests are about which servers start, not how fast."""
    config = isolated_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("mcp_startup_timeout = 60\n")


@pytest.fixture
def cloned(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose .mcp.json would start a server that leaves a file behind, cloned with git. The
    file is in the clone: a trusted repository's server runs in the OS sandbox, which lets it write only there."""
    evidence = tmp_path / "clone" / "pwned.pid"  # where stranger_clone puts the clone
    mcp_json = json.dumps({"mcpServers": {"helper": server_spec("--touch", str(evidence))}})
    return stranger_clone(tmp_path, {".mcp.json": mcp_json, "README.md": "# Nice tool\n"}), evidence


def test_an_untrusted_repositorys_mcp_json_starts_nothing(server, api_env, cloned):
    repo, evidence = cloned
    server.script(text("A nice tool."))
    proc = agentcli("-p", "summarize this repo", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert not evidence.exists(), "the repository's MCP server ran in an untrusted workspace"
    assert not any(name.startswith("mcp__") for name in tool_names(server.requests[0]))
    [warning] = [line for line in proc.stderr.splitlines() if "not trusted" in line]
    assert ".mcp.json" in warning and "MCP server helper" in warning and "--trust-workspace" in warning


def test_a_trusted_repositorys_server_starts_and_stops_when_agentcli_exits(server, api_env, cloned):
    repo, evidence = cloned
    server.when(lambda b: offers_tool(b, "mcp__helper__echo"), text("The helper is there."))
    # Without the sandbox: in its PID namespace the server's pid is not the host's one this test watches.
    proc = agentcli(
        "-p", "summarize this repo", "--trust-workspace", cwd=repo, env={**api_env, "AGENTCLI_SANDBOX": "off"}
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The helper is there."
    pid = int(evidence.read_text())  # the attack works once trusted: so the test above tests something
    waiting.wait_until(lambda: not _alive(pid), "the MCP server stopping when agentcli exited")


def test_mcp_config_needs_no_trust_a_failed_server_is_reported_and_calls_go_through(server, api_env, repo, tmp_path):
    server.when(
        lambda b: offers_tool(b, "mcp__mine__add"), tool_use("mcp__mine__add", {"a": 20, "b": 22}), text("It is 42.")
    )
    pid_file = tmp_path / "mine.pid"
    config = json.dumps(
        {"mcpServers": {"mine": server_spec("--touch", str(pid_file)), "gone": {"command": "/nonexistent/mcp-server"}}}
    )
    proc = agentcli(
        "-p",
        "add",
        "--mcp-config",
        config,
        "--permission-mode",
        "bypassPermissions",
        "--output-format",
        "stream-json",
        "--verbose",
        cwd=repo,
        env=api_env,
    )
    assert proc.returncode == 0, proc.stderr
    [init] = [line for line in map(json.loads, proc.stdout.splitlines()) if line.get("subtype") == "init"]
    assert init["mcp_servers"] == [{"name": "mine", "status": "connected"}, {"name": "gone", "status": "failed"}]
    assert "mcp__mine__add" in init["tools"] and not any(t.startswith("mcp__gone__") for t in init["tools"])
    assert (
        "MCP server 'gone' failed to start: the command /nonexistent/mcp-server was not found"
        in proc.stdout + proc.stderr
    )
    [result] = tool_results(server.requests[1])
    assert tool_result_text(result) == "42"
    pid = int(pid_file.read_text())
    waiting.wait_until(lambda: not _alive(pid), "the MCP server stopping on the fast exit path")


def test_a_bad_mcp_config_is_one_clear_sentence(repo):
    proc = agentcli("-p", "hi", "--mcp-config", '{"mcpServers": {"x": {"type": "carrier-pigeon"}}}', cwd=repo)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "agentcli: --mcp-config: MCP server 'x': unknown type 'carrier-pigeon'; use stdio, http or sse."
    )
    proc = agentcli("-p", "hi", "--mcp-config", "no-such-file.json", cwd=repo)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "neither a file nor a JSON object" in proc.stderr


def test_mcp_list_shows_state_and_tools_and_what_is_held_back(cloned, isolated_home):
    repo, evidence = cloned
    user_file = isolated_home / "config" / "mcp.json"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text(
        json.dumps({"mcpServers": {"mine": server_spec(), "broken": {"command": "/nonexistent/server"}}})
    )
    proc = agentcli("mcp", "list", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout
    assert "mine" in lines and "ready" in lines and "mcp__mine__echo" in lines
    assert "broken" in lines and "failed" in lines and "/nonexistent/server" in lines
    assert "helper" in lines and "held back" in lines and "not trusted" in lines
    assert not evidence.exists()
