"""Worktree children from a shell: `-p` keeps the branch and names it; `agentcli worktrees` handles it after."""

from __future__ import annotations

import json
import subprocess

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import first_user_text, offers_tool, text, tool_result_text, tool_results, tool_use


def test_headless_keeps_the_branch_and_the_shell_commands_merge_it(server, api_env, repo):
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Fix the docstring", "prompt": "Fix it.", "isolation": "worktree"}),
        text("The fix is on its own branch."),
    )
    server.when(
        lambda b: not offers_tool(b, "task") and first_user_text(b) == "Fix it.",
        tool_use("read_file", {"path": "README.md"}),
        tool_use("edit_file", {"path": "README.md", "old_string": "A tiny app", "new_string": "A fixed app"}),
        text("Done."),
    )
    proc = agentcli(
        "-p",
        "fix it in a worktree",
        "--permission-mode",
        "acceptEdits",
        "--output-format",
        "json",
        cwd=repo,
        env=api_env,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    session = out["session_id"]
    branch = f"agentcli/{session}/sa-1/work"
    assert out["subagents"][0]["worktree"] == branch
    answer = tool_result_text(tool_results(server.requests[-1])[0])
    assert f"Worktree branch {branch}: 1 file changed (+1 −1): README.md +1 −1." in answer
    assert "A tiny app" in (repo / "README.md").read_text()
    kept = subprocess.run(["git", "branch", "--list", branch], cwd=repo, capture_output=True, text=True).stdout
    assert branch in kept

    listed = agentcli("worktrees", "list", cwd=repo)
    assert listed.returncode == 0 and listed.stdout.startswith(
        f"sa-1 (session {session}) · branch {branch} · 1 file changed (+1 −1): README.md +1 −1"
    )
    shown = agentcli("sessions", "show", session, cwd=repo)
    assert "Worktrees kept" in shown.stdout and f"sa-1 (this session) · branch {branch}" in shown.stdout
    diff = agentcli("worktrees", "diff", "sa-1", cwd=repo)
    assert "+A fixed app for tests." in diff.stdout
    merged = agentcli("worktrees", "merge", "sa-1", cwd=repo)
    assert merged.returncode == 0 and merged.stdout.startswith("Merged sa-1 into your working tree")
    assert "A fixed app" in (repo / "README.md").read_text()
    again = agentcli("worktrees", "merge", "sa-1", cwd=repo)
    assert again.returncode == 1
    assert again.stderr == "agentcli: No subagent worktree 'sa-1' in this repository; there are: none.\n"


def test_worktrees_outside_a_repository_say_so(tmp_path):
    proc = agentcli("worktrees", "list", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == f"agentcli: {tmp_path} is not in a git repository, so it has no subagent worktrees.\n"
