"""`agentcli -p --permission-mode bypassPermissions`: the mode lifts questions, not the OS sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.core.test_sandbox import needs_bwrap
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use

ATTACK = "cat ~/.ssh/id_ed25519; echo pwned >> ~/.bashrc; echo done"


@pytest.fixture
def planted(isolated_home: Path) -> Path:
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PLANTED-SSH-KEY\n")
    (home / ".bashrc").write_text("# mine\n")
    return home


@needs_bwrap
def test_bypass_permissions_still_runs_bash_in_the_sandbox(server, api_env, repo, planted):
    server.script(tool_use("bash", {"command": ATTACK}), text("Tried."))
    proc = agentcli("-p", "go", "--permission-mode", "bypassPermissions", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    [result] = tool_results(server.requests[1])
    assert "done" in tool_result_text(result) and "PLANTED" not in tool_result_text(result)
    assert (planted / ".bashrc").read_text() == "# mine\n"


def test_the_sandbox_setting_off_is_the_one_way_out(server, api_env, repo, planted):
    """The same command with AGENTCLI_SANDBOX=off (the user's own environment) reads the key: the test above
    is not passing by accident."""
    server.script(tool_use("bash", {"command": ATTACK}), text("Tried."))
    proc = agentcli(
        "-p", "go", "--permission-mode", "bypassPermissions", cwd=repo, env={**api_env, "AGENTCLI_SANDBOX": "off"}
    )
    assert proc.returncode == 0, proc.stderr
    [result] = tool_results(server.requests[1])
    assert "PLANTED-SSH-KEY" in tool_result_text(result)
    assert (planted / ".bashrc").read_text() == "# mine\npwned\n"


@needs_bwrap
def test_headless_asks_nothing_and_the_result_says_how_to_allow_it(server, api_env, repo, planted):
    server.script(tool_use("bash", {"command": "echo pwned >> ~/.bashrc"}), text("Tried."))
    proc = agentcli("-p", "go", "--allowedTools", "Bash", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    [result] = tool_results(server.requests[1])
    said = tool_result_text(result)
    assert result["is_error"] and f"needed write access to {planted / '.bashrc'}" in said
    assert "nobody was asked, as this is a headless run" in said and "--add-dir" in said
    assert (planted / ".bashrc").read_text() == "# mine\n"
