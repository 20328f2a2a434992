"""`agentcli -p` as a user runs it, with a model that tries to run commands and write outside the workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import API_KEY
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import error, reply, text, tool_result_text, tool_results, tool_use, tool_use_block


def escape_attempts(outside: Path) -> list[dict[str, Any]]:
    return [
        tool_use_block("bash", {"command": "touch ran.txt"}),
        tool_use_block("write_file", {"path": "inside.txt", "content": "ok\n"}),
        tool_use_block("write_file", {"path": "../escape.txt", "content": "x"}),
        tool_use_block("write_file", {"path": str(outside / "abs.txt"), "content": "x"}),
        tool_use_block("write_file", {"path": "out/link.txt", "content": "x"}),
        tool_use_block("read_file", {"path": "out/victim.txt"}),  # edits need a read first
        tool_use_block("edit_file", {"path": "out/victim.txt", "old_string": "keep", "new_string": "lost"}),
    ]


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> Path:
    place = tmp_path_factory.mktemp("outside")
    (place / "victim.txt").write_text("keep\n")
    (repo / "out").symlink_to(place)
    return place


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
def test_no_bash_and_no_writes_outside_headless(server, api_env, repo, outside, mode):
    server.script(reply(*escape_attempts(outside)), text("Tried."))
    proc = agentcli("-p", "break out", "--permission-mode", mode, "--output-format", "events", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert not (repo / "ran.txt").exists()
    assert (repo / "inside.txt").exists() == (mode == "acceptEdits")
    assert not (repo.parent / "escape.txt").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "keep\n"
    bash, inside, *escapes = tool_results(server.requests[1])
    assert bash["is_error"] and "--permission-mode bypassPermissions" in tool_result_text(bash)
    if mode == "default":
        assert inside["is_error"] and "--permission-mode acceptEdits" in tool_result_text(inside)
    assert all(r["is_error"] and "outside the workspace" in tool_result_text(r) for r in escapes)
    # The same refusals reach the reader of the event stream.
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    finished = [e for e in events if e["type"] == "tool_call_finished"]
    assert len(finished) == 7 and finished[0]["is_error"]
    server.assert_no_rejections()


def test_bypass_permissions_runs_bash_and_writes_anywhere(server, api_env, repo, outside):
    server.script(reply(*escape_attempts(outside)), text("Did it all."))
    proc = agentcli("-p", "do it", "--permission-mode", "bypassPermissions", cwd=repo, env=api_env)
    assert (proc.returncode, proc.stdout) == (0, "Did it all.\n")
    assert (repo / "ran.txt").exists() and (repo / "inside.txt").exists()
    assert (repo.parent / "escape.txt").exists() and (outside / "abs.txt").exists()
    assert (outside / "link.txt").exists() and (outside / "victim.txt").read_text() == "lost\n"


def test_a_project_allow_rule_runs_that_command_headless(server, api_env, repo):
    (repo / ".agentcli").mkdir()
    (repo / ".agentcli" / "settings.toml").write_text('[permissions]\nallow = ["bash(git status *)"]\n')
    server.script(
        reply(
            tool_use_block("bash", {"command": "git status --short && touch ran.txt"}),
            tool_use_block("bash", {"command": "git status --short"}),
        ),
        text("ok"),
    )
    proc = agentcli("-p", "status", "--trust-workspace", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    chained, status = tool_results(server.requests[1])
    assert chained["is_error"] and "`touch ran.txt`" in tool_result_text(chained)
    assert not status.get("is_error")
    assert not (repo / "ran.txt").exists()


def test_a_bad_rule_is_one_sentence(repo, api_env):
    (repo / ".agentcli").mkdir()
    (repo / ".agentcli" / "settings.toml").write_text('[permissions]\nallow = ["bash(npm test"]\n')
    proc = agentcli("-p", "hi", cwd=repo, env=api_env)
    assert proc.returncode != 0
    assert "cannot read the permission rule" in proc.stderr and "Traceback" not in proc.stderr


def test_the_api_key_is_in_no_file_log_or_error(server, api_env, repo, isolated_home):
    server.script(tool_use("bash", {"command": "env; echo key=$ANTHROPIC_API_KEY"}), text("Shown."))
    proc = agentcli(
        "-p",
        "print the environment",
        "--permission-mode",
        "bypassPermissions",
        "--output-format",
        "events",
        cwd=repo,
        env=api_env,
    )
    assert proc.returncode == 0, proc.stderr
    assert tool_result_text(tool_results(server.requests[1])[0]).rstrip().endswith("\nkey=")  # ran, saw no key
    # And a failing call: the error names the problem, never the key.
    server.script(error(401, "authentication_error", "invalid x-api-key"))
    failed = agentcli("-p", "hi", cwd=repo, env=api_env)
    assert failed.returncode != 0 and failed.stderr.strip()
    files = [f for f in isolated_home.rglob("*") if f.is_file()]
    assert any(f.suffix == ".jsonl" for f in files)
    for f in files:
        assert API_KEY not in f.read_text(errors="replace"), f
    for out in (proc.stdout, proc.stderr, failed.stdout, failed.stderr):
        assert API_KEY not in out
