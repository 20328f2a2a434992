"""`agentcli -p` as a user runs it: a real subprocess, the real SDK, the stand-in server."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest

from agentcli.core.model.catalogue import MODEL_ALIASES
from tests.conftest import API_KEY
from tests.fakes.anthropic_server import offers_tool, reply, text, tool_use, tool_use_block


def agentcli(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    terminal: bool = False,
    stdout: IO[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run agentcli; with ``terminal``, standard input and output are a pty (the app needs one), stderr a pipe;
    ``stdout``: a file its standard output goes to, rather than a pipe read back."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    full_env.update(env or {})
    command = [sys.executable, "-m", "agentcli", *args]
    if not terminal:
        return subprocess.run(
            command,
            cwd=cwd,
            env=full_env,
            input=stdin,
            stdout=stdout or subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=full_env,
            stdin=follower,
            stdout=follower,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(follower)
        os.close(leader)
    return subprocess.CompletedProcess(done.args, done.returncode, "", done.stderr)


def delegation_script(server, **extra):
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Find auth handler", "prompt": "Find where handle_auth is defined.", **extra}),
        text("Auth is handled in `src/app/auth.py:9`."),
    )
    server.when(
        lambda b: not offers_tool(b, "task"),
        tool_use("grep", {"pattern": "def handle_auth"}),
        text("handle_auth is defined at src/app/auth.py:9."),
    )


def test_json_output_has_the_answer_and_the_subagents(server, api_env, repo, isolated_home):
    delegation_script(server, model="opus")  # the child on a model of its own: the output names it
    proc = agentcli(
        "-p", "Use a subagent to find where auth is handled", "--output-format", "json", cwd=repo, env=api_env
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["result"] == "Auth is handled in `src/app/auth.py:9`."
    assert out["is_error"] is False and out["num_turns"] == 2 and out["session_id"]
    assert out["subtype"] == "success" and isinstance(out["duration_ms"], int) and out["total_cost_usd"] > 0
    assert out["usage"]["input_tokens"] > 0
    [child] = out["subagents"]
    assert {k: child[k] for k in ("id", "type", "description", "status", "turns")} == {
        "id": "sa-1",
        "type": "general-purpose",
        "description": "Find auth handler",
        "status": "done",
        "turns": 2,
    }
    assert child["usage"]["output_tokens"] > 0 and child["seconds"] >= 0
    assert child["model"] == MODEL_ALIASES["opus"] != out["model"] and child["cost_usd"] > 0
    assert set(out["modelUsage"]) == {out["model"], child["model"]}
    assert out["modelUsage"][child["model"]]["outputTokens"] == child["usage"]["output_tokens"]
    assert sum(m["costUSD"] for m in out["modelUsage"].values()) == pytest.approx(out["total_cost_usd"], abs=1e-5)
    # Transcripts are on disk, the child's in its own file, and the key is in none of them.
    files = list(isolated_home.rglob("*.jsonl"))
    assert any(f.name == "sa-1.jsonl" for f in files) and any(f.name == f"{out['session_id']}.jsonl" for f in files)
    assert all(API_KEY not in f.read_text() for f in files)
    server.assert_no_rejections()


def test_text_output_prints_just_the_answer(server, api_env, repo):
    server.script(text("Hello from the model."))
    proc = agentcli("-p", "hi", cwd=repo, env=api_env)
    assert (proc.returncode, proc.stdout) == (0, "Hello from the model.\n")


def test_prompt_from_standard_input(server, api_env, repo):
    server.script(text("Read it."))
    proc = agentcli("-p", cwd=repo, env=api_env, stdin="what is this repo?")
    assert proc.returncode == 0 and proc.stdout == "Read it.\n"
    assert server.requests[0]["messages"][0]["content"][0]["text"] == "what is this repo?"


def test_events_stream_starts_with_init_and_tags_child_events(server, api_env, repo):
    delegation_script(server)
    proc = agentcli("-p", "delegate it", "--output-format", "events", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["type"] == "system" and lines[0]["subtype"] == "init" and lines[0]["session_id"]
    assert lines[-1]["type"] == "result" and lines[-1]["result"].startswith("Auth is handled")
    task_call = next(e for e in lines if e["type"] == "tool_call_started" and e["name"] == "task")
    child = [e for e in lines if e.get("agent_id") == "sa-1"]
    assert child and all(e["parent_tool_use_id"] == task_call["id"] for e in child)
    assert any(e["type"] == "subagent_started" and e["subagent_type"] == "general-purpose" for e in child)
    assert any(e["type"] == "text_delta" for e in lines)


def test_placeholder_key_when_only_a_base_url_is_set(server, repo):
    server.script(text("local model says hi"))
    proc = agentcli("-p", "hi", "--model", "qwen3:8b", cwd=repo, env={"ANTHROPIC_BASE_URL": server.base_url})
    assert proc.returncode == 0, proc.stderr
    assert server.requests[0]["model"] == "qwen3:8b"
    headers = server.request_headers[0]
    assert "agentcli-no-key" in (headers.get("x-api-key", "") + headers.get("authorization", ""))


def test_missing_key_is_one_clear_sentence(repo):
    proc = agentcli("-p", "hi", cwd=repo)
    assert proc.returncode == 2
    assert "ANTHROPIC_API_KEY" in proc.stderr and "ANTHROPIC_BASE_URL" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_dead_network_is_one_clear_sentence(repo):
    proc = agentcli(
        "-p",
        "hi",
        cwd=repo,
        env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "k", "AGENTCLI_API_RETRIES": "0"},
    )
    assert proc.returncode == 1
    assert "Nothing is listening at http://127.0.0.1:9 (connection refused)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_flags_are_one_clear_sentence(repo):
    for args in (["--permission-mode", "yolo", "-p", "x"], ["--max-turns", "zero", "-p", "x"], ["--frobnicate"]):
        proc = agentcli(*args, cwd=repo)
        assert proc.returncode == 2, args
        assert proc.stderr.startswith("agentcli: ") and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_api_error_exits_non_zero_with_the_reason(server, api_env, repo):
    from tests.fakes.anthropic_server import error

    server.script(*[error(401, "authentication_error", "invalid x-api-key")] * 3)
    proc = agentcli("-p", "hi", "--output-format", "json", cwd=repo, env=api_env)
    assert proc.returncode == 1 and proc.stdout.strip(), proc.stderr
    out = json.loads(proc.stdout)
    assert out["is_error"] is True and "API key was rejected" in out["result"]
    assert API_KEY not in proc.stdout + proc.stderr


def test_version(repo):
    proc = agentcli("--version", cwd=repo)
    assert proc.returncode == 0 and proc.stdout.startswith("agentcli ")


def test_a_reader_that_goes_away_stops_the_run_quietly(server, api_env, repo):
    """`agentcli -p … --output-format stream-json | head -1`: no traceback, the run stops, exit 141."""
    answered = threading.Event()
    server.script(
        reply("Running it.", tool_use_block("bash", {"command": "touch ran.txt"}), gate=answered, gate_timeout=120),
        text("Done."),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentcli",
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
        ],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert json.loads(proc.stdout.readline())["subtype"] == "init"
    proc.stdout.close()  # what head does after its line
    answered.set()  # only now: all that comes next finds the pipe closed
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert stderr == ""
    assert len(server.requests) <= 1 and not (repo / "ran.txt").exists()  # nobody reads on: it stopped


@pytest.mark.parametrize("output_format, requests", [("text", 1), ("events", 0)])
def test_output_nobody_reads_is_quiet(server, api_env, repo, output_format, requests):
    """`agentcli -p hi | true`: text is written at the end, so the run finishes; a stream stops at its first line."""
    server.script(text("Hello from the model."))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "-p", "hi", "--output-format", output_format],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # long before agentcli writes anything
    stderr = proc.stderr.read()
    assert (proc.wait(timeout=60), stderr) == (141, "")
    assert len(server.requests) == requests


def test_piped_input_comes_with_the_prompt(server, api_env, repo):
    server.script(text("Looks fine."))
    proc = agentcli("-p", "review this diff", cwd=repo, env=api_env, stdin="+added line\n-removed line\n")
    assert proc.returncode == 0, proc.stderr
    sent = server.requests[0]["messages"][0]["content"][0]["text"]
    assert sent.startswith("review this diff\n\n") and "+added line" in sent


def test_short_flags_and_bare_sessions(server, api_env, repo):
    server.script(text("First."), text("Second."))
    assert agentcli("-p", "one", cwd=repo, env=api_env).returncode == 0
    again = agentcli("-c", "-p", "two", cwd=repo, env=api_env)
    assert again.returncode == 0 and again.stdout == "Second.\n"
    assert [m["role"] for m in server.requests[-1]["messages"]] == ["user", "assistant", "user"]
    listing = agentcli("sessions", cwd=repo, env=api_env)
    assert listing.returncode == 0 and "one" in listing.stdout
