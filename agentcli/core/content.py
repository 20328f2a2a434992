"""Content blocks of API messages: the one place that reads text out of them and appends user messages.

A message's ``content`` is a string or a list of blocks (``{"type": "text", "text": ...}``,
``tool_use``, ``tool_result``, ...); stored records may hold anything, so every reader here is lenient.
"""

from __future__ import annotations

from typing import Any


def as_blocks(content: Any) -> list[dict[str, Any]]:
    """``content`` as a list of blocks: a string becomes one text block; what is no block is left out."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def text_of(content: Any, sep: str = "\n") -> str:
    """The text blocks of ``content`` joined by ``sep`` (a string is its own text); tool blocks are left out."""
    if isinstance(content, str):
        return content
    return sep.join(str(b.get("text", "")) for b in as_blocks(content) if b.get("type") == "text")


def thinking_of(content: Any) -> str:
    """The model's thinking in ``content`` (thinking blocks; a redacted one as a note)."""
    parts = [str(b.get("thinking", "")) if b.get("type") == "thinking" else "(redacted thinking)"
             for b in as_blocks(content) if b.get("type") in ("thinking", "redacted_thinking")]
    return "\n\n".join(parts)


def has_tool_use(content: Any) -> bool:
    return any(b.get("type") == "tool_use" for b in as_blocks(content))


def append_user(messages: list[dict[str, Any]], content: list[dict[str, Any]]) -> None:
    """Append a user message, merged into the previous one when that is a user message too (the API
    wants roles to alternate)."""
    if messages and messages[-1].get("role") == "user":
        messages[-1] = {"role": "user", "content": as_blocks(messages[-1].get("content")) + content}
    else:
        messages.append({"role": "user", "content": content})
