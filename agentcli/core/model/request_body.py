"""The body of a ``/v1/messages`` request as bytes, each history message serialized only once.

The SDK's ``messages.stream`` copies the whole history on every call and serializes it again; at a
few hundred turns that is most of the client's time between two model calls. Messages never change
once they are in the history (a merged user message is a new dict), so each one's JSON is kept,
keyed by the message object itself. The last message carries the cache breakpoint
(``with_cache_breakpoint``): it is serialized on each call and never kept, since the same message
goes out unmarked once another follows it.
"""

from __future__ import annotations

import copy
import json
from typing import Any, cast

from ..content import Message

# As the SDK encodes a body (anthropic._utils._json.openapi_dumps): compact, UTF-8, no NaN.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

SWEEP_EVERY = 32  # calls between two sweeps of the kept messages
KEEP_FOR = 64  # calls a message is kept after it was last sent (another agent may share the endpoint)


def encode(value: Any) -> bytes:
    return _encode(value).encode()


class RequestBodies:
    """Builds request bodies for one model endpoint (shared by the main agent and its subagents)."""

    def __init__(self) -> None:
        # id(message) → [the message (kept alive, so its id cannot be reused), its JSON, the call it was last sent]
        self._kept: dict[int, list[Any]] = {}
        self._calls = 0

    def message(self, message: Message) -> bytes:
        kept = self._kept.get(id(message))
        if kept is None or kept[0] is not message:
            kept = self._kept[id(message)] = [message, encode(message), self._calls]
        else:
            kept[2] = self._calls
        return cast(bytes, kept[1])

    def build(self, params: dict[str, Any]) -> bytes:
        """``params`` (the request's fields, ``messages`` as in the history, without the breakpoint) as JSON."""
        self._calls += 1
        messages: list[Message] = params["messages"]
        parts = [self.message(m) for m in messages[:-1]]
        if messages:
            parts.append(encode(with_cache_breakpoint(messages[-1:])[0]))
        fields = [b'"max_tokens":' + encode(params["max_tokens"]), b'"messages":[' + b",".join(parts) + b"]"]
        fields += [b'"' + name.encode() + b'":' + encode(value) for name, value in params.items()
                   if name not in ("max_tokens", "messages")]
        fields.append(b'"stream":true')
        if self._calls % SWEEP_EVERY == 0:
            self._sweep()
        return b"{" + b",".join(fields) + b"}"

    def _sweep(self) -> None:
        oldest = self._calls - KEEP_FOR
        self._kept = {key: kept for key, kept in self._kept.items() if kept[2] >= oldest}

    def __len__(self) -> int:
        return len(self._kept)


def with_cache_breakpoint_on_last(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = list(items)
    out[-1] = {**out[-1], "cache_control": {"type": "ephemeral"}}
    return out


def with_cache_breakpoint(messages: list[Message]) -> list[Message]:
    """A copy of ``messages`` whose latest block carries a cache breakpoint."""
    if not messages:
        return messages
    out = list(messages)
    last = copy.copy(out[-1])
    content = last["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    last["content"] = with_cache_breakpoint_on_last(content)
    out[-1] = last
    return out
