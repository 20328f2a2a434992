"""A streamed reply put together: the API's events into one message's blocks, as the SDK's ``MessageStream`` does.

``llm.LLM`` feeds it the SDK's typed events; what it keeps is plain dicts, the form the history holds.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, cast

from ..events import Usage
from .catalogue import usage_with_cost

# The events the API itself sends; the SDK's stream adds derived ones ("text", "input_json").
RAW_EVENT_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)


def raw_event(event: Any) -> dict[str, Any]:
    """A stream event as the API sent it: without the snapshots the SDK's stream attaches."""
    if event.type in ("content_block_stop", "message_stop"):
        return {"type": event.type, **({"index": event.index} if event.type == "content_block_stop" else {})}
    return cast(dict[str, Any], event.model_dump(mode="json", exclude_none=True))


TOOL_INPUT_BLOCKS = ("tool_use", "server_tool_use")  # blocks whose input streams as JSON


class Accumulator:
    """One message put together from the API's stream events, as the SDK's ``MessageStream`` does.

    Text and thinking go to their callbacks as they arrive; each block that completes is kept in
    ``completed``, unless a tool call's input JSON did not parse (``torn``): it and what follows are dropped.
    """

    def __init__(self, on_text: Callable[[str], None], on_thinking: Callable[[str], None]) -> None:
        self.on_text, self.on_thinking = on_text, on_thinking
        self.message: Any = None  # message_start's Message, its content and usage filled in as events come
        self.completed: list[dict[str, Any]] = []
        self.tool_json: dict[int, str] = {}
        self.torn = False
        self.stopped = False

    def add(self, event: Any) -> None:
        kind = event.type
        message = self.message
        if kind == "message_start":
            self.message = event.message
            return
        if message is None and kind in RAW_EVENT_TYPES:
            raise RuntimeError(f'Unexpected event order, got {kind} before "message_start"')
        if kind in ("content_block_delta", "content_block_stop") and not 0 <= event.index < len(message.content):
            raise RuntimeError(f"Unexpected event order, got {kind} for a content block that never started")
        if kind == "content_block_start":
            message.content.append(event.content_block)
        elif kind == "content_block_delta":
            block, delta = message.content[event.index], event.delta
            if delta.type == "text_delta" and block.type == "text":
                block.text += delta.text
                self.on_text(delta.text)
            elif delta.type == "input_json_delta":
                self.tool_json[event.index] = self.tool_json.get(event.index, "") + delta.partial_json
            elif delta.type == "thinking_delta" and block.type == "thinking":
                block.thinking += delta.thinking
                self.on_thinking(delta.thinking)
            elif delta.type == "signature_delta" and block.type == "thinking":
                block.signature = delta.signature
            elif delta.type == "citations_delta" and block.type == "text":
                block.citations = [*(block.citations or []), delta.citation]
        elif kind == "content_block_stop":
            self.stop_block(event.index, message.content[event.index])
        elif kind == "message_delta":
            message.stop_reason = event.delta.stop_reason
            message.stop_sequence = event.delta.stop_sequence
            usage = message.usage
            usage.output_tokens = event.usage.output_tokens
            for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
                value = getattr(event.usage, name, None)  # cumulative totals; left out when unchanged
                if value is not None:
                    setattr(usage, name, value)
        elif kind == "message_stop":
            self.stopped = True

    def stop_block(self, index: int, block: Any) -> None:
        text = self.tool_json.get(index, "")
        if block.type in TOOL_INPUT_BLOCKS and text:
            from jiter import from_json

            try:  # as the SDK reads it: a cut-off object gives what it holds so far
                block.input = from_json(text.encode(), partial_mode=True)
            except ValueError as exc:
                raise ValueError(f"the input of a tool call is not JSON: {exc}") from None
        data = block_to_dict(block)
        if data is not None and data["type"] == "tool_use":
            self.torn = self.torn or not _parses(text)
        if data is not None and not self.torn:
            self.completed.append(data)


def _usage(model: str, message: Any) -> Usage:
    u = getattr(message, "usage", None)
    if u is None:
        return Usage()
    return usage_with_cost(
        model,
        u.input_tokens or 0,
        u.output_tokens or 0,
        getattr(u, "cache_read_input_tokens", 0) or 0,
        getattr(u, "cache_creation_input_tokens", 0) or 0,
    )


def block_to_dict(block: Any) -> dict[str, Any] | None:
    """An SDK content block as the plain dict we keep in history (None for blank text)."""
    if block.type == "text":  # the API refuses text blocks of only white space in history; citations go back as given
        cited = (
            {"citations": [c.model_dump(mode="json", exclude_none=True) for c in block.citations]}
            if getattr(block, "citations", None)
            else {}
        )
        return {"type": "text", "text": block.text, **cited} if block.text.strip() else None
    if block.type == "tool_use":  # an input that is no object is kept as it is: ToolRegistry.checked refuses it
        data = block.input
        if isinstance(block.input, dict) and type(block.input) is not dict:  # the early path's Node: plain dicts
            data = json.loads(json.dumps(block.input))
        # the name as one string however often it is called (sys.intern): a long session holds every call
        name = sys.intern(block.name) if type(block.name) is str else block.name
        return {"type": "tool_use", "id": block.id, "name": name, "input": data}
    return cast("dict[str, Any] | None", block.model_dump(exclude_none=True))


def _parses(text: str) -> bool:
    """Whether a tool call's streamed input is one whole JSON value (none at all counts as {}). One that is
    no object is the model's mistake, not the stream's: it is kept, and the call refused with a result."""
    if not text.strip():
        return True
    try:
        json.loads(text)
        return True
    except (ValueError, RecursionError):
        return False
