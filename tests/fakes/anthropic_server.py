"""A stand-in for the Anthropic Messages API, served over loopback.

The real ``anthropic`` SDK talks to it unmodified: streaming requests get real
server-sent events (chunked HTTP/1.1, the same event shapes the API sends),
other requests get a JSON ``Message``.  Requests are validated the way the real
API validates them, so a malformed conversation fails here as it would there.

Standard library only, so it works from sync tests, async tests and as a
subprocess::

    with FakeAnthropic() as server:
        server.script(text("hello"), tool_use("grep", {"pattern": "auth"}))
        client = AsyncAnthropic(base_url=server.base_url, api_key="test")
        ...
        assert server.requests[0]["messages"][0]["role"] == "user"

Command line (prints ``ANTHROPIC_BASE_URL=...`` on its first stdout line)::

    python -m tests.fakes.anthropic_server [--port N] [--scenario demo]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import re
import secrets
import socket
import socketserver
import string
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.fakes import web_search

__all__ = [
    "FakeAnthropic",
    "Reply",
    "ReplySource",
    "text",
    "tool_use",
    "reply",
    "error",
    "stream_error",
    "raw",
    "text_block",
    "tool_use_block",
    "new_tool_use_id",
    "validate_request",
    "tool_search_blocks",
    "validate_claude_code_request",
    "estimate_tokens",
    "sse_events",
    "blocks_of",
    "message_text",
    "first_user_text",
    "last_user_text",
    "tool_results",
    "tool_result_text",
    "tool_names",
    "offers_tool",
    "find_tool_use",
    "NO_REPLY_MESSAGE",
]

NO_REPLY_MESSAGE = "FakeAnthropic: no scripted reply left"

_ALNUM = string.ascii_letters + string.digits
_serial = itertools.count(1)


def _random_id(prefix: str) -> str:
    # Real ids look like ``toolu_01A09q90qw90lq917835lq9``; a serial number
    # keeps ours unique even across servers in one process.
    return f"{prefix}01{next(_serial):06d}{''.join(secrets.choice(_ALNUM) for _ in range(16))}"


def new_tool_use_id() -> str:
    """A fresh, unique id in the API's format (``toolu_01...``)."""
    return _random_id("toolu_")


# --------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted response to one ``POST /v1/messages``.

    A success carries content ``blocks`` (API-shaped dicts); an error carries
    ``status`` >= 400 plus ``error_type``/``error_message``.  Timing and failure
    options apply to both streaming and non-streaming requests where they make
    sense.
    """

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None  # None: "tool_use" if any tool_use block, else "end_turn"
    usage: dict[str, int] = field(default_factory=dict)  # overrides of the estimated usage
    model: str | None = None  # None: echo the request's model

    # HTTP error reply (status >= 400), or with ``error_after_events`` an SSE ``error`` event.
    status: int = 200
    error_type: str | None = None
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers

    # Timing and failure injection.
    delay: float = 0.0  # seconds to wait before responding at all
    chunk_delay: float = 0.0  # seconds between SSE events (for demos)
    gate: Any = None  # threading.Event or threading.Barrier to wait on before responding
    gate_timeout: float = 120.0
    gate_after_events: int | None = None  # wait on ``gate`` (an Event) after sending N events, not before responding
    cut_after_events: int | None = None  # send N events, then drop the connection
    stall_after_events: int | None = None  # send N events, then go silent ...
    stall_seconds: float = 0.0  # ... for this long, then carry on
    error_after_events: int | None = None  # send N events, then an SSE error event and stop
    truncate_json_at: int | None = None  # chars of the last tool_use's JSON to send
    torn_json: str | None = None  # sent as the last tool_use's input JSON instead of the real one
    end_after_events: int | None = None  # send N events, then end the stream cleanly (no message_stop)
    garbage_after_events: int | None = None  # send N events, then a `data:` line that is not JSON
    omit_stop_reason: bool = False  # message_delta carries stop_reason null
    plain_json: bool = False  # answer a streaming request with the whole Message as JSON (as LiteLLM does)
    raw_body: str | None = None  # send this body as it is (with ``status``), e.g. a proxy's HTML page
    raw_content_type: str = "text/html; charset=utf-8"
    ping: bool = True  # send a ping event after message_start, as the API does

    @property
    def is_error(self) -> bool:
        return self.status >= 400

    @property
    def tool_use_ids(self) -> list[str]:
        return [b["id"] for b in self.blocks if b.get("type") == "tool_use"]

    @property
    def has_tool_use(self) -> bool:
        return any(b.get("type") == "tool_use" for b in self.blocks)

    @property
    def final_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if self.has_tool_use else "end_turn"

    def with_options(self, **options: Any) -> Reply:
        """A copy with some fields changed, e.g. ``r.with_options(delay=0.1)``."""
        return dataclasses.replace(self, **options)


ReplySource = Reply | Callable[[dict[str, Any]], "Reply | None"]
"""What a queue holds: a Reply, or a function of the request body returning one."""


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


THINKING_SECRET = secrets.token_hex(8)  # signatures the stand-in gives its thinking blocks, as the API does


def thinking_signature(thinking: str) -> str:
    import hashlib

    return hashlib.sha256((THINKING_SECRET + thinking).encode()).hexdigest()


def thinking_block(thinking: str) -> dict[str, Any]:
    """A thinking block with a valid signature; altering its text breaks the signature."""
    return {"type": "thinking", "thinking": thinking, "signature": thinking_signature(thinking)}


def redacted_thinking_block(data: str = "ENCRYPTED") -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": data}


def tool_use_block(name: str, input: dict[str, Any] | None = None, id: str | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": id or new_tool_use_id(), "name": name, "input": dict(input or {})}


def reply(*blocks: dict[str, Any] | str, stop_reason: str | None = None, **options: Any) -> Reply:
    """A reply of several blocks; plain strings become text blocks."""
    content = [text_block(b) if isinstance(b, str) else b for b in blocks]
    return Reply(blocks=content, stop_reason=stop_reason, **options)


def text(content: str, *, stop_reason: str | None = None, **options: Any) -> Reply:
    """One text block; stop_reason ``end_turn`` unless given."""
    return reply(text_block(content), stop_reason=stop_reason, **options)


def tool_use(
    name: str,
    input: dict[str, Any] | None = None,
    id: str | None = None,
    *,
    stop_reason: str | None = None,
    **options: Any,
) -> Reply:
    """One tool_use block (fresh ``toolu_01...`` id unless given); stop_reason ``tool_use``."""
    return reply(tool_use_block(name, input, id), stop_reason=stop_reason, **options)


def error(status: int, err_type: str, message: str, headers: dict[str, str] | None = None, **options: Any) -> Reply:
    """An HTTP error in the API's shape, e.g. ``error(529, "overloaded_error", "Overloaded",
    headers={"retry-after": "0"})``."""
    return Reply(status=status, error_type=err_type, error_message=message, headers=dict(headers or {}), **options)


def stream_error(
    err_type: str = "overloaded_error", message: str = "Overloaded", after_events: int = 1, base: Reply | None = None
) -> Reply:
    """A stream that starts normally (``base``, default a text reply), then sends an SSE
    ``error`` event after ``after_events`` events and ends, as the API does when it is
    overloaded mid-response.  The SDK raises an ``APIStatusError`` while iterating."""
    base = base or text("This reply will be interrupted by an error.")
    return base.with_options(error_type=err_type, error_message=message, error_after_events=after_events)


def raw(body: str, content_type: str = "text/html; charset=utf-8", status: int = 200, **options: Any) -> Reply:
    """A response that is not the API's: ``body`` as it is, e.g. a proxy's HTML or JSON error page."""
    return Reply(raw_body=body, raw_content_type=content_type, status=status, **options)


# --------------------------------------------------------------------------
# Looking into request bodies (shared with scenarios and tests)
# --------------------------------------------------------------------------


def blocks_of(content: Any) -> list[dict[str, Any]]:
    """A message's content as a list of blocks (a string becomes one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def message_text(message: dict[str, Any]) -> str:
    """The text blocks of one message, joined by blank lines."""
    return "\n\n".join(b.get("text", "") for b in blocks_of(message.get("content")) if b.get("type") == "text")


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    msgs = body.get("messages")
    return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []


