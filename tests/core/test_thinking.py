"""Extended thinking: the request asks for it as the API accepts, thinking blocks go back unaltered
through tool use and resume, and a server that refuses thinking is asked again without it, once."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic.types import MessageParam

from agentcli.config import ConfigError, Settings
from agentcli.core.events import AssistantMessage, Notice, ThinkingDelta
from agentcli.core.model.catalogue import supports_adaptive_thinking
from agentcli.core.model.llm import LLM
from tests.conftest import API_KEY
from tests.fakes.anthropic_server import error, reply, text, thinking_block, tool_use_block


def test_the_default_is_adaptive_for_claude_4_6_and_later_and_off_for_other_models():
    assert supports_adaptive_thinking("claude-sonnet-5-5") and supports_adaptive_thinking("claude-opus-4-6")
    assert not supports_adaptive_thinking("claude-sonnet-4-5") and not supports_adaptive_thinking("llama3.1:8b")
    llm = LLM(thinking="auto")
    assert llm.thinking_param("claude-opus-4-7", 16_000) == {"type": "adaptive"}
    assert llm.thinking_param("qwen2.5-coder", 16_000) is None
    on = LLM(thinking="on", thinking_budget=50_000)
    assert on.thinking_param("claude-sonnet-4-5", 16_000) == {"type": "enabled", "budget_tokens": 15_999}
    assert LLM(thinking="on").thinking_param("x", 1_000) is None  # no budget the API accepts fits


def test_a_bad_thinking_setting_is_one_sentence():
    settings = Settings()
    with pytest.raises(ConfigError, match="Unknown thinking mode 'sometimes'; use off, on or adaptive"):
        settings.merge({"thinking": "sometimes"}, "settings.toml")
    settings.merge({"thinking": "enabled"}, "settings.toml")
    assert settings.thinking == "on"


async def test_thinking_before_a_tool_call_goes_back_unaltered_and_survives_resume(server, make_session, resume):
    thought = thinking_block("The user wants the auth handler; grep for it first.")
    server.script(
        reply(thought, tool_use_block("grep", {"pattern": "def handle_auth"})),
        reply(thinking_block("Found it at line 9."), "handle_auth is in src/app/auth.py:9."),
    )
    session, recorder = make_session(thinking="on", max_thinking_tokens=2048)
    result = await session.send("where is auth handled?")
    assert result.text == "handle_auth is in src/app/auth.py:9."
    server.assert_no_rejections()
    first, second = server.requests
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert second["messages"][1]["content"][0] == thought  # unaltered, signature included
    streamed = "".join(e.text for e in recorder.of(ThinkingDelta))
    assert streamed == thought["thinking"] + "Found it at line 9."
    assert any(b.get("type") == "thinking" for e in recorder.of(AssistantMessage) for b in e.content)
    session.close()

    server.script(text("Still there."))
    resumed, _ = resume(continue_=True, max_tokens=16_000, thinking="on", thinking_budget=2048)
    assert resumed.main.messages[1]["content"][0] == thought
    await resumed.send("and now?")
    server.assert_no_rejections()


def test_the_stand_in_rejects_a_tool_use_turn_whose_thinking_was_dropped_or_altered(server):
    """What the tests above rely on: the stand-in checks thinking as the API does."""
    thought = thinking_block("plan")
    call = tool_use_block("grep", {"pattern": "x"})
    server.script(reply(thought, call))
    base: dict[str, Any] = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 4000,
        "thinking": {"type": "enabled", "budget_tokens": 2000},
        "tools": [{"name": "grep", "input_schema": {"type": "object"}}],
    }
    client = anthropic.Anthropic(api_key=API_KEY, base_url=server.base_url, max_retries=0)
    first = client.messages.create(**base, messages=[{"role": "user", "content": "go"}])
    assert [b.type for b in first.content] == ["thinking", "tool_use"]
    result: MessageParam = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "none"}],
    }
    for sent in ([call], [{**thought, "thinking": "altered plan"}, call]):
        turns: list[Any] = [{"role": "user", "content": "go"}, {"role": "assistant", "content": sent}, result]
        with pytest.raises(anthropic.BadRequestError, match="thinking"):
            client.messages.create(**base, messages=turns)
    client.close()


async def test_a_server_that_refuses_thinking_is_asked_again_without_it_once(server, make_session):
    server.script(
        error(400, "invalid_request_error", "thinking: Extra inputs are not permitted"), text("Hello."), text("Again.")
    )
    session, recorder = make_session(thinking="adaptive")
    assert (await session.send("hi")).text == "Hello."
    assert (await session.send("hi again")).text == "Again."
    first, second, third = server.requests
    assert first["thinking"] == {"type": "adaptive"}
    assert "thinking" not in second and "thinking" not in third
    [notice] = [n for n in recorder.of(Notice) if "thinking" in n.text]
    assert "does not accept extended thinking" in notice.text and "Extra inputs are not permitted" in notice.text


def test_the_thinking_flag_takes_claude_code_spellings_and_refuses_others(repo):
    from tests.e2e.test_headless import agentcli

    bad = agentcli("-p", "hi", "--thinking", "maybe", cwd=repo)
    assert bad.returncode == 2 and "Unknown thinking mode 'maybe'" in bad.stderr and "Traceback" not in bad.stderr
    from agentcli.cli import build_parser

    args = build_parser().parse_args(["--thinking", "enabled", "--max-thinking-tokens", "4096"])
    assert args.thinking == "on" and args.max_thinking_tokens == 4096
