"""A cloned repository is hostile input: its submodules, its includes and core.worktree cannot make git
run a command or read outside the workspace, from the startup snapshot or any git tool."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentcli.core.engine.context import main_system_prompt
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import ToolRegistry, default_tools
from agentcli.core.tools.base import ToolContext
from tests.conftest import API_KEY, TOOLS, git

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA"


async def call(root: Path, name: str, mode: str = "default", **args) -> tuple[str, bool]:
    ctx = ToolContext(
        workspace=Workspace.at(root), emit=lambda event: None, permissions=Permissions(mode=mode), settings=TOOLS
    )
    outcome = await ToolRegistry(default_tools(root=root)).call(name, args, ctx.for_call("toolu_test"))
    return outcome.output, outcome.is_error


async def every_git_call(root: Path, mode: str = "default") -> list[tuple[str, bool]]:
    """The system prompt (the startup snapshot), then every git tool, with and without paths."""
    prompt = main_system_prompt(Workspace.at(root))
    return [
        (prompt, False),
        await call(root, "git_status", mode),
        await call(root, "git_diff", mode),
        await call(root, "git_diff", mode, staged=True),
        await call(root, "git_diff", mode, path="sub"),
        await call(root, "git_log", mode),
        await call(root, "git_log", mode, path="README.md"),
        await call(root, "git_blame", mode, path="README.md"),
    ]


def plain_git(root: Path, *args: str) -> None:
    """What a user's own git would do here (without touching the index)."""
    subprocess.run(
        ["git", *args],
        cwd=root,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, "GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0"},
    )


def hook(tmp_path: Path, name: str) -> str:
    """A script that notes it ran in tmp_path/marker and passes its input through."""
    script = tmp_path / "hooks" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(f'#!/bin/sh\necho "{name} $ANTHROPIC_API_KEY" >> {tmp_path / "marker"}\ncat\n')
    script.chmod(0o755)
    return str(script)


