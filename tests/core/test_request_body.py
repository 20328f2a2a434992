"""Request bodies are built as bytes with each conversation's history JSON kept (core/model/request_body.py):
the body must say exactly what the SDK's own serialization of the same request says, and the kept
JSON must never carry a cache breakpoint into a later request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentcli.core.content import Message
from agentcli.core.model import packed, request_body
from agentcli.core.model.llm import LLM, Credentials
from agentcli.core.model.request_body import RequestBodies, with_cache_breakpoint
from tests.fakes.anthropic_server import FakeAnthropic, text


def params(messages: list[Message]) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-5-5",
        "max_tokens": 1000,
        "system": [{"type": "text", "text": "Be brief. Ünïcode ✓", "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
        "tools": [{"name": "t", "description": "d", "input_schema": {"type": "object"}}],
        "thinking": {"type": "adaptive"},
    }


def history(turns: int) -> list[Message]:
    messages: list[Message] = []
    for i in range(turns):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"question {i} — “quoted”"}]})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]})
    messages.append({"role": "user", "content": "the last question"})
    return messages


def test_the_body_says_what_the_sdk_would_send() -> None:
    from anthropic._utils._json import openapi_dumps

    messages = history(3)
    sdk = json.loads(openapi_dumps({**params(with_cache_breakpoint(messages)), "stream": True}))
    assert json.loads(RequestBodies().build(params(messages))) == sdk


def test_only_the_last_message_carries_the_breakpoint_on_every_call(server: FakeAnthropic) -> None:
    server.script(*(text(f"Answer {i}.") for i in range(3)))
    llm = LLM(credentials=Credentials(api_key="sk-body", base_url=server.base_url))
    messages: list[Message] = [{"role": "user", "content": "first"}]

    async def converse() -> None:
        for i in range(3):
            reply = await llm.stream(system="s", messages=messages, tools=[], on_text=lambda t: None)
            messages.append({"role": "assistant", "content": reply.content})
            messages.append({"role": "user", "content": [{"type": "text", "text": f"next {i}"}]})
        await llm.aclose()

    asyncio.run(converse())
    server.assert_no_rejections()
    for sent in server.requests:
        marked = [
            i
            for i, m in enumerate(sent["messages"])
            for b in m["content"]
            if isinstance(b, dict) and "cache_control" in b
        ]
        assert marked == [len(sent["messages"]) - 1], sent["messages"]
    assert server.requests[2]["messages"][:4] == messages[:4]  # sent unmarked once no longer last
    assert all("cache_control" not in b for m in messages for b in m["content"] if isinstance(b, dict))


def test_each_message_is_serialized_once(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[Any] = []
    real = request_body.encode

    def encode(value: Any) -> bytes:
        encoded.append(value)
        return real(value)

    monkeypatch.setattr(request_body, "encode", encode)
    bodies = RequestBodies()
    messages = history(5)
    bodies.build(params(messages))
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "one more"}]})
    encoded.clear()
    bodies.build(params(messages))
    sent_messages = [value for value in encoded if isinstance(value, dict) and "role" in value]
    # the message that was last before (now unmarked) and the new last one, nothing older
    assert sent_messages == [messages[-2], with_cache_breakpoint(messages[-1:])[0]]


def test_a_merged_user_message_is_serialized_anew() -> None:
    from agentcli.core.content import append_user

    bodies = RequestBodies()
    messages = history(1)
    bodies.build(params(messages))
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    append_user(messages, [{"type": "text", "text": "first part"}])
    bodies.build(params(messages + [{"role": "assistant", "content": "x"}]))
    append_user(messages, [{"type": "text", "text": "second part"}])  # replaces the last user message
    sent = json.loads(bodies.build(params(messages)))["messages"]
    assert [b["text"] for b in sent[-1]["content"]] == ["first part", "second part"]


def test_a_history_changed_before_its_end_is_serialized_anew() -> None:
    bodies = RequestBodies()
    messages = history(3)
    bodies.build(params(messages))
    compacted: list[Message] = [
        {"role": "user", "content": "a summary"},
        *messages[4:],
    ]  # as a compaction or a rewind leaves it
    assert json.loads(bodies.build(params(compacted)))["messages"][:-1] == compacted[:-1]
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "the other one goes on"}]})
    assert json.loads(bodies.build(params(messages)))["messages"][:-1] == messages[:-1]


def test_conversations_no_longer_sent_are_let_go(monkeypatch: pytest.MonkeyPatch) -> None:
    bodies = RequestBodies()
    kept = history(3)
    for _ in range(3 * request_body.KEEP_CONVERSATIONS):
        bodies.build(params(kept))
        bodies.build(params(history(3)))  # a new history each time, as many short-lived subagents would make
    assert len(bodies) == request_body.KEEP_CONVERSATIONS * 6  # the latest conversations' messages before the last
    encoded: list[Any] = []
    real = request_body.encode

    def encode(value: Any) -> bytes:
        encoded.append(value)
        return real(value)

    monkeypatch.setattr(request_body, "encode", encode)
    bodies.build(params(kept))
    assert [value for value in encoded if isinstance(value, dict) and "role" in value] == [
        with_cache_breakpoint(kept[-1:])[0]
    ]  # the one still being sent is kept


def test_a_long_history_kept_compressed_goes_out_as_it_was() -> None:
    # the kept JSON is compressed a block at a time (core/model/packed.py): a history many blocks long, grown a
    # turn at a time, goes out byte for byte as serializing it whole would make it, and is held in less
    bodies = RequestBodies()
    messages = history(1)
    for i in range(300):
        output = "".join(f'{n:6}\tline {n} of file {i} ✓ "q"\n' for n in range(i % 40))
        messages.append(
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "r", "input": {}}]}
        )
        messages.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": output}]}
        )
        body = bodies.build(params(messages))
    whole = b",".join(request_body.encode(m) for m in messages[:-1])
    assert bodies.history(messages[:-1]) == whole and len(whole) > 8 * packed.BLOCK
    assert json.loads(body)["messages"][:-1] == messages[:-1]
    (sent,) = bodies._sent
    assert len(sent.json) == len(whole) and sent.json.held() < len(whole) / 3
