"""A hostile repository: commands its config names never run, and git never sees the API key."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentcli.core.engine.context import main_system_prompt
from agentcli.core.system.workspace import Workspace
from tests.conftest import API_KEY, git
from tests.core.test_git_tools import call

HOOKS = {  # config key: what the hook writes in the marker file
    "core.fsmonitor": "fsmonitor",
    "diff.evil.textconv": "textconv",
    "diff.evil.command": "diff-driver",
    "diff.external": "external-diff",
    "filter.evil.clean": "clean-filter",
    "gpg.program": "gpg",
}


def sign(root: Path) -> None:
    """Give HEAD a (made-up) signature, so `git log --show-signature` would call gpg.program."""
    raw = subprocess.run(
        ["git", "cat-file", "commit", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    head, body = raw.split("\n\n", 1)
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    signed = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=root,
        check=True,
        input=f"{head}\n{signature}\n\n{body}",
        capture_output=True,
        text=True,
    ).stdout.strip()
    git(root, "update-ref", "refs/heads/main", signed)


@pytest.fixture
def hostile(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """``repo`` with every hook pointing at a script that writes to a marker file, and a changed file."""
    marker = tmp_path / "marker"
    (tmp_path / "hooks").mkdir()
    (repo / ".gitattributes").write_text("*.py diff=evil filter=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "Attributes")
    sign(repo)
    for key, name in HOOKS.items():
        script = tmp_path / "hooks" / name
        script.write_text(f'#!/bin/sh\necho "{name} $ANTHROPIC_API_KEY" >> {marker}\ncat >/dev/null\n')
        script.chmod(0o755)
        git(repo, "config", key, str(script))
    git(repo, "config", "log.showSignature", "true")
    (repo / "src" / "app" / "auth.py").write_text("changed\n")
    return repo, marker


def test_the_hooks_are_live(hostile):
    """The repository really is hostile: plain git commands run its hooks."""
    repo, marker = hostile
    for command in (["status"], ["diff"], ["log", "-1"], ["blame", "src/app/auth.py"]):
        subprocess.run(
            ["git", *command],
            cwd=repo,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=30,
            env={**os.environ, "GIT_PAGER": "cat"},
        )
    ran = marker.read_text()
    assert all(name in ran for name in ("fsmonitor", "clean-filter", "diff-driver", "textconv", "gpg")), ran


async def test_no_repository_command_runs_for_the_prompt_or_any_git_tool(hostile, monkeypatch):
    repo, marker = hostile
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    prompt = main_system_prompt(Workspace.at(repo))
    assert "Current branch: main" in prompt and " M src/app/auth.py" in prompt
    results = [
        await call(repo, "git_status"),
        await call(repo, "git_diff"),
        await call(repo, "git_diff", path="src/app/auth.py"),
        await call(repo, "git_diff", staged=True),
        await call(repo, "git_log"),
        await call(repo, "git_log", path="src/app/auth.py"),
        await call(repo, "git_blame", path="src/app/auth.py"),
        await call(repo, "git_blame", path="README.md"),
    ]
    assert not [output for output, is_error in results if is_error]
    assert not marker.exists(), marker.read_text()
    status, diff = results[0][0], results[1][0]
    assert " M src/app/auth.py" in status and "+changed" in diff


async def test_git_gets_no_secrets(repo, tmp_path, monkeypatch):
    """A `git` first on PATH records the environment it is given."""
    dump = tmp_path / "env.txt"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\nenv >> {dump}\nexec {shutil.which("git")} "$@"\n')
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    main_system_prompt(Workspace.at(repo))
    output, is_error = await call(repo, "git_status")
    assert not is_error and output.startswith("## main")
    seen = dump.read_text()
    assert "GIT_OPTIONAL_LOCKS=0" in seen and API_KEY not in seen and "ghp-secret" not in seen
