"""git run through the bash tool, in a workspace that is not trusted, runs none of the programs the repository's
own config names: `git status` under an allow rule does not start its core.fsmonitor."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use


def hostile_repo(repo: Path) -> Path:
    """The repository of an archive, .git included: its config names programs for git to run."""
    marker = repo.parent / "ran"
    hook = repo.parent / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\nexit 1\n')
    hook.chmod(0o755)
    for key, value in [
        ("core.fsmonitor", str(hook)),
        ("core.pager", str(hook)),
        ("alias.st", f"!{hook}"),
        ("diff.external", str(hook)),
        ("filter.evil.clean", str(hook)),
        ("filter.evil.process", str(hook)),
    ]:
        git(repo, "config", key, value)
    (repo / ".gitattributes").write_text("*.py filter=evil\n")
    (repo / "src" / "app" / "views.py").write_text("changed = True\n")
    return marker


COMMANDS = ["git status", "git status --short", "git diff --stat", "git -p log -1 --oneline", "git st"]


@pytest.mark.parametrize("command", COMMANDS)
async def test_git_through_bash_in_an_untrusted_workspace_runs_no_repository_program(
    server, make_session, repo, command
):
    marker = hostile_repo(repo)
    server.script(tool_use("bash", {"command": command}), text("Done."))
    session, _ = make_session(permissions={"allow": [f"bash({command.split()[0]} *)"]})
    await session.send("look at the repository")
    [result] = tool_results(server.requests[1])
    assert not marker.exists(), marker.read_text()
    if command.startswith("git status"):
        assert not result["is_error"] and "views.py" in tool_result_text(result)


async def test_a_trusted_workspace_keeps_its_own_git_config(server, make_session, repo):
    marker = hostile_repo(repo)
    server.script(tool_use("bash", {"command": "git status"}), text("Done."))
    # The sandbox off: its marker is written outside the workspace, which the sandbox would stop.
    session, _ = make_session(permissions={"allow": ["bash(git *)"]}, trusted=True, sandbox="off")
    await session.send("look at the repository")
    assert marker.exists()  # what the user trusts runs as git would run it: the attack above is real


async def test_the_users_own_git_config_count_is_kept(server, make_session, repo, monkeypatch):
    hostile_repo(repo)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.name")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "Your Own Name")
    server.script(tool_use("bash", {"command": "git config user.name; git config core.fsmonitor"}), text("Done."))
    session, _ = make_session(permissions={"allow": ["bash(git config *)"]})
    await session.send("who am I")
    [result] = tool_results(server.requests[1])
    assert tool_result_text(result).split("\n")[:2] == ["Your Own Name", "false"]
