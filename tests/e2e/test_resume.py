"""Sessions as a user meets them: list, show, --continue and --resume after a clean run, a kill -9 and a race."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import (
    first_user_text,
    last_user_text,
    offers_tool,
    reply,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)


def is_main(body):
    return offers_tool(body, "task")


def child_about(word):
    return lambda body: not offers_tool(body, "task") and word in first_user_text(body)


def two_children(server):
    server.when(
        is_main,
        reply(
            tool_use_block(
                "task", {"description": "Find auth handler", "prompt": "Find where handle_auth is defined."}
            ),
            tool_use_block("task", {"description": "Find index view", "prompt": "Find where index is defined."}),
        ),
        text("Auth is in src/app/auth.py:9; the index view in src/app/views.py:4."),
    )
    server.when(
        child_about("handle_auth"),
        tool_use("grep", {"pattern": "def handle_auth"}),
        tool_use("read_file", {"path": "src/app/auth.py"}),
        text("handle_auth is at src/app/auth.py:9."),
    )
    server.when(
        child_about("index"), tool_use("grep", {"pattern": "def index"}), text("index is at src/app/views.py:4.")
    )


def json_run(*args, cwd, env):
    proc = agentcli(*args, "--output-format", "json", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_round_trip_list_show_and_show_agent(server, api_env, repo):
    two_children(server)
    out = json_run("-p", "Use subagents to find auth and the index view", cwd=repo, env=api_env)
    session_id = out["session_id"]

    listing = agentcli("sessions", "list", cwd=repo)
    assert listing.returncode == 0, listing.stderr
    header, row = listing.stdout.splitlines()
    assert header.split()[:2] == ["ID", "STARTED"] and "FIRST PROMPT" in header
    assert row.startswith(session_id) and row.endswith("Use subagents to find auth and the index view")
    assert row.split()[3:5] == ["2", "2"]  # turns, subagents
    [info] = json.loads(agentcli("sessions", "list", "--json", cwd=repo).stdout)
    assert info["id"] == session_id and info["subagents"] == 2 and info["turns"] == 2
    assert info["usage"]["input_tokens"] == out["usage"]["input_tokens"]
    everywhere = agentcli("sessions", "list", "--all", cwd=repo.parent)
    assert session_id in everywhere.stdout and "WORKSPACE" in everywhere.stdout

    show = agentcli("sessions", "show", session_id[:12], cwd=repo)  # a unique prefix will do
    assert show.returncode == 0, show.stderr
    assert "> Use subagents to find auth and the index view" in show.stdout
    assert '● task(description="Find auth handler", prompt="Find where handle_auth is defined.")' in show.stdout
    assert "▸ sa-1 started · general-purpose · Find auth handler" in show.stdout
    assert "▪ sa-2 done · 2 turns" in show.stdout
    assert "Auth is in src/app/auth.py:9; the index view in src/app/views.py:4." in show.stdout.splitlines()
    assert show.stdout.splitlines()[-1].startswith("── 2 turns · ")

    child = agentcli("sessions", "show", session_id, "--agent", "sa-1", cwd=repo)
    assert child.returncode == 0, child.stderr
    lines = child.stdout.splitlines()
    assert lines[0].startswith("sa-1 · general-purpose · Find auth handler")
    assert lines[1].startswith("Status: done · 3 turns")
    assert "Brief:" in lines and "  Find where handle_auth is defined." in lines
    assert '● grep(pattern="def handle_auth")' in lines
    assert "  ⎿ src/app/auth.py:9:def handle_auth(user, password):" in lines
    assert '● read_file(path="src/app/auth.py")' in lines
    assert any(
        line.endswith("return hashlib.sha256(password.encode()).hexdigest() == user.digest") for line in lines
    )  # the whole file as read, not a capped preview
    assert "handle_auth is at src/app/auth.py:9." in lines

    raw = agentcli("sessions", "show", session_id, "--agent", "sa-2", "--json", cwd=repo)
    records = [json.loads(line) for line in raw.stdout.splitlines()]
    assert records[0]["type"] == "subagent_started" and records[-1]["type"] == "subagent_finished"
    assert all(r["agent_id"] == "sa-2" for r in records)

    for args, message in (
        (["show", "nope"], "No session 'nope'"),
        (["show", session_id, "--agent", "sa-9"], "has no subagent sa-9; it has sa-1, sa-2"),
    ):
        proc = agentcli("sessions", *args, cwd=repo)
        assert proc.returncode == 1 and message in proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1

    # --continue carries on in the same session, with the whole history.
    server.script(text("You asked about auth and the index view."))
    again = json_run("--continue", "-p", "What did I ask?", cwd=repo, env=api_env)
    assert again["session_id"] == session_id and again["num_turns"] == 1  # this prompt's turns
    assert len(server.requests[-1]["messages"]) == 5 and last_user_text(server.requests[-1]) == "What did I ask?"
    assert [c["id"] for c in again["subagents"]] == ["sa-1", "sa-2"]
    server.assert_no_rejections()


def test_kill_9_while_a_child_works_then_resume_sends_a_valid_history(server, api_env, repo):
    server.when(is_main, tool_use("task", {"description": "Find auth handler", "prompt": "Find handle_auth."}))
    server.when(
        child_about("handle_auth"), tool_use("grep", {"pattern": "def handle_auth"}), text("never sent", delay=120)
    )  # the child's second call hangs until the kill
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "-p", "Use a subagent to find auth"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        server.wait_for_requests(3, timeout=60)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    [info] = json.loads(agentcli("sessions", "list", "--json", cwd=repo).stdout)
    child = agentcli("sessions", "show", info["id"], "--agent", "sa-1", cwd=repo)
    assert "Status: interrupted" in child.stdout and '● grep(pattern="def handle_auth")' in child.stdout

    server.when(is_main, text("The search was interrupted; shall I run it again?"))
    out = json_run("--resume", info["id"], "-p", "What happened?", cwd=repo, env=api_env)
    assert out["session_id"] == info["id"] and out["result"].startswith("The search was interrupted")
    server.assert_no_rejections()  # the stand-in API validated the repaired history
    sent = server.requests[-1]["messages"]
    [result] = tool_results({"messages": sent[-1:]})
    assert result["is_error"] is True and "interrupted" in tool_result_text(result).lower()
    assert last_user_text(server.requests[-1]) == "What happened?"
    assert [(c["id"], c["status"]) for c in out["subagents"]] == [("sa-1", "interrupted")]
    shown = agentcli("sessions", "show", info["id"], cwd=repo).stdout
    assert "▪ sa-1 interrupted" in shown and "⎿ interrupted: no result was recorded" in shown


def test_torn_final_line_is_skipped_with_a_warning(server, api_env, repo, isolated_home):
    server.script(text("First answer."))
    session_id = json_run("-p", "hello", cwd=repo, env=api_env)["session_id"]
    [main] = [p for p in isolated_home.rglob(f"{session_id}.jsonl")]
    with main.open("a") as f:
        f.write('{"ts": "2025-01-01T00:00:00+00:00", "type": "assistant_mess')
    show = agentcli("sessions", "show", session_id, cwd=repo)
    assert show.returncode == 0 and "First answer." in show.stdout
    assert "torn last line" in show.stderr and "Traceback" not in show.stderr
    server.script(text("Second answer."))
    proc = agentcli("--resume", session_id, "-p", "again", cwd=repo, env=api_env)
    assert proc.returncode == 0 and proc.stdout == "Second answer.\n"
    assert "torn last line" in proc.stderr
    assert all(json.loads(line) for line in main.read_text().splitlines())
    server.assert_no_rejections()


def test_two_resumers_of_one_session_never_share_a_file(server, api_env, repo, isolated_home):
    server.script(text("First answer."))
    session_id = json_run("-p", "hello", cwd=repo, env=api_env)["session_id"]
    release = threading.Event()
    server.when(lambda b: last_user_text(b) == "FIRST-RESUMER", text("first done", gate=release, gate_timeout=120))
    server.when(lambda b: last_user_text(b) == "SECOND-RESUMER", text("second done"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    first = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "--resume", session_id, "-p", "FIRST-RESUMER", "--output-format", "json"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        server.wait_for_requests(2, timeout=60)  # the first resumer holds the session and waits on the model
        second = agentcli(
            "--resume", session_id, "-p", "SECOND-RESUMER", "--output-format", "json", cwd=repo, env=api_env
        )
    finally:
        release.set()
        stdout, stderr = first.communicate(timeout=60)
    assert first.returncode == 0, stderr
    assert json.loads(stdout)["session_id"] == session_id
    assert second.returncode == 0, second.stderr
    forked = json.loads(second.stdout)["session_id"]
    assert forked != session_id
    assert f"Session {session_id} is open in another agentcli" in second.stderr and forked in second.stderr

    original = (isolated_home / "projects").rglob(f"{session_id}.jsonl").__next__().read_text()
    copy = (isolated_home / "projects").rglob(f"{forked}.jsonl").__next__().read_text()
    assert "FIRST-RESUMER" in original and "SECOND-RESUMER" not in original
    assert "SECOND-RESUMER" in copy and "FIRST-RESUMER" not in copy and "First answer." in copy
    for transcript in (original, copy):
        assert all(json.loads(line) for line in transcript.splitlines())
    sent = server.requests[-2:]
    assert all(first_user_text(b) == "hello" for b in sent)  # both carried the old history
    server.assert_no_rejections()


def test_resume_of_another_workspace_says_where_it_lives(server, api_env, repo, tmp_path: Path):
    server.script(text("hi"))
    session_id = json_run("-p", "hello", cwd=repo, env=api_env)["session_id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = agentcli("--resume", session_id, "-p", "x", cwd=elsewhere, env=api_env)
    assert proc.returncode == 1 and f"belongs to {repo.resolve()}" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    shown = agentcli("sessions", "show", session_id, cwd=elsewhere)  # show looks in every workspace
    assert shown.returncode == 0 and "> hello" in shown.stdout