def first_user_text(body: dict[str, Any]) -> str:
    """The text of the first user message (a subagent's brief)."""
    for m in _messages(body):
        if m.get("role") == "user":
            return message_text(m)
    return ""


def last_user_text(body: dict[str, Any]) -> str:
    """The text blocks of the last message if it is a user message, else ''."""
    msgs = _messages(body)
    if msgs and msgs[-1].get("role") == "user":
        return message_text(msgs[-1])
    return ""


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the last message (if it is a user message)."""
    msgs = _messages(body)
    if not msgs or msgs[-1].get("role") != "user":
        return []
    return [b for b in blocks_of(msgs[-1].get("content")) if b.get("type") == "tool_result"]


def tool_result_text(block: dict[str, Any]) -> str:
    """The text inside one tool_result block."""
    content = block.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in blocks_of(content) if b.get("type") == "text")


def tool_names(body: dict[str, Any]) -> list[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


def offers_tool(body: dict[str, Any], name: str) -> bool:
    return name in tool_names(body)


def find_tool_use(body: dict[str, Any], tool_use_id: str) -> dict[str, Any] | None:
    """The assistant tool_use block with this id, anywhere in the conversation."""
    for m in _messages(body):
        if m.get("role") != "assistant":
            continue
        for b in blocks_of(m.get("content")):
            if b.get("type") == "tool_use" and b.get("id") == tool_use_id:
                return b
    return None


def estimate_tokens(body: dict[str, Any]) -> int:
    """Input tokens as the fake counts them: len(json of messages+system+tools) // 4."""
    payload = {k: body.get(k) for k in ("messages", "system", "tools") if body.get(k) is not None}
    return max(1, len(json.dumps(payload, ensure_ascii=False)) // 4)


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")  # as the API checks the ids of tool_use blocks in a history
_TOOL_CHOICE_TYPES = {"auto", "any", "tool", "none"}


def _count_cache_control(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if value.get("cache_control") is not None else 0
        return own + sum(_count_cache_control(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(_count_cache_control(v) for v in value)
    return 0


def _text_blocks_problem(blocks: list[Any], where: str, not_text: str) -> str | None:
    """What is wrong with a list that may hold text blocks only (``where``.N names a block), or None."""
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "text":
            return f"{where}.{i}: {not_text}"
        problem = _check_text_block(block, f"{where}.{i}")
        if problem:
            return problem
    return None


def _check_text_block(block: dict[str, Any], where: str) -> str | None:
    t = block.get("text")
    if not isinstance(t, str):
        return f"{where}.text: Field required"
    if t == "":
        return f"{where}: text content blocks must be non-empty"
    if not t.strip():
        return f"{where}: text content blocks must contain non-whitespace text"
    return None


IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _check_image_block(block: dict[str, Any], where: str) -> str | None:
    """An image block as the API takes it: base64 data of one of four types (or a URL)."""
    import base64
    import binascii

    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") not in ("base64", "url"):
        return f"{where}.image.source: Input tag does not match any of the expected tags: 'base64', 'url'"
    if source["type"] == "url":
        return None if isinstance(source.get("url"), str) else f"{where}.image.source.url: Field required"
    if source.get("media_type") not in IMAGE_MEDIA_TYPES:
        return f"{where}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
    try:
        base64.b64decode(source.get("data") or "", validate=True)
    except (binascii.Error, TypeError):
        return f"{where}.image.source.base64.data: The image data is not valid base64"
    if not source.get("data"):
        return f"{where}.image.source.base64.data: Field required"
    return None


def validate_request(body: Any) -> str | None:
    """Check a ``/v1/messages`` body as the real API would.

    Returns None when the request is acceptable, else the error message the
    fake sends back with a 400 ``invalid_request_error``.
    """
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    if not isinstance(body["model"], str) or not body["model"]:
        return "model: Input should be a non-empty string"
    max_tokens = body["max_tokens"]
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: Input should be an integer greater than or equal to 1"
    if "stream" in body and not isinstance(body["stream"], bool):
        return "stream: Input should be a valid boolean"

    # tools
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return "tools: Input should be a valid list"
        seen_names: set[str] = set()
        for i, tool in enumerate(tools):
            if not isinstance(tool, dict):
                return f"tools.{i}: Input should be a valid dictionary"
            if tool.get("type") not in (None, "custom"):
                continue  # server tools (web_search_..., etc.) have their own shapes
            name = tool.get("name")
            if not isinstance(name, str):
                return f"tools.{i}.custom.name: Field required"
            if not _TOOL_NAME.match(name):
                return f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            if name in seen_names:
                return "tools: Tool names must be unique."
            seen_names.add(name)
            schema = tool.get("input_schema")
            if not isinstance(schema, dict):
                return f"tools.{i}.custom.input_schema: Field required"
            if schema.get("type") != "object":
                return f"tools.{i}.custom.input_schema.type: Input should be 'object'"

    output_config = body.get("output_config")
    if output_config is not None:
        if not isinstance(output_config, dict):
            return "output_config: Input should be a valid dictionary"
        if "effort" in output_config and output_config["effort"] not in ("low", "medium", "high", "xhigh", "max"):
            return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    thinking = body.get("thinking")
    if thinking is not None:
        if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled", "adaptive"):
            return "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'"
        if thinking["type"] == "enabled":
            budget = thinking.get("budget_tokens")
            if isinstance(budget, bool) or not isinstance(budget, int):
                return "thinking.enabled.budget_tokens: Field required"
            if budget < 1024:
                return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            if budget >= max_tokens:
                return "`max_tokens` must be greater than `thinking.budget_tokens`"
        if thinking["type"] != "disabled" and (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
            return "Thinking may not be enabled when tool_choice forces tool use."

    tool_choice = body.get("tool_choice")
    if tool_choice is not None:
        if not isinstance(tool_choice, dict) or tool_choice.get("type") not in _TOOL_CHOICE_TYPES:
            return "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'"
        if tool_choice["type"] == "tool" and not isinstance(tool_choice.get("name"), str):
            return "tool_choice.tool.name: Field required"
        if tool_choice["type"] in ("any", "tool") and not tools:
            return f"tool_choice: tool_choice.type '{tool_choice['type']}' requires tools to be defined"

    # system
    system = body.get("system")
    if system is not None:
        if isinstance(system, list):
            problem = _text_blocks_problem(system, "system", "Input should be a text block")
            if problem:
                return problem
        elif not isinstance(system, str):
            return "system: Input should be a valid string or list of text blocks"

    # messages
    messages = body["messages"]
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not messages:
        return "messages: at least one message is required"
    seen_tool_use_ids: set[str] = set()
    uses_tools = False
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        role = msg.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if i == 0 and role != "user":
            return 'messages: first message must use the "user" role'
        if i > 0 and messages[i - 1].get("role") == role:
            return (
                'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
        is_last = i == len(messages) - 1
        content = msg.get("content")
        if isinstance(content, str):
            if not content and not (is_last and role == "assistant"):
                return (
                    f"messages.{i}: all messages must have non-empty content except for "
                    "the optional final assistant message"
                )
            if content and not content.strip() and not (is_last and role == "assistant"):
                return f"messages.{i}: text content blocks must contain non-whitespace text"
            continue
        if not isinstance(content, list):
            return f"messages.{i}.content: Input should be a valid string or list"
        if not content and not (is_last and role == "assistant"):
            return (
                f"messages.{i}: all messages must have non-empty content except for "
                "the optional final assistant message"
            )
        seen_other_than_result = False
        for j, block in enumerate(content):
            where = f"messages.{i}.content.{j}"
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                return f"{where}: Input should be a content block with a type"
            kind = block["type"]
            if kind == "text":
                problem = _check_text_block(block, where)
                if problem:
                    return problem
            elif kind == "image":
                problem = _check_image_block(block, where)
                if problem:
                    return problem
            elif kind in ("thinking", "redacted_thinking"):
                if role != "assistant":
                    return f"{where}: `{kind}` blocks can only be in `assistant` messages"
                if kind == "redacted_thinking" and not isinstance(block.get("data"), str):
                    return f"{where}.redacted_thinking.data: Field required"
                if kind == "thinking" and (
                    not isinstance(block.get("thinking"), str)
                    or block.get("signature") != thinking_signature(block["thinking"])
                ):
                    return f"{where}: Invalid `signature` in `thinking` block"
            elif kind == "tool_use":
                uses_tools = True
                if role != "assistant":
                    return f"{where}: `tool_use` blocks can only be in `assistant` messages"
                tid = block.get("id")
                if not isinstance(tid, str) or not tid:
                    return f"{where}.tool_use.id: Field required"
                if not _TOOL_USE_ID.match(tid):
                    return f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                if not isinstance(block.get("name"), str) or not block["name"]:
                    return f"{where}.tool_use.name: Field required"
                if not isinstance(block.get("input"), dict):
                    return f"{where}.tool_use.input: Input should be a valid dictionary"
                if tid in seen_tool_use_ids:
                    return f"{where}: `tool_use` ids must be unique"
                seen_tool_use_ids.add(tid)
            elif kind == "tool_result":
                uses_tools = True
                if role != "user":
                    return f"{where}: `tool_result` blocks can only be in `user` messages"
                if seen_other_than_result:
                    return (
                        f"{where}: `tool_result` blocks must come first in the `user` message content, "
                        "before any other content"
                    )
                if not isinstance(block.get("tool_use_id"), str):
                    return f"{where}.tool_result.tool_use_id: Field required"
                if "is_error" in block and not isinstance(block["is_error"], bool):
                    return f"{where}.tool_result.is_error: Input should be a valid boolean"
                inner = block.get("content")
                if inner is not None and not isinstance(inner, (str, list)):
                    return f"{where}.tool_result.content: Input should be a valid string or list"
                if isinstance(inner, list):
                    for k, sub in enumerate(inner):
                        if not isinstance(sub, dict) or not isinstance(sub.get("type"), str):
                            return f"{where}.content.{k}: Input should be a content block with a type"
                        if sub["type"] == "text":
                            problem = _check_text_block(sub, f"{where}.content.{k}")
                            if problem:
                                return problem
                        elif sub["type"] == "image":
                            problem = _check_image_block(sub, f"{where}.content.{k}")
                            if problem:
                                return problem
            if kind != "tool_result":
                seen_other_than_result = True

        # pairing: every tool_use answered in the next message; every tool_result answers the previous one
        if role == "assistant":
            ids = [b["id"] for b in content if b.get("type") == "tool_use"]
            if ids:
                answered: set[str | None] = set()  # a tool_result without an id answers nothing
                if not is_last:
                    nxt = messages[i + 1]
                    if isinstance(nxt, dict):
                        answered = {
                            b.get("tool_use_id")
                            for b in blocks_of(nxt.get("content"))
                            if b.get("type") == "tool_result"
                        }
                missing = [t for t in ids if t not in answered]
                if missing:
                    return (
                        f"messages.{i + 1 if not is_last else i}: `tool_use` ids were found without "
                        f"`tool_result` blocks immediately after: {', '.join(missing)}. Each `tool_use` "
                        "block must have a corresponding `tool_result` block in the next message."
                    )
        else:
            result_ids = [(j, b["tool_use_id"]) for j, b in enumerate(content) if b.get("type") == "tool_result"]
            if result_ids:
                prev = messages[i - 1] if i > 0 else {}
                offered = {b.get("id") for b in blocks_of(prev.get("content")) if b.get("type") == "tool_use"}
                for j, tid in result_ids:
                    if tid not in offered:
                        return (
                            f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                            f"blocks: {tid}. Each `tool_result` block must have a corresponding "
                            "`tool_use` block in the previous message."
                        )
                if len({tid for _, tid in result_ids}) != len(result_ids):
                    return f"messages.{i}: each `tool_use_id` may have only one `tool_result`"

    if uses_tools and not tools:
        return "Requests which include `tool_use` or `tool_result` blocks must define tools."

    breakpoints = sum(_count_cache_control(body.get(k)) for k in ("tools", "system", "messages"))
    if breakpoints > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
    return _tool_search_problem(tools or [], messages)


TOOL_SEARCH_TYPES = ("tool_search_tool_regex_20251119", "tool_search_tool_bm25_20251119")


def _tool_search_problem(tools: list[dict[str, Any]], messages: list[Any]) -> str | None:
    """The API's tool search (docs: "Tool search tool"): a deferred tool (``defer_loading: true``) needs a tool
    search tool beside it and at least one tool that is not deferred; its results (``server_tool_use`` and
    ``tool_search_tool_result`` blocks, which name tools by ``tool_reference``) stand in assistant messages and
    refer only to deferred tools of the request."""
    deferred = {t.get("name") for t in tools if t.get("defer_loading") is True}
    searches = [t for t in tools if t.get("type") in TOOL_SEARCH_TYPES]
    if deferred and not searches:
        return "Tools with defer_loading require a tool search tool (tool_search_tool_regex or tool_search_tool_bm25)."
    if tools and all(t.get("defer_loading") is True for t in tools):
        return "At least one tool must not have defer_loading set."
    for i, message in enumerate(messages):
        for j, block in enumerate(blocks_of(message.get("content")) if isinstance(message, dict) else []):
            kind = block.get("type")
            if kind in ("server_tool_use", "tool_search_tool_result") and message.get("role") != "assistant":
                return f"messages.{i}.content.{j}: `{kind}` blocks can only be in `assistant` messages"
            if kind != "tool_search_tool_result":
                continue
            found = (block.get("content") or {}).get("tool_references") or []
            for ref in found:
                if ref.get("tool_name") not in deferred:
                    return (
                        f"messages.{i}.content.{j}: Tool reference '{ref.get('tool_name')}' not found in "
                        "available tools"
                    )
    return None


def refuses_tool_search(body: dict[str, Any]) -> str | None:
    """What an endpoint without the API's tool search (a proxy to another model, vLLM) says to a request with it."""
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and tool.get("type") in TOOL_SEARCH_TYPES:
            return (
                f"tools.{i}: Input tag '{tool['type']}' found using 'type' does not match any of the "
                "expected tags: 'custom', 'bash_20250124', 'text_editor_20250124', 'web_search_20250305'"
            )
        if isinstance(tool, dict) and "defer_loading" in tool:
            return f"tools.{i}.custom.defer_loading: Extra inputs are not permitted"
    return None


def tool_search_blocks(query: str, names: list[str], id: str | None = None) -> list[dict[str, Any]]:
    """What the API's regex tool search puts in a reply: its call, and the tools it found, by reference."""
    call_id = id or _random_id("srvtoolu_")
    return [
        {"type": "server_tool_use", "id": call_id, "name": "tool_search_tool_regex", "input": {"query": query}},
        {
            "type": "tool_search_tool_result",
            "tool_use_id": call_id,
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": name} for name in names],
            },
        },
    ]


CLAUDE_CODE_TOOL_SEARCH = "ToolSearch"  # Claude Code's client-side tool search (a custom tool)


def validate_claude_code_request(body: Any) -> str | None:
    """Check a body in Claude Code's dialect: the API's, except that its CLI also sends messages with the
    role ``system`` (the environment, after the user's first message), which must hold text only, and defers tools
    beside its own client-side ``ToolSearch`` instead of the API's search tool (the API's custom tool search). The rest
    is checked as ``validate_request`` checks a request without them (its message numbers count without
    them too)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return validate_request(body)
    others = []
    for i, message in enumerate(body["messages"]):
        if not isinstance(message, dict) or message.get("role") != "system":
            others.append(message)
            continue
        if i == 0:
            return 'messages: first message must use the "user" role'
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or not blocks:
            return f"messages.{i}: a system message must have non-empty text content"
        problem = _text_blocks_problem(blocks, f"messages.{i}.content", "a system message holds text blocks only")
        if problem:
            return problem
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and t.get("name") == CLAUDE_CODE_TOOL_SEARCH for t in tools):
        # Claude Code searches its deferred tools itself, with a tool of its own whose results name them by
        # tool_reference (the API's custom tool search), so its deferred tools need no server search tool
        tools = [{k: v for k, v in t.items() if k != "defer_loading"} if isinstance(t, dict) else t for t in tools]
    problem = validate_request({**body, "messages": others, **({"tools": tools} if tools is not None else {})})
    breakpoints = sum(_count_cache_control(body.get(k)) for k in ("tools", "system", "messages"))
    if problem is None and breakpoints > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
    return problem


# --------------------------------------------------------------------------
# Rendering a reply
# --------------------------------------------------------------------------


def _usage_for(reply: Reply, body: dict[str, Any]) -> dict[str, int]:
    out_chars = 0
    for b in reply.blocks:
        if b.get("type") == "text":
            out_chars += len(b.get("text", ""))
        elif b.get("type") == "tool_use":
            out_chars += len(b.get("name", "")) + len(json.dumps(b.get("input", {})))
    usage = {
        "input_tokens": estimate_tokens(body),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": max(1, out_chars // 4),
    }
    usage.update(reply.usage)
    return usage


def _split_text(s: str, words_per_chunk: int = 3) -> list[str]:
    pieces = re.findall(r"\s*\S+\s*|\s+", s)
    if not pieces:
        return [s] if s else []
    return ["".join(pieces[i : i + words_per_chunk]) for i in range(0, len(pieces), words_per_chunk)]


def _split_json(s: str) -> list[str]:
    if not s:
        return []
    size = max(1, min(64, math.ceil(len(s) / 3)))
    return [s[i : i + size] for i in range(0, len(s), size)]


def _tool_json(reply: Reply, index: int) -> str:
    block = reply.blocks[index]
    full = json.dumps(block.get("input", {}), ensure_ascii=False)
    tool_indexes = [i for i, b in enumerate(reply.blocks) if b.get("type") == "tool_use"]
    is_last_tool = bool(tool_indexes) and index == tool_indexes[-1]
    if is_last_tool and reply.torn_json is not None:
        return reply.torn_json
    if is_last_tool and reply.truncate_json_at is not None:
        return full[: reply.truncate_json_at]
    if is_last_tool and reply.final_stop_reason == "max_tokens" and index == len(reply.blocks) - 1:
        return full[: max(1, len(full) // 2)]
    return full


def _message_shell(reply: Reply, body: dict[str, Any], message_id: str) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model or body.get("model") or "claude-fake",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {},
    }


def sse_events(reply: Reply, body: dict[str, Any], message_id: str = "msg_01fake") -> list[tuple[str, dict[str, Any]]]:
    """The (event name, data) pairs a streamed ``reply`` is sent as, in order.

    ``message_start``, ``ping`` (if ``reply.ping``), then for each block
    ``content_block_start``, its deltas and ``content_block_stop``, then
    ``message_delta`` and ``message_stop``.  Use it to pick ``cut_after_events``
    and friends.
    """
    usage = _usage_for(reply, body)
    message = _message_shell(reply, body, message_id)
    message["usage"] = {
        "input_tokens": usage["input_tokens"],
        "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
        "cache_read_input_tokens": usage["cache_read_input_tokens"],
        "output_tokens": 1,
        "service_tier": "standard",
    }
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
    if reply.ping:
        events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(reply.blocks):
        kind = block.get("type")
        if kind == "text":
            start, deltas = web_search.stream_parts(block) or ({"type": "text", "text": ""}, [])
            deltas += [{"type": "text_delta", "text": piece} for piece in _split_text(block.get("text", ""))]
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [{"type": "input_json_delta", "partial_json": p} for p in _split_json(_tool_json(reply, index))]
        elif kind == "server_tool_use":  # a server tool's input streams as a client tool's does
            start = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _split_json(json.dumps(block["input"]))]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": piece} for piece in _split_text(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:  # anything else (redacted thinking, ...) is sent whole
            start, deltas = dict(block), []
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        for delta in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": None if reply.omit_stop_reason else reply.final_stop_reason,
                    "stop_sequence": None,
                },
                "usage": {
                    "input_tokens": usage["input_tokens"],
                    "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                    "cache_read_input_tokens": usage["cache_read_input_tokens"],
                    "output_tokens": usage["output_tokens"],
                },
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _final_message(reply: Reply, body: dict[str, Any], message_id: str) -> dict[str, Any]:
    message = _message_shell(reply, body, message_id)
    content = []
    for index, block in enumerate(reply.blocks):
        block = dict(block)
        if block.get("type") == "tool_use":
            sent = _tool_json(reply, index)
            try:
                block["input"] = json.loads(sent)
            except ValueError:
                block["input"] = {}  # truncated mid-way
        content.append(block)
    message["content"] = content
    message["stop_reason"] = None if reply.omit_stop_reason else reply.final_stop_reason
    usage = _usage_for(reply, body)
    message["usage"] = {**usage, "service_tier": "standard"}
    return message


def _error_body(err_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": err_type, "message": message}}


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


class _Route:
    def __init__(self, predicate: Callable[[dict[str, Any]], bool], replies: Iterable[ReplySource]):
        self.predicate = predicate
        self.queue: deque[ReplySource] = deque(replies)


class _HTTPServer(ThreadingHTTPServer):
    # socketserver's listen backlog of 5 is small enough for Linux to give up early on a half-open connection
    # whose handshake a starved CPU delays (reqsk_timer_handler drops it once the queue is half full, and the
    # client's late ACK then meets a reset); a test's parallel children open several at once.
    request_queue_size = 128
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    fake: FakeAnthropic

    def server_bind(self) -> None:
        # Skip HTTPServer.server_bind's getfqdn(), which can stall on a DNS lookup.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeAnthropic/1.0"
    timeout = 120  # idle keep-alive connections are closed after this
    server: _HTTPServer
    # Called just before the last bytes of a response go out, so a test that has
    # read a whole response always finds it in the server's timeline.
    before_final_write: Callable[[], None] = staticmethod(lambda: None)

    def setup(self) -> None:
        super().setup()
        # Small SSE writes would otherwise wait on the client's delayed ACKs (~40 ms a request).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.fake.verbose:
            sys.stderr.write("fake-anthropic: " + (format % args) + "\n")

    def do_GET(self) -> None:  # noqa: N802
        self.send_json(404, _error_body("not_found_error", f"Not found: {self.path}"))

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path.rstrip("/")
        fake = self.server.fake
        try:
            if path == "/v1/messages":
                fake._handle_messages(self, raw)
            elif path == "/v1/messages/count_tokens":
                fake._handle_count_tokens(self, raw)
            else:
                self.send_json(404, _error_body("not_found_error", f"Not found: {self.path}"))
        except (TimeoutError, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True

    # -- writing helpers --

    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", _random_id("req_"))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.before_final_write()
        self.wfile.write(data)

    def send_raw(self, status: int, body: str, content_type: str, headers: dict[str, str] | None = None) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.before_final_write()
        self.wfile.write(data)

    def start_sse(self, headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", _random_id("req_"))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def send_event(self, name: str, data: dict[str, Any]) -> None:
        self.send_chunk(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())

    def send_chunk(self, payload: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def end_sse(self) -> None:
        self.before_final_write()
        self.wfile.write(b"0\r\n\r\n")

    def drop_connection(self) -> None:
        """Close the socket mid-response, as a dying upstream would."""
        self.close_connection = True
        self.before_final_write()
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class FakeAnthropic:
    """A stand-in Anthropic Messages API on 127.0.0.1 (random port by default).

    Replies are chosen per request, first match wins:
      1. routes added with ``when(predicate, ...)``, in the order added, skipping empty ones;
      2. the default FIFO queue filled by ``script(...)``;
      3. ``responder(body)``, if set (may return None to decline);
      4. otherwise a 500 ``api_error`` whose message is ``NO_REPLY_MESSAGE``.
    Queues hold Replies or functions ``body -> Reply``.
    """

    def __init__(
        self,
        port: int = 0,
        host: str = "127.0.0.1",
        *,
        responder: Callable[[dict[str, Any]], Reply | None] | None = None,
        require_api_key: str | None = None,  # if set: 401 unless x-api-key or Bearer token matches
        validate: bool = True,
        verbose: bool = False,
        dialect: str = "api",  # or "claude-code": requests as Claude Code's CLI sends them
        tool_search: bool = True,  # False: refuse the API's tool search, as endpoints without it do (400)
        web_search: bool = True,  # False: refuse the API's web search tool, likewise
    ) -> None:
        self.tool_search = tool_search
        self.web_search = web_search
        self.host = host
        self.port = port
        self.responder = responder
        self.require_api_key = require_api_key
        self.validate = validate
        if dialect not in ("api", "claude-code"):
            raise ValueError(f"unknown dialect {dialect!r}: use 'api' or 'claude-code'")
        self.dialect = dialect
        self.verbose = verbose
        self._lock = threading.Condition()
        self._default: deque[ReplySource] = deque()
        self._routes: list[_Route] = []
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._wire: list[tuple[str, bytes]] = []
        self._rejections: list[tuple[dict[str, Any], str]] = []
        self._thinking_by_tool_use: dict[str, list[dict[str, Any]]] = {}  # what a tool-use reply thought first
        self._timeline: list[tuple[int, float, float]] = []
        self._count_tokens_requests: list[dict[str, Any]] = []
        self.offers_count_tokens = True  # False: the route answers 404, as Ollama's does
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --

    def start(self) -> FakeAnthropic:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer((self.host, self.port), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=f"FakeAnthropic:{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping in delay/stall
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- scripting --

    def script(self, *replies: ReplySource) -> FakeAnthropic:
        """Append replies to the default FIFO queue."""
        with self._lock:
            self._default.extend(replies)
        return self

    def when(self, predicate: Callable[[dict[str, Any]], bool], *replies: ReplySource) -> FakeAnthropic:
        """Add a routed queue, consulted before the default one while it has replies left."""
        with self._lock:
            self._routes.append(_Route(predicate, replies))
        return self

    def pending(self) -> int:
        """How many scripted replies (default queue plus routes) are still unused."""
        with self._lock:
            return len(self._default) + sum(len(r.queue) for r in self._routes)

    def reset(self) -> None:
        """Forget queues, routes and records (the responder stays)."""
        with self._lock:
            self._default.clear()
            self._routes.clear()
            self._requests.clear()
            self._headers.clear()
            self._wire.clear()
            self._rejections.clear()
            self._timeline.clear()
            self._count_tokens_requests.clear()

    # -- records (snapshots, safe to read from any thread) --

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every /v1/messages body, in arrival order (including rejected ones)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """Headers (lower-case names) parallel to ``requests``.  Note: anthropic 2.x sends
        the key as ``authorization: Bearer KEY``, older SDKs as ``x-api-key``."""
        with self._lock:
            return list(self._headers)

    @property
    def request_wire(self) -> list[tuple[str, bytes]]:
        """(path with query, body bytes) as they came over the wire, parallel to ``requests``."""
        with self._lock:
            return list(self._wire)

    @property
    def rejections(self) -> list[tuple[dict[str, Any], str]]:
        """(body, message) for every request the fake refused: validation failures,
        no scripted reply left, or a scripted reply that contradicts the request."""
        with self._lock:
            return list(self._rejections)

    @property
    def timeline(self) -> list[tuple[int, float, float]]:
        """(request_index, start, end) in time.monotonic() seconds, appended as each response
        is about to finish (before its last bytes are sent, so a client that has read a
        whole response always finds it here)."""
        with self._lock:
            return list(self._timeline)

    @property
    def count_tokens_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._count_tokens_requests)

    def wait_for_requests(self, n: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until at least ``n`` message requests have arrived; returns them."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._requests) >= n, timeout=timeout):
                raise TimeoutError(f"FakeAnthropic: waited for {n} requests, got {len(self._requests)}")
            return list(self._requests)

    def assert_no_rejections(self) -> None:
        rejections = self.rejections
        if rejections:
            raise AssertionError("FakeAnthropic rejected requests:\n" + "\n".join(m for _, m in rejections))

    def overlapped(self, *indexes: int) -> bool:
        """True when the given requests (all, if none given) were in flight together:
        every one started before every other one ended."""
        spans = {i: (s, e) for i, s, e in self.timeline}
        chosen = [spans[i] for i in (indexes or spans)]
        return all(a[0] < b[1] for a in chosen for b in chosen)

    # -- request handling (runs on handler threads) --

    def _next_reply(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            source: ReplySource | None = None
            for route in self._routes:
                if route.queue and route.predicate(body):
                    source = route.queue.popleft()
                    break
            if source is None and self._default:
                source = self._default.popleft()
            responder = self.responder
        if source is None:
            return responder(body) if responder is not None else None
        return source if isinstance(source, Reply) else source(body)

    def _thinking_dropped(self, body: dict[str, Any]) -> str | None:
        """With thinking on, the assistant message of the tool-use loop under way must start with the
        thinking blocks this server sent before its tool calls, unaltered, as the API requires."""
        if (body.get("thinking") or {}).get("type") in (None, "disabled"):
            return None
        messages = _messages(body)
        for i in range(len(messages) - 1, -1, -1):
            message = messages[i]
            if message.get("role") != "assistant":
                continue
            content = blocks_of(message.get("content"))
            ids = [b.get("id") for b in content if b.get("type") == "tool_use"]
            with self._lock:
                sent = next((self._thinking_by_tool_use[t] for t in ids if t in self._thinking_by_tool_use), None)
            if sent is not None and content[: len(sent)] != sent:
                return (
                    f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                    f"`{content[0].get('type') if content else 'nothing'}`. When `thinking` is enabled, a "
                    "final `assistant` message must start with a thinking block."
                )
            return None  # only the latest assistant message is checked
        return None

    def _reject(self, handler: _Handler, body: dict[str, Any], status: int, err_type: str, message: str) -> None:
        with self._lock:
            self._rejections.append((body, message))
        if self.verbose:
            sys.stderr.write(f"fake-anthropic: {status} {message}\n")
        # Tell the SDK not to retry: these are test bugs or engine bugs, not weather.
        handler.send_json(status, _error_body(err_type, message), {"x-should-retry": "false"})

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _handle_count_tokens(self, handler: _Handler, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            handler.send_json(400, _error_body("invalid_request_error", "request body is not valid JSON"))
            return
        with self._lock:
            self._count_tokens_requests.append(body)
        if not self.offers_count_tokens:
            handler.send_json(404, _error_body("not_found_error", f"Not found: {handler.path}"))
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            handler.send_json(400, _error_body("invalid_request_error", "messages: Field required"))
            return
        handler.send_json(200, {"input_tokens": estimate_tokens(body)})

    def _handle_messages(self, handler: _Handler, raw: bytes) -> None:
        start = time.monotonic()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparseable": raw.decode("utf-8", "replace")}
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            index = len(self._requests)
            self._requests.append(body)
            self._headers.append(headers)
            self._wire.append((handler.path, raw))
            self._lock.notify_all()
        done = False

        def mark_done() -> None:
            nonlocal done
            if not done:
                done = True
                with self._lock:
                    self._timeline.append((index, start, time.monotonic()))

        handler.before_final_write = mark_done
        try:
            self._respond(handler, body, headers)
        finally:
            mark_done()
            handler.before_final_write = _Handler.before_final_write

    def _respond(self, handler: _Handler, body: Any, headers: dict[str, str]) -> None:
        if "_unparseable" in body:
            self._reject(handler, body, 400, "invalid_request_error", "request body is not valid JSON")
            return
        if self.require_api_key is not None and self.require_api_key not in (
            headers.get("x-api-key"),
            headers.get("authorization", "").removeprefix("Bearer "),
        ):
            self._reject(handler, body, 401, "authentication_error", "invalid x-api-key")
            return
        if self.validate:
            check = validate_claude_code_request if self.dialect == "claude-code" else validate_request
            problem = (
                check(body)
                or self._thinking_dropped(body)
                or (None if self.tool_search else refuses_tool_search(body))
                or web_search.history_problem(body)
                or (None if self.web_search else web_search.refuses(body))
            )
            if problem:
                self._reject(handler, body, 400, "invalid_request_error", problem)
                return
        try:
            chosen = self._next_reply(body)
        except Exception:  # a predicate or responder blew up: say so in the response
            self._reject(
                handler, body, 500, "api_error", "FakeAnthropic: reply selection failed:\n" + traceback.format_exc()
            )
            return
        if chosen is None:
            self._reject(handler, body, 500, "api_error", NO_REPLY_MESSAGE)
            return
        if any(b.get("type") == "server_tool_use" and b.get("name") == "web_search" for b in chosen.blocks):
            if not web_search.offered(body):
                self._reject(
                    handler,
                    body,
                    500,
                    "api_error",
                    "FakeAnthropic: test bug: scripted a web search for a "
                    "request that does not offer the web_search tool",
                )
                return
            chosen = chosen.with_options(blocks=web_search.answer_searches(chosen.blocks))  # the API runs it
        thought = [b for b in chosen.blocks if b.get("type") in ("thinking", "redacted_thinking")]
        if thought and chosen.has_tool_use:
            with self._lock:
                for tool_use_id in chosen.tool_use_ids:
                    self._thinking_by_tool_use[tool_use_id] = thought
        if chosen.has_tool_use and not chosen.is_error:
            tool_choice = body.get("tool_choice") or {}
            if tool_choice.get("type") == "none" or not body.get("tools"):
                self._reject(
                    handler,
                    body,
                    500,
                    "api_error",
                    "FakeAnthropic: test bug: scripted a tool_use reply for a request that offers no "
                    "tools or sets tool_choice none; the model must answer in text",
                )
                return

        self._wait(chosen.delay)
        if chosen.gate is not None and chosen.gate_after_events is None:
            try:
                if hasattr(chosen.gate, "parties"):  # threading.Barrier
                    chosen.gate.wait(timeout=chosen.gate_timeout)
                elif not chosen.gate.wait(timeout=chosen.gate_timeout):
                    raise threading.BrokenBarrierError
            except threading.BrokenBarrierError:
                self._reject(
                    handler,
                    body,
                    500,
                    "api_error",
                    "FakeAnthropic: gate not released in time (were the requests not concurrent?)",
                )
                return
        if self._stopping.is_set():
            handler.drop_connection()
            return

        if chosen.raw_body is not None:
            handler.send_raw(chosen.status, chosen.raw_body, chosen.raw_content_type, chosen.headers)
            return
        if chosen.is_error:
            handler.send_json(
                chosen.status, _error_body(chosen.error_type or "api_error", chosen.error_message), chosen.headers
            )
            return

        message_id = _random_id("msg_")
        if not body.get("stream") or chosen.plain_json:
            if chosen.cut_after_events is not None:
                handler.drop_connection()
                return
            handler.send_json(200, _final_message(chosen, body, message_id), chosen.headers)
            return

        events = sse_events(chosen, body, message_id)
        handler.start_sse(chosen.headers)
        for n, (name, data) in enumerate(events):
            if chosen.cut_after_events is not None and n >= chosen.cut_after_events:
                handler.drop_connection()
                return
            if chosen.error_after_events is not None and n >= chosen.error_after_events:
                handler.send_event("error", _error_body(chosen.error_type or "api_error", chosen.error_message))
                break
            if chosen.end_after_events is not None and n >= chosen.end_after_events:
                break
            if chosen.garbage_after_events is not None and n >= chosen.garbage_after_events:
                handler.send_chunk(b"event: content_block_delta\ndata: <html>Bad Gateway</html>\n\n")
                break
            if chosen.stall_after_events is not None and n == chosen.stall_after_events:
                self._wait(chosen.stall_seconds)
            if chosen.gate_after_events is not None and n == chosen.gate_after_events:
                if not chosen.gate.wait(timeout=chosen.gate_timeout) or self._stopping.is_set():
                    handler.drop_connection()
                    return
            if n and chosen.chunk_delay:
                self._wait(chosen.chunk_delay)
            handler.send_event(name, data)
        handler.end_sse()


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.anthropic_server",
        description="Serve a stand-in Anthropic Messages API on loopback.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a random free port)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--scenario",
        choices=["demo", "none"],
        default="demo",
        help="demo: a reactive coding-agent responder (default); none: every request fails",
    )
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed events")
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = parser.parse_args(argv)

    responder = None
    if args.scenario == "demo":
        from tests.fakes.scenarios import demo_responder

        def responder(body: dict[str, Any]) -> Reply:
            return demo_responder(body).with_options(delay=args.delay, chunk_delay=args.chunk_delay)

    server = FakeAnthropic(args.port, args.host, responder=responder, verbose=args.verbose)
    server.start()
    print(f"ANTHROPIC_BASE_URL={server.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    # Run the package copy of this module, so scenarios and the server share one set of classes.
    from tests.fakes.anthropic_server import main as _main

    sys.exit(_main())
