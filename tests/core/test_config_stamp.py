"""The hooks folder core.hooksPath names is read once and kept while no config file git read changes
(config_stamp): a change to any of them, or a file an include names made later, is seen by the next command.

The stamp would not trust a file changed within a second of the look (the clock's granularity); these tests
set that window to nothing so that a file written just now counts as settled, as it will be in a long session.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcli.core.system import config_stamp
from agentcli.core.system.protected_paths import hooks_folders
from tests.core.test_sandbox import bash, home, make_ctx, needs_bwrap, sandbox  # noqa: F401  (fixtures)
from tests.core.test_sandbox_held import user_git


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config_stamp, "_RACY_NS", 0)


@needs_bwrap
async def test_a_hooks_path_set_between_two_commands_is_held_in_the_second(sandbox, repo, settled, tmp_path):
    mark = tmp_path / "ran"
    user_git(repo, "config", "core.hooksPath", ".githooks")
    ok, out = await bash(make_ctx(repo, sandbox), "mkdir -p hooks2 && echo made > hooks2/kept")
    assert ok, out
    assert (str(repo), os.environ["HOME"], os.environ["XDG_CONFIG_HOME"]) in config_stamp._cache  # kept
    user_git(repo, "config", "core.hooksPath", "hooks2")  # the user moves the hooks folder
    ok, out = await bash(
        make_ctx(repo, sandbox),
        f"printf '#!/bin/sh\\necho hook >> {mark}\\n' > hooks2/pre-commit; chmod +x hooks2/pre-commit",
    )
    assert not ok and "Read-only file system" in out
    assert sorted(path.name for path in (repo / "hooks2").iterdir()) == ["kept"]
    user_git(repo, "commit", "-qm", "The user's commit", "--allow-empty")
    assert not mark.exists()


def test_an_included_file_made_later_and_homes_config_changed_later_are_read(repo, home, settled, tmp_path):
    user_git(repo, "config", "include.path", "../more.cfg")  # relative to .git/config: repo/more.cfg
    assert hooks_folders(repo) == []
    (repo / "more.cfg").write_text("[core]\n\thooksPath = /elsewhere/hooks\n")
    assert hooks_folders(repo) == [Path("/elsewhere/hooks")]
    (repo / "more.cfg").unlink()
    assert hooks_folders(repo) == []
    (Path(os.environ["HOME"]) / ".gitconfig").write_text("[core]\n\thooksPath = ~/global-hooks\n")
    assert hooks_folders(repo) == [Path(os.environ["HOME"], "global-hooks")]


def test_a_folder_below_the_work_trees_top_sees_the_repositorys_config_change(repo, settled):
    """git reads the config from the top of the work tree, and names it (and so what it includes) from there."""
    below = repo / "src" / "app"
    user_git(repo, "config", "include.path", "../more.cfg")
    assert hooks_folders(below) == []
    (repo / "more.cfg").write_text("[core]\n\thooksPath = /elsewhere/hooks\n")
    assert hooks_folders(below) == [Path("/elsewhere/hooks")]
