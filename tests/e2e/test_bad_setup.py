"""A broken setup as a user meets it from the command line: one sentence on stderr, the right exit code."""

from __future__ import annotations

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


FRONT_ENDS = {"tui": [], "plain": ["--plain"], "headless": ["-p", "hi"]}


@pytest.mark.parametrize("value", ["", "  "])
@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_an_empty_resume_is_a_usage_error(repo, api_env, front_end, value):
    proc = agentcli(*FRONT_ENDS[front_end], "--resume", value, cwd=repo, env=api_env)
    assert proc.returncode == 2
    assert one_sentence(proc.stderr) == ("agentcli: --resume needs a session id; 'agentcli sessions list' shows them")


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_bad_resume_exits_1_with_one_sentence_from_every_front_end(repo, api_env, front_end):
    proc = agentcli(*FRONT_ENDS[front_end], "--resume", "nope", cwd=repo, env=api_env)
    assert (proc.returncode, one_sentence(proc.stderr)) == (
        1,
        "agentcli: No session 'nope' in this workspace; 'agentcli sessions list' shows them.",
    )


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_session_that_cannot_open_exits_1_from_every_front_end(repo, api_env, isolated_home, front_end):
    """Past the command line's own checks, each front end opens the session and reports failure itself."""
    isolated_home.mkdir(parents=True)
    (isolated_home / "projects").write_text("")
    proc = agentcli(*FRONT_ENDS[front_end], cwd=repo, env=api_env, terminal=front_end == "tui")
    assert proc.returncode == 1
    assert one_sentence(proc.stderr).startswith(f"agentcli: Cannot save sessions in {isolated_home / 'projects'}/")
