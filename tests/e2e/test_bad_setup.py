"""A broken setup as a user meets it from the command line: one sentence on stderr, the right exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_headless import agentcli


def one_sentence(stderr: str) -> str:
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert stderr.startswith("agentcli: ")
    return stderr.strip()


@pytest.mark.parametrize("args", [["agents"], ["-p", "hi"]])
def test_an_agent_type_setting_that_is_not_a_table(repo, api_env, args):
    settings = repo / ".agentcli" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text('[agents]\nexplore = "claude-haiku-4-5"\n')
    proc = agentcli(*args, cwd=repo, env=api_env)
    assert proc.returncode == 2
    assert f"{settings}: 'agents.explore' must be a table" in one_sentence(proc.stderr)


def test_a_model_that_is_not_a_string(repo, api_env):
    settings = repo / ".agentcli" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text("model = 123\n")
    proc = agentcli("-p", "hi", cwd=repo, env=api_env)
    assert proc.returncode == 2
    assert one_sentence(proc.stderr) == f"agentcli: {settings}: 'model' must be a string, not 123."


def test_agents_lists_a_configured_model(repo):
    settings = repo / ".agentcli" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text('[agents.explore]\nmodel = "claude-haiku-4-5"\n')
    proc = agentcli("agents", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "model: claude-haiku-4-5 (config)" in proc.stdout


def test_a_data_folder_that_is_a_file(repo, api_env, isolated_home):
    isolated_home.mkdir(parents=True)
    (isolated_home / "projects").write_text("")
    proc = agentcli("-p", "hello", cwd=repo, env=api_env)
    assert proc.returncode == 1
    message = one_sentence(proc.stderr)
    assert message.startswith(f"agentcli: Cannot save sessions in {isolated_home / 'projects'}/")
    assert "(not a directory)" in message
