"""Worktree isolation: children that edit work in their own git worktrees; the user merges or discards."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentcli.core.engine.agents import AgentFileError, parse_agent_file
from agentcli.core.events import SubagentStarted
from agentcli.core.storage import worktrees
from tests.conftest import git
from tests.fakes.anthropic_server import (
    first_user_text,
    offers_tool,
    reply,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)

DOC = '    """Check a password."""\n'


def trees() -> Path:
    """Where a session would keep its children's worktrees (in the test's own AGENTCLI_HOME)."""
    from agentcli.core.storage.store import projects_home

    return projects_home() / "demo" / "S1" / "worktrees"


def is_main(body):
    return offers_tool(body, "task")


def editing_child(server, brief: str, new: str) -> None:
    """A child that reads auth.py and rewrites its docstring line to ``new``."""
    server.when(
        lambda b: not is_main(b) and first_user_text(b) == brief,
        tool_use("read_file", {"path": "src/app/auth.py"}),
        tool_use("edit_file", {"path": "src/app/auth.py", "old_string": DOC, "new_string": new}),
        text(f"Changed the docstring ({brief})."),
    )


def isolated(description: str, prompt: str):
    return tool_use_block("task", {"description": description, "prompt": prompt, "isolation": "worktree"})


def branches(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "branch", "--format=%(refname:short)"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    return out.split()


async def test_two_isolated_children_edit_the_same_file_then_merge_one_after_the_other(server, make_session, repo):
    (repo / "README.md").write_text("# Demo app\n\nThe user's uncommitted words.\n")  # carried, never lost
    (repo / "notes.txt").write_text("untracked but not ignored\n")
    editing_child(server, "brief one", '    """Check a password (one)."""\n')
    editing_child(server, "brief two", '    """Check a password (two)."""\n')
    server.when(
        is_main, reply(isolated("Edit one", "brief one"), isolated("Edit two", "brief two")), text("Both are done.")
    )
    session, events = make_session(permission_mode="acceptEdits")
    original = (repo / "src/app/auth.py").read_text()

    result = await session.send("Have two subagents edit auth.py")

    assert result.text == "Both are done."
    assert (repo / "src/app/auth.py").read_text() == original  # the user's tree is untouched
    answers = [tool_result_text(r) for r in tool_results([b for b in server.requests if is_main(b)][-1])]
    for number, answer in zip((1, 2), answers, strict=True):
        branch = f"agentcli/{session.id}/sa-{number}/work"
        assert f"Worktree branch {branch}: 1 file changed (+1 −1): src/app/auth.py +1 −1." in answer
        assert answer.splitlines()[-1].startswith(f"[sa-{number} · done")
        assert branch in branches(repo)
    trees = {w.id: w for w in worktrees.listing(repo)}
    assert set(trees) == {"sa-1", "sa-2"}
    for tree, word in ((trees["sa-1"], "one"), (trees["sa-2"], "two")):
        assert not tree.path.is_relative_to(repo)  # in the session's folder, outside the repository
        assert f"({word})" in (tree.path / "src/app/auth.py").read_text()
        assert (tree.path / "README.md").read_text().endswith("The user's uncommitted words.\n")
        assert (tree.path / "notes.txt").exists() and not (tree.path / "build").exists()  # ignored stays out
    assert {e.id for e in events.of(SubagentStarted)} == {"sa-1", "sa-2"}
    assert session.subagents.records["sa-1"].changed_files == ["src/app/auth.py"]

    # The user edits another line of the same file meanwhile: a three-way merge keeps it.
    auth = repo / "src/app/auth.py"
    auth.write_text(auth.read_text().replace("import hashlib\n", "import hashlib  # the user's edit\n"))
    diff = await session.worktree("diff", "sa-1")
    assert '+    """Check a password (one)."""' in diff and "README" not in diff
    merged = await session.worktree("merge", "sa-1")
    assert merged.startswith("Merged sa-1 into your working tree: 1 file changed (+1 −1)")
    assert "(one)" in auth.read_text() and "# the user's edit" in auth.read_text()
    assert (repo / "README.md").read_text().endswith("The user's uncommitted words.\n")
    assert f"agentcli/{session.id}/sa-1/work" not in branches(repo) and not trees["sa-1"].path.exists()

    # The second child changed the same line: refused, naming the file, and nothing changes.
    before = auth.read_text()
    with pytest.raises(worktrees.MergeConflict) as refused:
        await session.worktree("merge", "sa-2")
    assert "Cannot merge sa-2: src/app/auth.py changed both in your working tree and in sa-2's worktree" in str(
        refused.value
    )
    assert auth.read_text() == before
    assert [w.id for w in worktrees.listing(repo)] == ["sa-2"]  # kept, to apply by hand or discard
    assert (await session.worktree("discard", "sa-2")).startswith("Discarded sa-2")
    assert worktrees.listing(repo) == [] and branches(repo) == ["main"]
    assert "(two)" not in auth.read_text()
    server.assert_no_rejections()


async def test_isolation_outside_a_git_repository_is_refused(server, make_session, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    server.when(
        is_main, tool_use("task", {"description": "Edit", "prompt": "Edit it.", "isolation": "worktree"}), text("ok")
    )
    session, events = make_session(plain)
    await session.send("go")
    [refusal] = tool_results(server.requests[-1])
    assert refusal["is_error"]
    assert tool_result_text(refusal) == (
        f"isolation: worktree needs a git repository, and {plain} is not in one; run the subagent without isolation."
    )
    assert events.of(SubagentStarted) == []


async def test_a_child_that_changes_nothing_leaves_no_worktree(server, make_session, repo):
    server.when(
        is_main, tool_use("task", {"description": "Look", "prompt": "look", "isolation": "worktree"}), text("ok")
    )
    server.when(lambda b: not is_main(b), text("Nothing to change."))
    session, _ = make_session()
    await session.send("go")
    answer = tool_result_text(tool_results(server.requests[-1])[0])
    assert "sa-1 changed no files, so its worktree was removed." in answer
    assert worktrees.listing(repo) == [] and branches(repo) == ["main"]


def test_the_repositorys_hooks_never_run(repo, tmp_path):
    """post-checkout (worktree add), pre-commit and post-commit (the snapshot commits) stay silent."""
    marker = tmp_path / "marker"
    for hook in ("post-checkout", "pre-commit", "post-commit", "reference-transaction"):
        script = repo / ".git" / "hooks" / hook
        script.write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        script.chmod(0o755)
    git(repo, "config", "filter.evil.smudge", f"sh -c 'echo smudge >> {marker}; cat'")
    git(repo, "config", "filter.evil.clean", f"sh -c 'echo clean >> {marker}; cat'")
    (repo / ".gitattributes").write_text("*.py filter=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "Attributes")
    git(repo, "worktree", "add", "-q", str(tmp_path / "plain-git"), "HEAD")  # the hostile repo really is live
    assert "post-checkout" in marker.read_text() and "smudge" in marker.read_text()
    marker.unlink()

    (repo / "src/app/views.py").write_text("changed by the user\n")
    tree = worktrees.create(repo, trees(), "S1", "sa-1")
    (tree.path / "src/app/auth.py").write_text("changed by the child\n")
    assert "+1 −" in worktrees.finish(tree)
    assert "changed by the child" in worktrees.diff(tree)
    worktrees.merge(tree)
    assert (repo / "src/app/auth.py").read_text() == "changed by the child\n"
    assert not marker.exists(), marker.read_text()


def test_agent_files_may_ask_for_a_worktree():
    file = "---\nname: fixer\ndescription: Fixes things.\nisolation: worktree\n---\nFix it."
    assert parse_agent_file(file, source="fixer.md").isolation == "worktree"
    assert parse_agent_file(file.replace("isolation: worktree\n", ""), source="f.md").isolation is None
    with pytest.raises(AgentFileError, match="'isolation' can only be worktree, not 'container'"):
        parse_agent_file(file.replace("worktree", "container"), source="f.md")


async def test_the_main_agents_worktree_tool_merges_only_as_a_write(server, make_session, repo, tmp_path):
    tree = worktrees.create(repo, trees(), "OLD", "sa-1")
    (tree.path / "README.md").write_text("from the child\n")
    merge_call = tool_use("worktree", {"action": "merge", "id": "sa-1"})
    server.when(is_main, merge_call, text("refused"), merge_call, text("merged"))
    plan, _ = make_session(permission_mode="plan")
    await plan.send("merge sa-1")
    [refusal] = tool_results(server.requests[-1])
    assert refusal["is_error"] and (repo / "README.md").read_text().startswith("# Demo app")
    session, _ = make_session(permission_mode="acceptEdits")
    await session.send("merge sa-1")
    [merged] = tool_results(server.requests[-1])
    assert tool_result_text(merged).startswith("Merged sa-1 into your working tree")
    assert (repo / "README.md").read_text() == "from the child\n"
    assert worktrees.listing(repo) == []
    assert "worktree" not in [t["name"] for b in server.requests if not is_main(b) for t in b["tools"]]


def test_worktrees_left_by_a_session_that_died_are_offered_for_cleanup(make_session, repo, tmp_path):
    from agentcli.core.events import Notice

    worktrees.create(repo, trees(), "20260101-000000-dead", "sa-4")
    _, events = make_session(interactive=True)
    [notice] = [n for n in events.of(Notice) if "worktrees left" in n.text]
    assert notice.text.startswith("Subagent worktrees left by earlier sessions: sa-4 (session 20260101-000000-dead).")
    assert "`agentcli worktrees discard ID`" in notice.text


def test_a_rewritten_dot_git_file_in_the_worktree_does_not_redirect_git(repo, tmp_path):
    """The child owns its worktree, its .git file included: git is pointed at the admin folder the main
    repository records, never at what that file says."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q", "-b", "main")
    (elsewhere / "x").write_text("x\n")
    git(elsewhere, "add", "x")
    git(elsewhere, "commit", "-qm", "Someone else's history")
    tree = worktrees.create(repo, trees(), "S1", "sa-1")
    (tree.path / "README.md").write_text("the child's words\n")
    (tree.path / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    [again] = worktrees.listing(repo)
    assert "+the child's words" in worktrees.diff(again)
    assert worktrees.merge(again).startswith("Merged sa-1")
    assert (repo / "README.md").read_text() == "the child's words\n"
    assert (
        subprocess.run(["git", "log", "--format=%s"], cwd=elsewhere, capture_output=True, text=True, check=True).stdout
        == "Someone else's history\n"
    )


def test_a_worktree_outside_agentclis_folders_is_never_listed_nor_removed(repo, tmp_path):
    """A repository's .git can name any folder as a worktree on an agentcli/ branch; discard would delete it."""
    precious = tmp_path / "precious"
    git(repo, "worktree", "add", "-q", "-b", "agentcli/S9/sa-1", str(precious), "HEAD")
    assert worktrees.listing(repo) == []
    with pytest.raises(worktrees.WorktreeError, match="No subagent worktree 'sa-1'"):
        worktrees.act(repo, "discard", "sa-1")
    assert (precious / "README.md").exists()


async def test_a_worktree_child_cannot_be_resumed_into_the_main_tree(server, make_session, repo):
    editing_child(server, "brief one", '    """Check a password (one)."""\n')
    server.when(
        is_main,
        reply(isolated("Edit one", "brief one")),
        tool_use("task", {"description": "Edit more", "prompt": "And the docstring of login.", "resume": "sa-1"}),
        text("Done."),
    )
    session, _ = make_session(permission_mode="acceptEdits")
    original = (repo / "src/app/auth.py").read_text()
    await session.send("Edit auth.py in isolation, then more")
    [refused] = [b for b in tool_results(server.requests[-1]) if b.get("is_error")]
    assert "worked in its own git worktree" in tool_result_text(refused)
    assert (repo / "src/app/auth.py").read_text() == original  # the user's tree was never touched


def test_worktrees_made_side_by_side_all_start(repo):
    """Children that start together make their worktrees from threads at once. git has no lock over
    .git/worktrees, and an add that read another's half-made admin folder failed ("failed to read
    …/commondir"), in 3 of 4 runs of this test without the lock, and once in CI's test above."""
    import threading

    for round_ in range(10):
        failures: list[str] = []

        def make(agent: str) -> None:
            try:
                worktrees.create(repo, trees() / str(round_), f"S{round_}", agent)
            except worktrees.WorktreeError as exc:
                failures.append(str(exc))

        threads = [threading.Thread(target=make, args=(f"sa-{n}",)) for n in range(1, 6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == [], failures
    assert len(worktrees.listing(repo)) == 50


def test_a_worktree_on_an_older_agentcli_branch_name_is_still_listed_and_merged(repo):
    """Children once worked on agentcli/SESSION/sa-N (now agentcli/SESSION/sa-N/work); theirs stay readable."""
    git(repo, "worktree", "add", "-q", "-b", "agentcli/S0/sa-1", str(trees() / "sa-1"), "HEAD")
    (trees() / "sa-1" / "README.md").write_text("older words\n")
    [old] = worktrees.listing(repo)
    assert (old.id, old.session, old.branch) == ("sa-1", "S0", "agentcli/S0/sa-1")
    assert worktrees.act(repo, "merge", "sa-1").startswith("Merged sa-1")
    assert (repo / "README.md").read_text() == "older words\n"
