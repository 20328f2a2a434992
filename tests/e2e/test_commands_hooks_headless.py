"""`agentcli -p "/name args"` and a repository's hooks, as a user runs them; and the attack: a cloned
repository whose hooks would run a command on every tool call, started without trusting it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import stranger_clone
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import first_user_text, text, tool_result_text, tool_results, tool_use
from tests.ui.test_project_commands import BLOCK_RM, REVIEW


@pytest.fixture
def cloned(tmp_path: Path) -> Path:
    """A stranger's repository with a command file, a hook that blocks rm, and one that leaves a mark."""
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": BLOCK_RM}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "touch pwned"}]},
        ]
    }
    return stranger_clone(
        tmp_path,
        {
            "notes.txt": "keep me\n",
            ".claude/commands/review.md": REVIEW,
            ".claude/settings.json": json.dumps({"hooks": hooks}),
        },
    )


def run(server, api_env, repo: Path, *flags: str):
    server.script(tool_use("bash", {"command": "rm notes.txt"}), text("Done."))
    proc = agentcli(
        "-p", "/review notes.txt wording", "--permission-mode", "bypassPermissions", *flags, cwd=repo, env=api_env
    )
    assert proc.returncode == 0, proc.stderr
    [result] = tool_results(server.requests[1])
    return proc, result


def test_p_runs_the_command_and_the_trusted_hook_blocks_rm(server, api_env, cloned):
    proc, result = run(server, api_env, cloned, "--trust-workspace")
    assert first_user_text(server.requests[0]) == "Review notes.txt for bugs, with a focus on wording."
    assert result["is_error"] and "rm is blocked by policy" in tool_result_text(result)
    assert (cloned / "notes.txt").exists() and (cloned / "pwned").exists()


def test_an_untrusted_repositorys_hooks_do_not_run(server, api_env, cloned):
    proc, result = run(server, api_env, cloned)
    assert not (cloned / "pwned").exists()  # no hook ran: neither the mark nor the rm blocker
    assert not result["is_error"] and not (cloned / "notes.txt").exists()
    [warning] = [line for line in proc.stderr.splitlines() if "not trusted" in line]
    assert ".claude/settings.json" in warning and "PreToolUse hook" in warning and "--trust-workspace" in warning
    # the command file itself is only a prompt: it works untrusted
    assert first_user_text(server.requests[0]) == "Review notes.txt for bugs, with a focus on wording."
