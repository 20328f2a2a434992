"""claude-agent-sdk drives agentcli: ``query()`` and ``ClaudeSDKClient`` with ``cli_path`` pointing at it,
against the stand-in server. The SDK speaks its control protocol over agentcli's standard input."""

from __future__ import annotations

import base64
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    TextBlock,
    ToolUseBlock,
    query,
)

from tests.e2e.test_headless import delegation_script
from tests.fakes.anthropic_server import message_text, reply, text, tool_use, tool_use_block
from tests.narrow import of
from tests.waiting import until


@pytest.fixture
def cli_path(tmp_path: Path) -> str:
    """A small wrapper the SDK starts as its CLI: `python -m agentcli "$@"`."""
    script = tmp_path / "agentcli-cli"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentcli "$@"\n')
    script.chmod(0o755)
    return str(script)


def options(cli_path: str, repo: Path, api_env: dict[str, str], **extra: object) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=cli_path, cwd=str(repo), env=dict(api_env), **extra)  # type: ignore[arg-type]


async def test_query_yields_the_child_messages_and_a_result(server, api_env, repo, cli_path):
    delegation_script(server)
    opts = options(
        cli_path,
        repo,
        api_env,
        permission_mode="default",
        allowed_tools=["Read", "Grep"],
        max_turns=5,
        system_prompt="You are a terse code finder.",
    )
    messages = [m async for m in query(prompt="Use a subagent to find auth", options=opts)]
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    task_call = next(b for m in assistants for b in m.content if isinstance(b, ToolUseBlock) and b.name == "task")
    assert any(m.parent_tool_use_id == task_call.id for m in assistants), "the subagent's messages"
    assert all(m.parent_tool_use_id is None for m in assistants if any(b is task_call for b in m.content))
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error and result.subtype == "success"
    assert result.result == "Auth is handled in `src/app/auth.py:9`."
    assert result.total_cost_usd and result.total_cost_usd > 0
    assert result.usage is not None and result.usage["input_tokens"] > 0
    main_request = server.requests[0]
    assert main_request["system"][0]["text"] == "You are a terse code finder."
    server.assert_no_rejections()


async def test_client_holds_two_turns_and_an_interrupt_stops_a_running_one(server, api_env, repo, cli_path):
    held = threading.Event()
    server.script(text("First answer."), text("never arrives", gate=held), text("Third answer."))
    try:
        async with ClaudeSDKClient(options(cli_path, repo, api_env)) as client:
            await client.query("one")
            first = [m async for m in client.receive_response()]
            assert isinstance(first[-1], ResultMessage) and first[-1].result == "First answer."
            assert any(
                isinstance(b, TextBlock) and b.text == "First answer."
                for m in first
                if isinstance(m, AssistantMessage)
                for b in m.content
            )

            await client.query("two")
            await until(lambda: len(server.requests) == 2, "the second turn's model call never started")
            await client.interrupt()
            second = [m async for m in client.receive_response()]
            assert isinstance(second[-1], ResultMessage) and second[-1].is_error
            assert second[-1].subtype == "error_during_execution"
            held.set()

            await client.query("three")
            third = [m async for m in client.receive_response()]
            last = of(ResultMessage, third[-1])
            assert last.result == "Third answer." and not last.is_error
            assert last.session_id == of(ResultMessage, first[-1]).session_id
    finally:
        held.set()
    # One conversation: the third call carries the first turn's question and answer.
    texts = [message_text(m) for m in server.requests[-1]["messages"]]
    assert texts[0] == "one" and "First answer." in texts


async def test_an_unsupported_request_is_an_error_that_names_it_and_the_run_goes_on(server, api_env, repo, cli_path):
    server.script(tool_use("write_file", {"path": "notes.md", "content": "hi\n"}), text("Still here."))
    async with ClaudeSDKClient(options(cli_path, repo, api_env)) as client:
        with pytest.raises(Exception, match="rewind_files"):
            await client.rewind_files("a-message-id")
        await client.set_permission_mode("acceptEdits")  # headless default mode would refuse the write
        await client.query("are you there? write notes")
        reply = [m async for m in client.receive_response()]
    assert of(ResultMessage, reply[-1]).result == "Still here."
    assert (repo / "notes.md").read_text() == "hi\n"


async def test_an_error_result_reaches_the_sdk_exception_with_its_reason(server, api_env, repo, cli_path):
    """The SDK's ResultError names why the run ended (the result's ``errors``), not the model's last text."""
    from claude_agent_sdk import ResultError

    server.script(
        tool_use("grep", {"pattern": "login"}),
        reply("Still looking, nearly there.", tool_use_block("grep", {"pattern": "auth"})),
    )
    seen = []
    with pytest.raises(ResultError) as raised:
        async for message in query(prompt="Find login", options=options(cli_path, repo, api_env, max_turns=2)):
            seen.append(message)
    assert raised.value.errors == ["stopped after --max-turns 2 turns"]
    assert "stopped after --max-turns 2 turns" in str(raised.value)
    assert "Still looking" not in str(raised.value)
    assert isinstance(seen[-1], ResultMessage) and seen[-1].subtype == "error_max_turns"


async def test_a_message_with_an_image_is_sent_and_one_agentcli_cannot_take_gets_an_error_result(
    server, api_env, repo, cli_path
):
    """The Agent SDK's user messages as the SDK's users write them: an image block goes to the model with the
    text; a block agentcli does not take, and a damaged image, each get an error result (the client waited
    forever on a message dropped with a warning)."""
    from tests.core.test_images import images_in, png

    server.script(text("A red square."), text("Still here."))
    picture = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png(4, 3)).decode()}

    def user(*blocks: dict[str, Any]) -> dict[str, Any]:
        return {"type": "user", "message": {"role": "user", "content": list(blocks)}, "parent_tool_use_id": None}

    async def messages(*lines: dict[str, Any]):
        for line in lines:
            yield line

    async with ClaudeSDKClient(options(cli_path, repo, api_env)) as client:
        await client.query(
            messages(user({"type": "image", "source": picture}, {"type": "text", "text": "What is this?"}))
        )
        first = [m async for m in client.receive_response()]
        await client.query(messages(user({"type": "document", "source": {"type": "text", "data": "x"}})))
        second = [m async for m in client.receive_response()]
        await client.query(messages(user({"type": "image", "source": {**picture, "data": "bm90IGFuIGltYWdl"}})))
        third = [m async for m in client.receive_response()]
        await client.query("are you there?")
        fourth = [m async for m in client.receive_response()]
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "A red square." and not first[-1].is_error
    sent = images_in(server.requests[0])
    assert [i["source"]["data"] for i in sent] == [picture["data"]]
    assert message_text(server.requests[0]["messages"][0]).startswith("What is this?")
    assert isinstance(second[-1], ResultMessage) and second[-1].is_error
    assert "not 'document'" in str(second[-1].result)
    assert isinstance(third[-1], ResultMessage) and third[-1].is_error
    assert "Image 1 of the message is not a PNG, JPEG, GIF or WebP image" in str(third[-1].result)
    assert of(ResultMessage, fourth[-1]).result == "Still here." and len(server.requests) == 2
    server.assert_no_rejections()
