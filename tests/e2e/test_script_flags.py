"""The flags a script written for `claude -p` passes, honoured by agentcli or refused with one sentence."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import (
    offers_tool,
    reply,
    text,
    tool_names,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)
from tests.waiting import DEADLINE, wait_until


def result_of(proc) -> dict[str, Any]:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_system_prompt_replaces_and_append_adds(server, api_env, repo):
    server.script(text("a"), text("b"))
    agentcli("-p", "hi", "--system-prompt", "You only say a.", cwd=repo, env=api_env)
    agentcli("-p", "hi", "--append-system-prompt", "Always end with b.", cwd=repo, env=api_env)
    replaced, appended = (r["system"][0]["text"] for r in server.requests)
    assert replaced == "You only say a."
    assert appended.endswith("\n\nAlways end with b.") and len(appended) > 200  # agentcli's own prompt stays


def test_allowed_tools_rules_let_matching_commands_run_and_no_others(server, api_env, repo):
    server.script(
        reply(
            tool_use_block("bash", {"command": "git status --short"}),
            tool_use_block("bash", {"command": "touch ran.txt"}),
        ),
        text("Done."),
    )
    proc = agentcli("-p", "go", "--allowedTools", "Bash(git status:*),Read", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    status, touch = tool_results(server.requests[1])
    assert not status["is_error"] and touch["is_error"] and not (repo / "ran.txt").exists()


def test_disallowed_tools_hold_even_in_bypass_mode(server, api_env, repo):
    server.script(tool_use("read_file", {"path": "README.md"}), text("Could not."))
    proc = agentcli(
        "-p", "read it", "--disallowedTools", "Read", "--permission-mode", "bypassPermissions", cwd=repo, env=api_env
    )
    assert proc.returncode == 0, proc.stderr
    [result] = tool_results(server.requests[1])
    assert result["is_error"] and "denied by the rule `Read`" in tool_result_text(result)


def test_tools_chooses_what_the_model_is_offered(server, api_env, repo):
    server.script(text("ok"), text("ok"))
    agentcli("-p", "hi", "--tools", "Read,Grep", cwd=repo, env=api_env)
    agentcli("-p", "hi", "--tools", "", cwd=repo, env=api_env)
    assert tool_names(server.requests[0]) == ["read_file", "grep"]
    assert tool_names(server.requests[1]) == []


def test_max_budget_stops_the_run_once_the_cost_passes_it(server, api_env, repo):
    server.script(*[tool_use("glob", {"pattern": "*.py"}) for _ in range(5)], text("never"))
    proc = agentcli("-p", "go", "--max-budget-usd", "0.000001", "--output-format", "json", cwd=repo, env=api_env)
    out = result_of(proc)
    assert proc.returncode == 0  # as Claude Code's: the Agent SDK raises on a non-zero exit after it
    assert (out["subtype"], out["is_error"]) == ("error_max_budget_usd", False) and out["total_cost_usd"] > 0.000001
    assert out["errors"] == ["stopped: the cost passed --max-budget-usd 1e-06"]
    assert len(server.requests) == 1


def test_the_max_budget_usd_setting_stops_a_headless_run_as_the_flag_does(server, api_env, repo):
    from agentcli.paths import user_config_file

    user_config_file().parent.mkdir(parents=True, exist_ok=True)
    user_config_file().write_text("max_budget_usd = 0.000001\n")
    server.script(*[tool_use("glob", {"pattern": "*.py"}) for _ in range(5)], text("never"))
    out = result_of(agentcli("-p", "go", "--output-format", "json", cwd=repo, env=api_env))
    assert out["subtype"] == "error_max_budget_usd" and len(server.requests) == 1


def test_max_budget_counts_a_running_subagents_calls(server, api_env, repo):
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use(
            "task",
            {"description": "Look around", "prompt": "List the files."},
            usage={"input_tokens": 1000, "output_tokens": 10},
        ),
        text("never"),
    )
    server.when(
        lambda b: not offers_tool(b, "task"),
        *[tool_use("glob", {"pattern": "*"}, usage={"input_tokens": 100_000, "output_tokens": 10})] * 5,
    )
    proc = agentcli("-p", "go", "--max-budget-usd", "0.1", "--output-format", "json", cwd=repo, env=api_env)
    out = result_of(proc)
    assert out["subtype"] == "error_max_budget_usd" and out["subagents"][0]["status"] != "done"
    assert len(server.requests) == 2  # the main call, then the child's first: it passed the budget


def test_session_id_names_the_new_session_once(server, api_env, repo):
    server.script(text("one"))
    proc = agentcli("-p", "hi", "--session-id", "my-run-1", "--output-format", "json", cwd=repo, env=api_env)
    assert result_of(proc)["session_id"] == "my-run-1"
    again = agentcli("-p", "hi", "--session-id", "my-run-1", cwd=repo, env=api_env)
    assert again.returncode == 2 and "in use already" in again.stderr


def test_settings_as_json_text_or_file(server, api_env, repo, tmp_path):
    server.script(tool_use("bash", {"command": "touch ran.txt"}), text("no"))
    inline = json.dumps({"permissions": {"deny": ["Bash"]}})
    proc = agentcli("-p", "go", "--settings", inline, "--permission-mode", "bypassPermissions", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert tool_results(server.requests[1])[0]["is_error"] and not (repo / "ran.txt").exists()

    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"model": "qwen3:8b"}))
    server.script(text("local"))
    assert agentcli("-p", "hi", "--settings", str(settings), cwd=repo, env=api_env).returncode == 0
    assert server.requests[-1]["model"] == "qwen3:8b"


def test_add_dir_lets_the_tools_use_another_folder_and_no_more(server, api_env, repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("shared notes\n")
    server.script(
        reply(
            tool_use_block("read_file", {"path": str(other / "notes.txt")}),
            tool_use_block("write_file", {"path": str(other / "new.txt"), "content": "x\n"}),
            tool_use_block("write_file", {"path": str(tmp_path / "escape.txt"), "content": "x\n"}),
            tool_use_block("write_file", {"path": str(other / ".git" / "config"), "content": "x\n"}),
        ),
        text("Done."),
    )
    proc = agentcli("-p", "go", "--add-dir", str(other), "--permission-mode", "acceptEdits", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    read, write, escape, protected = tool_results(server.requests[1])
    assert "shared notes" in tool_result_text(read) and not read["is_error"]
    assert not write["is_error"] and (other / "new.txt").read_text() == "x\n"
    assert escape["is_error"] and not (tmp_path / "escape.txt").exists()
    assert protected["is_error"] and "protected" in tool_result_text(protected)  # as inside the workspace
    assert not (other / ".git").exists()


def test_stream_json_input_runs_every_message_read_before_the_end(server, api_env, repo):
    server.script(text("First."), text("Second."))
    lines = "".join(
        json.dumps({"type": "user", "message": {"role": "user", "content": c}}) + "\n"
        for c in ("one", [{"type": "text", "text": "two"}])
    )
    proc = agentcli(
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        cwd=repo,
        env=api_env,
        stdin=lines,
    )
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines() if json.loads(line)["type"] == "result"]
    assert [r["result"] for r in results] == ["First.", "Second."]
    assert results[0]["session_id"] == results[1]["session_id"]


@pytest.mark.parametrize(
    "args, says",
    [
        (["--thinking", "sometimes"], "Unknown thinking mode 'sometimes'"),
        (["--mcp-config", "{not json"], "the inline JSON is not valid"),
        (["--mcp-config", "/no/such/file.json"], "is neither a file nor a JSON object"),
        (["--tools", "Bash,NotebookEdit"], "no tool 'NotebookEdit'"),
        (["--allowedTools", "NotebookEdit"], "no tool 'NotebookEdit'"),
        (["--settings", '{"hooks": {}, "env": {}}'], "does not understand 'env'"),
        (["--add-dir", "/no/such/dir"], "no such directory"),
        (["--max-budget-usd", "1", "--model", "qwen3:8b"], "price"),
        (["--input-format", "stream-json", "--output-format", "json"], "needs --output-format stream-json"),
        (["--include-partial-messages"], "stream-json only"),
    ],
)
def test_flags_agentcli_cannot_honour_are_usage_errors(server, api_env, repo, args, says):
    proc = agentcli("-p", "hi", *args, cwd=repo, env=api_env)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert server.requests == []


def test_headless_flags_outside_headless_are_usage_errors(repo):
    proc = agentcli("--plain", "--system-prompt", "x", cwd=repo)
    assert proc.returncode == 2 and "--system-prompt works with -p" in proc.stderr


def test_sigterm_stops_a_stream_json_input_run_and_skips_what_is_queued(server, api_env, repo):
    held = threading.Event()
    server.script(text("never", gate=held), text("not asked"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentcli",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    try:
        for prompt in ("one", "two"):
            proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n")
        proc.stdin.flush()  # and stdin stays open: the signal, not the end of input, ends the run
        wait_until(lambda: len(server.requests) == 1, "the first prompt's model call never started")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        held.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143 and "Traceback" not in err
    results = [json.loads(line) for line in out.splitlines() if json.loads(line)["type"] == "result"]
    assert [(r["is_error"], r["terminal_reason"]) for r in results] == [(True, "interrupted")]
    assert len(server.requests) == 1


def test_control_requests_agentcli_cannot_serve_get_errors_that_name_them(server, api_env, repo):
    server.script(text("Answered."))
    lines = [
        {
            "type": "control_request",
            "request_id": "r1",
            "request": {"subtype": "initialize", "hooks": {"TeammateIdle": [{"hookCallbackIds": ["hook_0"]}]}},
        },
        {"type": "control_request", "request_id": "r2", "request": {"subtype": "apply_flag_settings"}},
        {"type": "control_request", "request_id": "r3", "request": {"subtype": "initialize", "hooks": None}},
        {"type": "user", "message": {"role": "user", "content": "hi"}},
    ]
    proc = agentcli(
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        cwd=repo,
        env=api_env,
        stdin="".join(json.dumps(line) + "\n" for line in lines),
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    responses = {r["response"]["request_id"]: r["response"] for r in out if r["type"] == "control_response"}
    assert responses["r1"]["subtype"] == "error" and "hook event 'TeammateIdle'" in responses["r1"]["error"]
    assert responses["r2"]["subtype"] == "error" and "'apply_flag_settings'" in responses["r2"]["error"]
    assert responses["r3"]["subtype"] == "success"
    assert out[-1]["type"] == "result" and out[-1]["result"] == "Answered."
