"""Content blocks of API messages: the one place that reads text out of them and appends user messages.

A message's ``content`` is a string or a list of blocks (``{"type": "text", "text": ...}``,
``tool_use``, ``tool_result``, ...); stored records may hold anything, so every reader here is lenient.
"""

from __future__ import annotations

import re
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


def typed(content: Any) -> str:
    """A prompt as the user typed it: a user message's first text block. What agentcli adds after it (the file
    or receipt an @-mention attaches, an image, a hook's note) is left out, so a prompt shown or offered back
    for editing is the user's words alone."""
    return next((str(b.get("text", "")) for b in as_blocks(content) if b.get("type") == "text"), "")


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


NOTE_TAG = "system-reminder"  # the tag Claude Code marks its own notes with, which models know
NOTE_OPEN, NOTE_CLOSE = f"<{NOTE_TAG}>\nFrom agentcli, not the user: ", f"\n</{NOTE_TAG}>"
_TAGS = re.compile(rf"<\s*(/?)\s*{NOTE_TAG}\b[^>]*>", re.IGNORECASE)


def agentcli_note(text: str) -> dict[str, Any]:
    """A text block for the history that says agentcli wrote it, not the user: background results,
    interrupt notes, engine notes and hook output all go in one. Tags inside ``text`` (a child may
    quote a hostile file) are defused, so nothing in it can close the block early."""
    body = _TAGS.sub(lambda m: f"[{m.group(1)}{NOTE_TAG}]", text)
    return {"type": "text", "text": f"{NOTE_OPEN}{body.strip()}{NOTE_CLOSE}"}


# A file an @-mention attached (engine/mentions.py): its note, then the file between <file> tags.
_ATTACHED = re.compile(r'The user attached (\S+) with @\S+( \([\d,]+ lines?)?[^\n]*\n<file path="[^"\n]*">\n.*?\n</file>',
                       re.S)


def readable(content: Any, sep: str = "\n", attachments: bool = True) -> str:
    """``text_of`` for a person to read: each agentcli note as its message alone, without its marks; without
    ``attachments``, a file an @-mention attached as its one-line note (the conversation shows what was sent,
    not the file again)."""
    def shown(text: str) -> str:
        marked = text.startswith(NOTE_OPEN) and text.endswith(NOTE_CLOSE)
        text = text[len(NOTE_OPEN):-len(NOTE_CLOSE)] if marked else text
        return text if attachments else _ATTACHED.sub(
            lambda m: f"📎 {m.group(1)}" + (f"{m.group(2)})" if m.group(2) else " (in part)"), text)

    if isinstance(content, str):
        return shown(content)
    return sep.join(shown(str(b.get("text", ""))) for b in as_blocks(content) if b.get("type") == "text")
