"""The body of a ``/v1/messages`` request as bytes, each history message serialized only once.

The SDK's ``messages.stream`` copies the whole history on every call and serializes it again; at a
few hundred turns that is most of the client's time between two model calls. Messages never change
once they are in the history (a merged user message is a new dict), so the JSON of a conversation's
messages is kept as one piece, with the message objects it was made of: the next call of the same
conversation finds them, by identity, at the start of its history and serializes only what followed.
One piece per conversation rather than one per message holds only the JSON (a kept bytes object, a
list and a dict entry per message had cost as much again; memory a long session holds per turn), and
that JSON is kept compressed but for its newest part (``packed.Packed``: a third of it for source files). The
last message carries the cache breakpoint (``with_cache_breakpoint``): it is serialized on each call
and never kept, since the same message goes out unmarked once another follows it.
"""

from __future__ import annotations

import copy
import json
import operator
from dataclasses import dataclass, field
from typing import Any

from ..content import Message
from .packed import Packed

# As the SDK encodes a body (anthropic._utils._json.openapi_dumps): compact, UTF-8, no NaN.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

KEEP_CONVERSATIONS = 8  # the main agent, its running children, a summarizer: the most recently sent are kept


def encode(value: Any) -> bytes:
    return _encode(value).encode()


@dataclass
class _Sent:
    """The JSON of ``messages`` (comma-separated), the history a conversation sent before its last message."""

    messages: list[Message]  # kept alive, so their ids cannot be reused
    json: Packed = field(default_factory=Packed)

    def extends_to(self, head: list[Message]) -> bool:
        kept = self.messages
        return len(kept) <= len(head) and all(map(operator.is_, kept, head))


class RequestBodies:
    """Builds request bodies for one model endpoint (shared by the main agent and its subagents)."""

    def __init__(self) -> None:
        self._sent: list[_Sent] = []  # the most recently sent first

    def history(self, head: list[Message]) -> bytes:
        """The JSON of ``head``, the messages before the last, reusing what an earlier call made of its start."""
        found = next((sent for sent in self._sent if sent.extends_to(head)), None)
        if found is None:
            found = _Sent([])
            self._sent = self._sent[: KEEP_CONVERSATIONS - 1]
        else:
            self._sent.remove(found)
        self._sent.insert(0, found)
        if len(head) > len(found.messages):
            parts = [encode(message) for message in head[len(found.messages) :]]
            found.json.extend(b",".join([b"", *parts] if found.messages else parts))
            found.messages = list(head)
        return bytes(found.json)

    def build(self, params: dict[str, Any]) -> bytes:
        """``params`` (the request's fields, ``messages`` as in the history, without the breakpoint) as JSON."""
        messages: list[Message] = params["messages"]
        parts = [self.history(messages[:-1])] if len(messages) > 1 else []
        if messages:
            parts.append(encode(with_cache_breakpoint(messages[-1:])[0]))
        fields = [b'"max_tokens":' + encode(params["max_tokens"]), b'"messages":[' + b",".join(parts) + b"]"]
        fields += [
            b'"' + name.encode() + b'":' + encode(value)
            for name, value in params.items()
            if name not in ("max_tokens", "messages")
        ]
        fields.append(b'"stream":true')
        return b"{" + b",".join(fields) + b"}"

    def __len__(self) -> int:
        """How many messages' JSON is kept."""
        return sum(len(sent.messages) for sent in self._sent)


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
