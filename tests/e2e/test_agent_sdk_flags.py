"""The Agent SDK's options that became Claude Code flags, driven by the SDK itself against agentcli:
``output_format`` (--json-schema), ``fallback_model``, ``effort``, ``include_hook_events`` and the
``rewind_files`` control request. Each was refused with a sentence before agentcli honoured it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeSDKClient,
    HookEventMessage,
    ResultError,
    ResultMessage,
    SystemMessage,
    UserMessage,
    query,
)

from tests.e2e.test_agent_sdk import cli_path, options  # noqa: F401 - the fixture
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import (
    error,
    last_user_text,
    offers_tool,
    text,
    tool_result_text,
    tool_results,
    tool_use,
)
from tests.narrow import of

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "born": {"type": "integer", "minimum": 0}},
    "required": ["name", "born"],
}
FORM = {"type": "json_schema", "schema": PERSON}


async def run(opts: Any, prompt: str = "go") -> list[Any]:
    return [m async for m in query(prompt=prompt, options=opts)]


async def test_a_structured_answer_that_fits_the_schema_is_the_results_structured_output(
    server, api_env, repo, cli_path
):
    server.script(
        tool_use("structured_output", {"name": "Ada Lovelace", "born": 1815, "note": "extra is allowed"}),
        text("Ada Lovelace, born 1815."),
    )
    result = (await run(options(cli_path, repo, api_env, output_format=FORM), "Who wrote the first program?"))[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success" and not result.is_error
    assert result.structured_output == {"name": "Ada Lovelace", "born": 1815, "note": "extra is allowed"}
    assert result.result == "Ada Lovelace, born 1815."
    offered = {t["name"]: t for t in server.requests[0]["tools"]}
    assert offered["structured_output"]["input_schema"]["properties"] == PERSON["properties"]
    assert "call the structured_output tool" in server.requests[0]["system"][0]["text"]
    server.assert_no_rejections()


async def test_an_answer_that_does_not_fit_gets_the_validation_error_and_the_model_tries_again(
    server, api_env, repo, cli_path
):
    server.script(
        tool_use("structured_output", {"name": "Ada", "born": "long ago"}, id="toolu_bad"),
        tool_use("structured_output", {"name": "Ada", "born": 1815}, id="toolu_good"),
        text("Done."),
    )
    result = (await run(options(cli_path, repo, api_env, output_format=FORM)))[-1]
    assert result.structured_output == {"name": "Ada", "born": 1815}
    refused = {b["tool_use_id"]: b for b in tool_results(server.requests[1])}["toolu_bad"]
    assert refused["is_error"] is True
    said = tool_result_text(refused)
    assert "does not match the schema" in said and "at born: 'long ago' is not of type 'integer'" in said


async def test_a_model_that_never_answers_in_form_ends_with_claude_codes_error_subtype(server, api_env, repo, cli_path):
    server.script(*(text(f"Plain words, try {n}.") for n in range(1, 6)))
    seen: list[Any] = []
    with pytest.raises(ResultError) as raised:
        async for message in query(prompt="go", options=options(cli_path, repo, api_env, output_format=FORM)):
            seen.append(message)
    result = seen[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.subtype == "error_max_structured_output_retries" and result.structured_output is None
    assert raised.value.errors == ["no answer matching --json-schema came in 5 attempts"]
    assert len(server.requests) == 5  # the first answer and four reminders, then it gives up
    assert "You MUST call the structured_output tool" in last_user_text(server.requests[1])


async def test_subagents_are_not_offered_the_answer_tool(server, api_env, repo, cli_path):
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Look", "prompt": "Look around."}),
        tool_use("structured_output", {"name": "Ada", "born": 1815}),
        text("Done."),
    )
    server.when(lambda b: not offers_tool(b, "task"), text("Looked."))
    result = (await run(options(cli_path, repo, api_env, output_format=FORM)))[-1]
    assert result.structured_output == {"name": "Ada", "born": 1815}
    child = next(r for r in server.requests if not offers_tool(r, "task"))
    assert not offers_tool(child, "structured_output")


def test_json_output_of_p_carries_the_structured_output_and_hooks_see_claude_codes_name(server, api_env, repo):
    log = repo.parent / "hook.log"
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "StructuredOutput", "hooks": [{"type": "command", "command": f"cat >> {log}"}]}]
        }
    }
    server.script(tool_use("structured_output", {"name": "Ada", "born": 1815}), text("Done."))
    done = agentcli(
        "-p",
        "who?",
        "--output-format",
        "json",
        "--json-schema",
        json.dumps(PERSON),
        "--settings",
        json.dumps(settings),
        cwd=repo,
        env=api_env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structured_output"] == {"name": "Ada", "born": 1815}
    assert json.loads(log.read_text())["tool_name"] == "StructuredOutput"


def test_a_schema_agentcli_cannot_use_is_one_sentence(repo):
    done = agentcli("-p", "hi", "--json-schema", '{"type": "array"}', cwd=repo)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--json-schema: the schema must describe an object" in done.stderr
    done = agentcli("-p", "hi", "--json-schema", '{"type": "object", "properties": {"a": {"type": 7}}}', cwd=repo)
    assert done.returncode == 2 and "--json-schema: not a valid JSON Schema" in done.stderr


async def test_an_overloaded_model_gives_way_to_the_fallback_model_and_a_notice_says_so(
    server, api_env, repo, cli_path
):
    overloaded = error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})
    server.script(overloaded, overloaded, overloaded, text("From the fallback."), text("Still the fallback."))
    said: list[str] = []
    opts = options(
        cli_path, repo, api_env, model="claude-opus-4-1", fallback_model="claude-haiku-4-5", stderr=said.append
    )
    async with ClaudeSDKClient(opts) as client:
        await client.query("one")
        first = [m async for m in client.receive_response()][-1]
        await client.query("two")
        second = [m async for m in client.receive_response()][-1]
    assert of(ResultMessage, first).result == "From the fallback."
    assert of(ResultMessage, second).result == "Still the fallback."
    assert [r["model"] for r in server.requests] == ["claude-opus-4-1"] * 3 + ["claude-haiku-4-5"] * 2
    assert any("going on with claude-haiku-4-5 (--fallback-model)" in line for line in said)


async def test_a_model_that_is_not_found_gives_way_at_once(server, api_env, repo, cli_path):
    server.script(error(404, "not_found_error", "model: claude-gone"), text("Found me."))
    opts = options(cli_path, repo, api_env, model="claude-gone", fallback_model="claude-sonnet-4-5")
    assert (await run(opts))[-1].result == "Found me."
    assert [r["model"] for r in server.requests] == ["claude-gone", "claude-sonnet-4-5"]


def test_a_fallback_that_is_the_model_itself_is_one_sentence(repo):
    done = agentcli(
        "-p",
        "hi",
        "--model",
        "claude-haiku-4-5",
        "--fallback-model",
        "claude-haiku-4-5",
        cwd=repo,
        env={"ANTHROPIC_API_KEY": "k"},
    )
    assert done.returncode == 2 and "--fallback-model must name another model" in done.stderr


@pytest.mark.parametrize(
    "model, effort, config, thinking",
    [
        ("claude-opus-4-6", "low", {"effort": "low"}, {"type": "adaptive"}),  # effort guides adaptive thinking
        ("claude-opus-4-5", "max", {"effort": "high"}, None),  # Opus 4.5 has no max: the nearest level below
        ("claude-sonnet-4-5", "medium", None, {"type": "enabled", "budget_tokens": 4096}),  # no effort: a budget
        ("claude-sonnet-4-5", "low", None, None),
    ],
)
async def test_effort_is_the_apis_effort_where_the_model_has_it_else_a_thinking_budget(
    server, api_env, repo, cli_path, model, effort, config, thinking
):
    server.script(text("ok"))
    assert (await run(options(cli_path, repo, api_env, model=model, effort=effort)))[-1].result == "ok"
    sent = server.requests[0]
    assert sent.get("output_config") == config and sent.get("thinking") == thinking
    server.assert_no_rejections()


async def test_hook_events_come_as_hook_started_and_hook_response(server, api_env, repo, cli_path):
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked; echo careful >&2"}]}
            ]
        }
    }
    server.script(tool_use("bash", {"command": "echo hi"}), text("Done."))
    opts = options(
        cli_path, repo, api_env, settings=json.dumps(settings), include_hook_events=True, allowed_tools=["Bash"]
    )
    messages = await run(opts)
    hooks = [m for m in messages if isinstance(m, HookEventMessage)]
    assert [m.subtype for m in hooks] == ["hook_started", "hook_response"]
    started, response = (m.data for m in hooks)
    assert started["hook_id"] == response["hook_id"] and started["session_id"] == messages[-1].session_id
    assert {m.hook_event_name for m in hooks} == {"PreToolUse"} and started["hook_name"] == "PreToolUse:Bash"
    assert (response["stdout"], response["stderr"], response["exit_code"], response["outcome"]) == (
        "checked\n",
        "careful\n",
        0,
        "success",
    )
    assert messages[-1].result == "Done."
    # Without the option no hook line comes.
    server.script(tool_use("bash", {"command": "echo hi"}), text("Done."))
    opts = options(cli_path, repo, api_env, settings=json.dumps(settings), allowed_tools=["Bash"])
    assert not [m for m in await run(opts) if isinstance(m, SystemMessage) and m.subtype.startswith("hook_")]


async def test_rewind_files_puts_the_files_back_as_they_were_before_a_user_message(server, api_env, repo, cli_path):
    (repo / "kept.txt").write_text("original\n")
    server.script(
        tool_use("read_file", {"path": "kept.txt"}),
        tool_use("write_file", {"path": "kept.txt", "content": "first\n"}),
        text("one done"),
        tool_use("write_file", {"path": "kept.txt", "content": "second\n"}),
        text("two done"),
        tool_use("write_file", {"path": "new.txt", "content": "new\n"}),
        text("three done"),
        text("yes"),
    )
    opts = options(
        cli_path,
        repo,
        api_env,
        permission_mode="acceptEdits",
        enable_file_checkpointing=True,
        extra_args={"replay-user-messages": None},
    )
    ids: list[str] = []
    async with ClaudeSDKClient(opts) as client:
        for prompt in ("one", "two", "three"):
            await client.query(prompt)
            replies = [m async for m in client.receive_response()]
            ids += [m.uuid for m in replies if isinstance(m, UserMessage) and m.content == prompt and m.uuid]
        assert len(ids) == 3 and (repo / "kept.txt").read_text() == "second\n"
        # A dry run says what would change, in Claude Code's shape, and changes nothing.
        preview = await client._query._send_control_request(  # type: ignore[union-attr]
            {"subtype": "rewind_files", "user_message_id": ids[1], "dry_run": True}
        )
        assert preview == {"canRewind": True, "filesChanged": [str(repo / "kept.txt"), str(repo / "new.txt")]}
        assert (repo / "kept.txt").read_text() == "second\n" and (repo / "new.txt").exists()
        await client.rewind_files(ids[1])
        assert (repo / "kept.txt").read_text() == "first\n" and not (repo / "new.txt").exists()
        await client.rewind_files(ids[0])
        assert (repo / "kept.txt").read_text() == "original\n"
        with pytest.raises(Exception, match="rewind_files: no user message 'not-an-id'"):
            await client.rewind_files("not-an-id")
        await client.query("still here?")
        assert of(ResultMessage, [m async for m in client.receive_response()][-1]).is_error is False