@pytest.fixture
def with_submodule(repo: Path, tmp_path: Path) -> Path:
    """``repo`` with a real submodule ``sub`` whose files all name the driver ``evil`` in .gitattributes."""
    source = tmp_path / "sub-source"
    source.mkdir()
    (source / "a.txt").write_text("hello\n")
    (source / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    git(source, "init", "-q", "-b", "main")
    git(source, "add", "-A")
    git(source, "commit", "-qm", "Submodule")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
    git(repo, "commit", "-qm", "Add a submodule")
    assert (repo / ".git" / "modules" / "sub" / "config").is_file() and (repo / "sub" / "a.txt").is_file()
    return repo


def arm(repo: Path, tmp_path: Path, attack: str) -> None:
    """Set one attack in the submodule's own config (.git/modules/sub/config) and change its file to match."""
    sub_config = ["config", "--file", str(repo / ".git" / "modules" / "sub" / "config")]
    changed = repo / "sub" / "a.txt"
    if attack == "filter":
        git(repo, *sub_config, "filter.evil.clean", hook(tmp_path, "clean"))
        git(repo, *sub_config, "filter.evil.smudge", hook(tmp_path, "smudge"))
        os.utime(changed, (2_000_000_000, 2_000_000_000))  # same content, new time: git must clean it to compare
        return
    changed.write_text("changed\n")
    if attack == "fsmonitor":
        git(repo, *sub_config, "core.fsmonitor", hook(tmp_path, "fsmonitor"))
        return
    git(repo, "config", "diff.submodule", "diff")  # the top-level diff shows the submodule's own diff
    if attack == "external diff":
        git(repo, *sub_config, "diff.external", hook(tmp_path, "external-diff"))
    elif attack == "textconv":
        git(repo, *sub_config, "diff.evil.textconv", hook(tmp_path, "textconv"))


@pytest.mark.parametrize("attack", ["filter", "external diff", "textconv", "fsmonitor"])
async def test_a_submodule_runs_nothing(with_submodule, tmp_path, monkeypatch, attack):
    """Each attack sits in the submodule's own config. (fsmonitor was already off: git hands its -c
    settings to the git it starts in a submodule; the test guards that too.)"""
    repo, marker = with_submodule, tmp_path / "marker"
    arm(repo, tmp_path, attack)
    plain_git(repo, "status")
    plain_git(repo, "diff")
    assert marker.exists(), f"the {attack} attack is not live: plain git did not run it"
    marker.unlink()
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    results = await every_git_call(repo)
    assert not marker.exists(), f"git ran the submodule's {attack}: {marker.read_text()}"
    assert not [output for output, is_error in results[1:5] if is_error]
    assert "Current branch: main" in results[0][0] and results[1][0].startswith("## main")


async def test_core_worktree_elsewhere_is_refused_even_in_plan_mode(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "id_ed25519").write_text(PRIVATE_KEY + "\n")
    (elsewhere / "README.md").write_text(PRIVATE_KEY + "\n")  # a tracked name: the diff would show it
    git(repo, "config", "core.worktree", str(elsewhere))
    results = await every_git_call(repo, mode="plan")
    shown = "\n".join(output for output, _ in results)
    assert PRIVATE_KEY not in shown and "id_ed25519" not in shown
    status, is_error = results[1]
    assert is_error and "core.worktree" in status and str(elsewhere) in status and "\n" not in status
    assert "# Git" not in results[0][0]  # no snapshot of someone else's tree in the prompt


async def test_git_variables_in_our_environment_are_ignored(repo, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "README.md").write_text(PRIVATE_KEY + "\n")
    monkeypatch.setenv("GIT_WORK_TREE", str(elsewhere))  # left over from a git hook that started us, say
    (repo / "README.md").write_text("changed\n")
    results = await every_git_call(repo)
    assert PRIVATE_KEY not in "\n".join(output for output, _ in results)
    assert "+changed" in results[2][0]


async def test_an_included_config_cannot_switch_anything_back_on(repo, tmp_path):
    """The repository's config includes a file it ships; what that file asks for is overridden."""
    outside = tmp_path / "outside-key"
    outside.write_text(PRIVATE_KEY + "\n")
    (repo / "tools").mkdir()
    (repo / "tools" / "git.cfg").write_text(
        f"[core]\n\tfsmonitor = {hook(tmp_path, 'fsmonitor')}\n"
        f"[diff]\n\texternal = {hook(tmp_path, 'external-diff')}\n"
        f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {hook(tmp_path, 'gpg')}\n"
        f"[blame]\n\tignoreRevsFile = {outside}\n"
    )
    git(repo, "config", "include.path", "../tools/git.cfg")
    git(repo, "config", f"includeIf.gitdir:{repo}/.path", "../tools/git.cfg")
    (repo / "README.md").write_text("changed\n")
    plain_git(repo, "diff")
    assert (tmp_path / "marker").exists(), "the include is not live: plain git did not run its diff.external"
    (tmp_path / "marker").unlink()
    results = await every_git_call(repo)
    shown = "\n".join(output for output, _ in results)
    assert PRIVATE_KEY not in shown and not (tmp_path / "marker").exists()
    assert not [output for output, is_error in results[:-1] if is_error]
    assert "+changed" in results[2][0]
    blame, is_error = results[-1]
    assert is_error and "blame.ignoreRevsFile" in blame and "\n" not in blame


async def test_a_workspace_inside_a_repository_sees_only_itself(repo):
    """The repository is larger than the workspace: status and diff stop at the workspace root."""
    (repo / "README.md").write_text(PRIVATE_KEY + "\n")
    (repo / "src" / "app" / "auth.py").write_text("changed\n")
    results = await every_git_call(repo / "src")
    assert PRIVATE_KEY not in "\n".join(output for output, _ in results)
    assert "README.md" not in results[1][0] and " M app/auth.py" in results[1][0]
    assert "+changed" in results[2][0]


async def test_a_partial_clone_fetches_nothing(tmp_path):
    """A blob missing from a partial clone would be fetched from the remote, which may name a command."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    (origin / "README.md").write_text("one\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "One")
    (origin / "README.md").write_text("two\n")
    git(origin, "commit", "-qam", "Two")
    git(origin, "config", "uploadpack.allowFilter", "true")
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{origin}", "clone")
    clone = tmp_path / "clone"  # it has README.md's newest blob only
    git(clone, "config", "remote.origin.url", f"ext::sh -c touch% {tmp_path / 'marker'}")
    git(clone, "config", "protocol.ext.allow", "always")
    results = await every_git_call(clone)
    assert not (tmp_path / "marker").exists(), "git ran the remote's command to fetch a missing blob"
    blame, is_error = results[-1]
    assert is_error and "promisor remote" in blame


async def test_a_linked_worktree_and_a_submodule_checkout_are_not_refused(with_submodule, tmp_path):
    """Both have a .git file naming a git directory elsewhere; a submodule's even sets core.worktree."""
    repo = with_submodule
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "linked"))
    (tmp_path / "linked" / "README.md").write_text("linked change\n")
    (repo / "sub" / "a.txt").write_text("sub change\n")
    layouts = ((tmp_path / "linked", "feature", "+linked change"), (repo / "sub", "main", "+sub change"))
    for root, branch, change in layouts:
        results = await every_git_call(root)
        assert f"Current branch: {branch}" in results[0][0]
        assert results[1][0].startswith(f"## {branch}") and change in results[2][0]
        assert not [output for output, is_error in results[1:] if is_error and "README" not in output]
