"""The read-only git tools on real temporary repositories, and their absence outside one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.git import GIT_ENV, Repository, find_repository, is_git_repo
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import ToolRegistry, default_tools
from agentcli.core.tools.base import Tool, ToolContext
from agentcli.core.tools.git import GitSnapshot, main_branch, snapshot
from tests.conftest import TOOLS, git
from tests.narrow import of

GIT_TOOLS = ["git_status", "git_diff", "git_log", "git_blame"]


def registry(root: Path) -> tuple[ToolRegistry, ToolContext]:
    ctx = ToolContext(workspace=Workspace.at(root), emit=lambda event: None, permissions=Permissions(), settings=TOOLS)
    return ToolRegistry(default_tools(root=root)), ctx


async def call(root: Path, name: str, **args) -> tuple[str, bool]:
    tools, ctx = registry(root)
    outcome = await tools.call(name, args, ctx.for_call("toolu_test"))
    return outcome.output, outcome.is_error


def commit(root: Path, message: str, **files: str) -> None:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


async def test_tools_are_offered_in_a_repo_and_need_no_approval(repo):
    tools, _ = registry(repo)
    assert [n for n in tools.names() if n.startswith("git_")] == GIT_TOOLS
    assert all(of(Tool, tools.get(n)).kind == "read" for n in GIT_TOOLS)
    output, is_error = await call(repo, "git_status")  # default mode, nobody to ask: still runs
    assert not is_error and output.startswith("## main")


async def test_status(repo):
    output, _ = await call(repo, "git_status")
    assert output == "## main\nWorking tree clean: nothing to commit."
    (repo / "src" / "app" / "auth.py").write_text("changed\n")
    (repo / "notes.txt").write_text("new\n")
    (repo / "build" / "ignored.py").write_text("x\n")
    output, is_error = await call(repo, "git_status")
    assert not is_error
    assert output.splitlines() == ["## main", " M src/app/auth.py", "?? notes.txt"]


async def test_status_does_not_touch_the_index(repo):
    index = repo / ".git" / "index"
    before = index.stat().st_mtime_ns
    (repo / "README.md").write_text("# Changed\n")
    await call(repo, "git_status")
    assert index.stat().st_mtime_ns == before
    assert GIT_ENV["GIT_OPTIONAL_LOCKS"] == "0"


async def test_diff_unstaged_staged_and_by_path(repo):
    output, _ = await call(repo, "git_diff")
    assert output.startswith("No unstaged changes (untracked files never show here")
    (repo / "README.md").write_text("# Demo app\n\nA tiny app for tests, now changed.\n")
    (repo / "src" / "app" / "views.py").write_text("from .auth import login\n")
    output, is_error = await call(repo, "git_diff")
    assert not is_error
    assert "+A tiny app for tests, now changed." in output and "src/app/views.py" in output
    output, _ = await call(repo, "git_diff", path="README.md")
    assert "README.md" in output and "views.py" not in output
    output, _ = await call(repo, "git_diff", staged=True)
    assert output == "No staged changes."
    git(repo, "add", "README.md")
    output, _ = await call(repo, "git_diff", staged=True)
    assert "+A tiny app for tests, now changed." in output and "views.py" not in output
    output, _ = await call(repo, "git_diff", path="src")
    assert "views.py" in output and "README" not in output


async def test_big_diff_starts_with_a_stat(repo):
    (repo / "big.txt").write_text("".join(f"line {i}\n" for i in range(3000)))
    commit(repo, "Add big file")
    (repo / "big.txt").write_text("".join(f"LINE {i}\n" for i in range(3000)))
    output, _ = await call(repo, "git_diff")
    assert output.splitlines()[0].strip().startswith("big.txt |")


async def test_log_with_limit_and_path(repo):
    commit(repo, "Second: views", **{"src/app/views.py": "def index():\n    return 'hello'\n"})
    commit(repo, "Third: readme", **{"README.md": "# Demo\n"})
    output, _ = await call(repo, "git_log")
    subjects = [line.split(": ", 1)[1] for line in output.splitlines()]
    assert subjects == ["Third: readme", "Second: views", "Initial commit"]
    assert all(" t: " in line for line in output.splitlines())  # author
    output, _ = await call(repo, "git_log", limit=1)
    assert len(output.splitlines()) == 1 and output.endswith("Third: readme")
    output, _ = await call(repo, "git_log", path="src/app/views.py")
    assert [line.split(": ", 1)[1] for line in output.splitlines()] == ["Second: views", "Initial commit"]
    output, _ = await call(repo, "git_log", path="build")
    assert output == "No commits touch build."
    output, is_error = await call(repo, "git_log", limit=0)
    assert is_error and "'limit' must be at least 1" in output


async def test_blame_whole_file_and_range(repo):
    commit(
        repo,
        "Change views",
        **{"src/app/views.py": "from .auth import login\n\n\ndef index():\n    return 'changed'\n"},
    )
    output, is_error = await call(repo, "git_blame", path="src/app/views.py")
    assert not is_error
    lines = output.splitlines()
    assert len(lines) == 5
    assert "from .auth import login" in lines[0] and "return 'changed'" in lines[4]
    first, last = lines[0].split()[0], lines[4].split()[0]
    assert first != last  # line 1 from the first commit, line 5 from the second
    output, _ = await call(repo, "git_blame", path="src/app/views.py", start=4, end=5)
    assert len(output.splitlines()) == 2 and "def index" in output
    output, _ = await call(repo, "git_blame", path="src/app/views.py", start=5)
    assert len(output.splitlines()) == 1


@pytest.mark.parametrize(
    "args, problem",
    [
        ({"path": "src/app/views.py", "start": 4, "end": 2}, "end (2) is before start (4)"),
        ({"path": "src"}, "git_blame needs a file, and src is a directory."),
        ({"path": "nowhere.py"}, "git blame failed: no such path 'nowhere.py' in HEAD."),
        ({"path": "src/app/views.py", "start": 50}, "git blame failed: file src/app/views.py has only 5 lines."),
        ({"path": "../outside.py"}, "outside the workspace"),
    ],
)
async def test_blame_errors_are_one_sentence(repo, args, problem):
    output, is_error = await call(repo, "git_blame", **args)
    assert is_error and problem in output and "\n" not in output


async def test_empty_repository(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "trunk")
    assert (await call(root, "git_log")) == ("No commits yet.", False)
    assert (await call(root, "git_status"))[0].startswith("## No commits yet on trunk")
    state = snapshot(root)
    assert state is not None and state.branch == "trunk" and state.commits == [] and state.main_branch == "trunk"


async def test_workspace_inside_a_repository(repo):
    sub = repo / "src"
    (sub / "app" / "auth.py").write_text("changed\n")
    tools, _ = registry(sub)
    assert "git_status" in tools
    output, _ = await call(sub, "git_status")
    assert " M app/auth.py" in output.splitlines()  # paths relative to the workspace, like every tool
    output, _ = await call(sub, "git_diff", path="app/auth.py")
    assert "-import hashlib" in output


def test_snapshot_and_main_branch(repo):
    git(repo, "checkout", "-q", "-b", "feature/login")
    commit(repo, "Add login form", **{"src/app/form.py": "FORM = 1\n"})
    (repo / "scratch.txt").write_text("x\n")
    state = snapshot(repo)
    assert state is not None
    assert state.branch == "feature/login" and state.main_branch == "main"
    assert state.status == ["?? scratch.txt"]
    assert [c.split(" ", 1)[1] for c in state.commits] == ["Add login form", "Initial commit"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    git(repo, "checkout", "-q", head)
    assert of(GitSnapshot, snapshot(repo)).branch.startswith("detached HEAD at ")


def test_main_branch_from_origin_head(tmp_path, repo):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "branch", "-q", "-m", "main", "work")  # no local main left; origin/HEAD says main
    assert main_branch(of(Repository, find_repository(clone)), "work") == "main"


def test_nothing_outside_a_repository(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not is_git_repo(plain)
    assert snapshot(plain) is None
    assert not [t for t in default_tools(root=plain) if t.name.startswith("git_")]
