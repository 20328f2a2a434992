"""Content blocks: one lenient reader of text, and one way to append a user message."""

from __future__ import annotations

from agentcli.core.content import Message, append_user, as_blocks, has_tool_use, text_of


def test_text_comes_from_text_blocks_only_and_a_string_is_its_own_text():
    content = [
        {"type": "text", "text": "a"},
        {"type": "tool_use", "id": "t", "name": "x", "input": {}},
        "not a block",
        {"type": "text", "text": "b"},
    ]
    assert text_of(content) == "a\nb" and text_of(content, " ") == "a b" and text_of("plain") == "plain"
    assert text_of(None) == "" and as_blocks(None) == [] and as_blocks("hi") == [{"type": "text", "text": "hi"}]
    assert has_tool_use(content) and not has_tool_use("x")


def test_a_user_message_after_a_user_message_merges_into_it():
    messages: list[Message] = [{"role": "user", "content": "first"}]
    append_user(messages, [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}])
    assert messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "first"},
                {"type": "tool_result", "tool_use_id": "t", "content": "ok"},
            ],
        }
    ]
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "yes"}]})
    append_user(messages, [{"type": "text", "text": "next"}])
    assert len(messages) == 3 and messages[-1]["role"] == "user"
