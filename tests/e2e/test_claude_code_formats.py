"""`agentcli -p` output in Claude Code's shapes, parsed by claude-agent-sdk's own message parser."""

from __future__ import annotations

import json
from pathlib import Path

from claude_agent_sdk import AssistantMessage, Message, ResultMessage, ToolUseBlock, UserMessage
from claude_agent_sdk._internal.message_parser import parse_message
from claude_agent_sdk.types import StreamEvent, TaskNotificationMessage, TaskProgressMessage, TaskStartedMessage

from tests.e2e.test_headless import agentcli, delegation_script
from tests.fakes.anthropic_server import text

REFERENCE = Path("/work/shared/reference/claude-code-stream-json.sample.jsonl")


def parsed(stdout: str) -> list[Message]:
    """Every line through the SDK's parser; none may be unknown to it (the parser returns None then)."""
    messages: list[Message] = []
    for line in stdout.splitlines():
        message = parse_message(json.loads(line))
        assert message is not None, f"the SDK does not know this line: {line[:200]}"
        messages.append(message)
    return messages


def test_json_result_has_claude_codes_fields(server, api_env, repo):
    delegation_script(server)
    proc = agentcli("-p", "Use a subagent to find auth", "--output-format", "json", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    [result] = parsed(proc.stdout)
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.num_turns) == ("success", False, 2)
    assert result.result == "Auth is handled in `src/app/auth.py:9`."
    assert isinstance(result.total_cost_usd, float) and result.total_cost_usd > 0
    assert isinstance(result.duration_api_ms, int) and result.duration_ms >= result.duration_api_ms >= 0
    assert result.usage is not None
    assert (
        set(result.usage) == {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
        and result.usage["input_tokens"] > 0
    )
    out = json.loads(proc.stdout)
    [child] = out["subagents"]  # agentcli's extras stay
    assert child["id"] == "sa-1" and "cache_read_input_tokens" in child["usage"]
    assert isinstance(out["tokens_kept_out"], int)


def test_cost_is_a_number_when_the_price_is_unknown(server, api_env, repo):
    server.script(text("hi"))
    proc = agentcli("-p", "hi", "--model", "qwen3:8b", "--output-format", "json", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total_cost_usd"] == 0


def test_stream_json_parses_with_the_sdk_and_tags_the_child(server, api_env, repo):
    delegation_script(server)
    proc = agentcli("-p", "delegate it", "--output-format", "stream-json", "--verbose", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    messages = parsed(proc.stdout)
    assert (lines[0]["type"], lines[0]["subtype"]) == ("system", "init")
    assert isinstance(messages[-1], ResultMessage) and str(messages[-1].result).startswith("Auth is handled")
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    task_call = next(b for m in assistants for b in m.content if isinstance(b, ToolUseBlock) and b.name == "task")
    child = [m for m in assistants if m.parent_tool_use_id is not None]
    assert child and all(m.parent_tool_use_id == task_call.id for m in child)
    assert all(m.model for m in assistants) and all(len(m.content) == 1 for m in assistants)
    child_results = [m for m in messages if isinstance(m, UserMessage) and m.parent_tool_use_id == task_call.id]
    assert child_results, "the child's tool results are user lines with its parent id"
    [started] = [m for m in messages if isinstance(m, TaskStartedMessage)]
    [progress] = [m for m in messages if isinstance(m, TaskProgressMessage)]
    [done] = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert started.task_id == progress.task_id == done.task_id == "sa-1"
    assert started.tool_use_id == done.tool_use_id == task_call.id and started.description == "Find auth handler"
    assert progress.last_tool_name == "grep" and progress.usage["tool_uses"] == 1
    assert done.status == "completed" and done.summary.startswith("handle_auth is defined")
    assert Path(done.output_file).name == "sa-1.jsonl" and Path(done.output_file).exists()
    # Field sets as Claude Code's own lines have them (the reference sample).
    reference = [json.loads(line) for line in REFERENCE.read_text().splitlines()]
    for kind in ("task_started", "task_progress", "task_notification"):
        ours = next(line for line in lines if line.get("subtype") == kind)
        theirs = next(line for line in reference if line.get("subtype") == kind)
        missing = {k for k in theirs if k not in ours} - {
            "run_id",
            "is_backgrounded",
            "spawn_depth",
            "summary_is_report",
        }
        assert not missing, f"{kind} lacks {missing}"


def test_partial_messages_add_raw_stream_events(server, api_env, repo):
    server.script(text("Hello there, streaming world."))
    proc = agentcli(
        "-p", "hi", "--output-format", "stream-json", "--verbose", "--include-partial-messages", cwd=repo, env=api_env
    )
    assert proc.returncode == 0, proc.stderr
    events = [m.event for m in parsed(proc.stdout) if isinstance(m, StreamEvent)]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop" and "content_block_delta" in kinds
    streamed = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert streamed == "Hello there, streaming world."


def test_events_format_keeps_the_engine_vocabulary(server, api_env, repo):
    delegation_script(server)
    proc = agentcli("-p", "delegate it", "--output-format", "events", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = {line["type"] for line in lines}
    assert {"text_delta", "tool_call_started", "subagent_started", "subagent_finished"} <= kinds
    assert lines[-1]["type"] == "result" and lines[-1]["subtype"] == "success"


def test_stream_json_without_verbose_is_a_usage_error(repo):
    proc = agentcli("-p", "hi", "--output-format", "stream-json", cwd=repo)
    assert proc.returncode == 2 and "--verbose" in proc.stderr and "Traceback" not in proc.stderr
