"""`agentcli -p` under injected API faults: a cut or malformed reply is retried, never taken as the answer."""

from __future__ import annotations

import json
import socket

import pytest

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import error, raw, reply, text, tool_result_text, tool_results, tool_use_block
from tests.retries import counted, stderr_notes, stderr_numbered_in_order

PARTIAL = text("I'll start by reading the README and then I will explain what it says.")
FAULTS = {
    "clean cut after partial text": PARTIAL.with_options(end_after_events=4),
    "garbage SSE line": PARTIAL.with_options(garbage_after_events=4),
    "non-SSE 200": raw("<!DOCTYPE html>\n<html>\n\n<body>Gateway Timeout</body>\n\n</html>\n"),
}


def overload_then_server_error(server):
    server.script(
        error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"}),
        error(500, "api_error", "Internal server error", headers={"retry-after": "0"}),
    )


def retry_notices(stderr: str) -> list[str]:
    """The retry notes on stderr that tests count (tests/retries.py)."""
    return [note for note in stderr_notes(stderr) if counted(note)]


@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_after_an_overload_and_a_server_error_is_retried(server, api_env, repo, fault):
    overload_then_server_error(server)
    server.script(FAULTS[fault], text("The README describes a tiny demo app."))
    proc = agentcli("-p", "What does the README say?", "--output-format", "json", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["result"], out["is_error"], out["subtype"]) == (
        "The README describes a tiny demo app.",
        False,
        "success",
    )
    notices = retry_notices(proc.stderr)
    assert len(notices) == 3 and stderr_numbered_in_order(proc.stderr, 8), proc.stderr
    assert "Traceback" not in proc.stderr
    bodies = [r["messages"] for r in server.requests]
    assert len(bodies) == 4 and all(b == bodies[0] for b in bodies)  # the same question, nothing else twice
    server.assert_no_rejections()


def test_torn_tool_json_after_an_overload_and_a_server_error_runs_the_completed_call_once(server, api_env, repo):
    overload_then_server_error(server)
    read = tool_use_block("read_file", {"path": "README.md"})
    torn = tool_use_block("grep", {"pattern": "demo"})
    server.script(
        reply("Let me read it.", read, torn, torn_json='{"pattern": "de}'),
        text("The README describes a tiny demo app."),
    )
    proc = agentcli("-p", "What does the README say?", cwd=repo, env=api_env)
    # Every text the model wrote for the prompt: the one beside the completed call, then the answer.
    assert (proc.returncode, proc.stdout) == (0, "Let me read it.\n\nThe README describes a tiny demo app.\n"), (
        proc.stderr
    )
    notices = retry_notices(proc.stderr)
    assert len(notices) == 3 and "not valid JSON" in notices[2], proc.stderr
    assert len(server.requests) == 4
    [result] = tool_results(server.requests[3])
    assert result["tool_use_id"] == read["id"] and "Demo app" in tool_result_text(result)
    asked = [
        b["id"]
        for m in server.requests[3]["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    assert asked == [read["id"]]  # the torn call was dropped, the completed one asked for once
    server.assert_no_rejections()


def test_a_stream_broken_on_every_try_is_an_error(server, api_env, repo):
    server.script(*[PARTIAL.with_options(end_after_events=4)] * 2)
    proc = agentcli("-p", "hi", "--output-format", "json", cwd=repo, env={**api_env, "AGENTCLI_API_RETRIES": "1"})
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["is_error"] is True and "ended before the reply was complete" in out["result"]
    assert "I'll start" not in proc.stdout


def test_a_refusal_is_not_success(server, api_env, repo):
    server.script(text("I can't", stop_reason="refusal"))
    proc = agentcli("-p", "hi", "--output-format", "json", cwd=repo, env=api_env)
    assert proc.returncode == 1 and "declined to answer" in proc.stderr
    out = json.loads(proc.stdout)
    assert out["is_error"] is True and (out["subtype"], out["terminal_reason"]) == ("error_during_execution", "refusal")


PASSWORD = "s3cret-Pass-word"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_password_in_the_base_url_is_never_shown_or_stored(server, api_env, repo, isolated_home):
    url = server.base_url.replace("http://", f"http://me:{PASSWORD}@")
    server.script(
        error(500, "api_error", f"upstream {url}/v1/messages failed", headers={"retry-after": "0"}), text("Hello.")
    )
    ok = agentcli("-p", "hi", "--output-format", "events", cwd=repo, env={**api_env, "ANTHROPIC_BASE_URL": url})
    assert ok.returncode == 0, ok.stderr
    assert "me:***@" in ok.stderr + ok.stdout  # the notice names the URL, without its password
    dead = f"http://me:{PASSWORD}@127.0.0.1:{closed_port()}"
    failed = agentcli(
        "-p",
        "hi",
        "--output-format",
        "json",
        cwd=repo,
        env={**api_env, "ANTHROPIC_BASE_URL": dead, "AGENTCLI_API_RETRIES": "0"},
    )
    assert failed.returncode == 1 and "connection refused" in json.loads(failed.stdout)["result"]
    assert "me:***@127.0.0.1" in json.loads(failed.stdout)["result"]
    files = list(isolated_home.rglob("*.jsonl"))
    assert len(files) >= 2
    for shown in [ok.stdout, ok.stderr, failed.stdout, failed.stderr, *(f.read_text() for f in files)]:
        assert PASSWORD not in shown
