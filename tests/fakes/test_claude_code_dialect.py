"""The stand-in server's Claude Code dialect: requests as Claude Code's CLI sends them (messages with the
role ``system``), driven through the real anthropic SDK."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text, tool_use_block, validate_claude_code_request

MODEL = "claude-test"
TOOLS = [
    {"name": name, "description": name, "input_schema": {"type": "object", "properties": {}}}
    for name in ("Agent", "Read", "Bash")
]


def environment(content: Any = "# Environment\nYou have been invoked in /tmp/project.") -> dict[str, Any]:
    return {"role": "system", "content": content}


def claude_code_body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "tools": TOOLS, "messages": list(messages)}


def send(server: FakeAnthropic, messages: list[dict[str, Any]]) -> str:
    client = anthropic.Anthropic(base_url=server.base_url, api_key="test", max_retries=0)
    reply = client.messages.create(model=MODEL, max_tokens=64, tools=TOOLS, messages=messages)  # type: ignore[arg-type]
    return "".join(block.text for block in reply.content if block.type == "text")


def test_a_claude_code_request_with_a_system_message_is_answered():
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}, environment()]
    with FakeAnthropic(responder=lambda body: text("Hello."), dialect="claude-code") as server:
        assert send(server, messages) == "Hello."
        assert server.rejections == []
        assert server.requests[0]["messages"][1]["role"] == "system"


def test_the_api_dialect_still_rejects_a_system_message():
    messages = [{"role": "user", "content": "hi"}, environment()]
    with FakeAnthropic(responder=lambda body: text("Hello.")) as server:
        with pytest.raises(anthropic.BadRequestError) as info:
            send(server, messages)
    assert "messages.1.role: Input should be 'user' or 'assistant'" in str(info.value)


@pytest.mark.parametrize(
    "messages, expected",
    [
        ([environment(), {"role": "user", "content": "hi"}], 'first message must use the "user" role'),
        ([{"role": "user", "content": "hi"}, environment([])], "a system message must have non-empty text content"),
        (
            [{"role": "user", "content": "hi"}, environment("")],
            "messages.1.content.0: text content blocks must be non-empty",
        ),
        (
            [{"role": "user", "content": "hi"}, environment([tool_use_block("Read", {}, id="toolu_01x")])],
            "messages.1.content.0: a system message holds text blocks only",
        ),
        (
            [{"role": "user", "content": "hi"}, environment([{"type": "text", "text": "  "}])],
            "messages.1.content.0: text content blocks must contain non-whitespace text",
        ),
        # The rest is checked as the API checks it: a tool call left unanswered is still refused.
        (
            [
                {"role": "user", "content": "hi"},
                environment(),
                {"role": "assistant", "content": [tool_use_block("Bash", {"command": "ls"}, id="toolu_01open")]},
                {"role": "user", "content": "and then?"},
            ],
            "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_01open",
        ),
    ],
)
def test_the_claude_code_dialect_refuses_what_its_cli_would_never_send(messages, expected):
    problem = validate_claude_code_request(claude_code_body(*messages))
    assert problem is not None and expected in problem, problem
    with FakeAnthropic(responder=lambda body: text("unreachable"), dialect="claude-code") as server:
        with pytest.raises(anthropic.BadRequestError):
            send(server, messages)
        assert len(server.rejections) == 1


def test_an_unknown_dialect_is_refused():
    with pytest.raises(ValueError, match="unknown dialect"):
        FakeAnthropic(dialect="claude-kode")


def test_claude_code_defers_tools_beside_its_own_tool_search_and_no_other_tool_may():
    """Claude Code 2.1.332 sends a tool with defer_loading beside ToolSearch, a tool of its own whose results name
    deferred tools (the API's custom tool search); a deferred tool beside no search tool at all is still refused."""
    deferred = {"name": "DeferredToolPlaceholder", "input_schema": {"type": "object"}, "defer_loading": True}
    search = {"name": "ToolSearch", "description": "find a deferred tool", "input_schema": {"type": "object"}}
    ask = {"role": "user", "content": "hi"}
    body = claude_code_body(ask, environment())
    assert validate_claude_code_request({**body, "tools": [*TOOLS, search, deferred]}) is None
    problem = validate_claude_code_request({**body, "tools": [*TOOLS, deferred]})
    assert problem is not None and "require a tool search tool" in problem
