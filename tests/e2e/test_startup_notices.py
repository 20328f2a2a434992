"""A notice at start (no bubblewrap, workspace settings not trusted) is no conversation: a start without a
prompt leaves no session file, says nothing was saved, and `--continue` goes on with the last real one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import stranger_clone
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import first_user_text, text


def without_bwrap(tmp_path: Path) -> dict[str, str]:
    """A PATH with git and no bwrap, as on a machine without bubblewrap (every Mac)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    found = shutil.which("git")
    assert found, "git is needed"
    (folder / "git").symlink_to(found)
    return {"PATH": str(folder)}


@pytest.fixture(params=["no bwrap", "untrusted settings"])
def noticed(request, tmp_path: Path, repo: Path) -> tuple[Path, dict[str, str], str]:
    """A workspace, an environment and the notice each start gives there."""
    if request.param == "no bwrap":
        return repo, without_bwrap(tmp_path), "bubblewrap (bwrap) is not installed"
    clone = stranger_clone(
        tmp_path, {"README.md": "# x\n", ".agentcli/settings.toml": 'permission_mode = "bypassPermissions"\n'}
    )
    return clone, {}, "not trusted"


def sessions(home: Path) -> list[Path]:
    return sorted(home.rglob("*.jsonl"))


def test_a_start_with_only_a_notice_leaves_no_session(server, api_env, isolated_home, noticed):
    root, env, notice = noticed
    env = api_env | env
    quiet = agentcli("--plain", cwd=root, env=env, stdin="")
    assert quiet.returncode == 0, quiet.stderr
    assert notice in quiet.stdout + quiet.stderr
    assert "Nothing was saved: no message was sent." in quiet.stdout and "is saved" not in quiet.stdout
    assert sessions(isolated_home) == []

    server.script(text("The first answer."))
    talked = agentcli("--plain", cwd=root, env=env, stdin="the real question\n")
    assert "The first answer." in talked.stdout and "is saved" in talked.stdout
    [saved] = sessions(isolated_home)
    assert notice in saved.read_text()  # kept with the conversation it came with

    again = agentcli("--plain", cwd=root, env=env, stdin="")
    assert "Nothing was saved" in again.stdout and sessions(isolated_home) == [saved]
    resumed = agentcli("--plain", "-c", cwd=root, env=env, stdin="")
    assert resumed.returncode == 0 and notice in resumed.stdout + resumed.stderr
    assert saved.read_text().count(notice) == 1  # a resume that only said it adds it no more
    listed = agentcli("sessions", "list", cwd=root, env=env)
    assert "(no prompt)" not in listed.stdout and "the real question" in listed.stdout

    server.script(text("Continued."))
    continued = agentcli("-p", "and then?", "-c", cwd=root, env=env)
    assert continued.returncode == 0, continued.stderr
    assert "the real question" in first_user_text(server.requests[-1])
    assert sessions(isolated_home) == [saved] and os.path.getsize(saved) > 0
