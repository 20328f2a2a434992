"""An MCP server's tool as an agentcli tool: ``mcp__<server>__<tool>``, and its results as blocks.

An MCP tool may do anything, so it is of kind ``exec``: it asks in the default modes unless an
allow rule names it (``mcp__docs__search``) or its server (``mcp__docs``), and plan mode refuses
it. Its arguments are checked against the server's own schema, like a built-in tool's.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ToolError
from ..events import ToolProgress
from ..tools.base import Tool, ToolContext, ToolOutcome
from .config import PREFIX as PREFIX
from .config import tool_name as tool_name
from .remote import RemoteTool
from .servers import McpServer

DESCRIPTION_CAP = 2_048  # characters of a server's tool description the model is shown
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
IMAGE_CAP = 5 * 1024 * 1024  # bytes the API takes in one image


class McpTool(Tool):
    kind = "exec"
    workspace_paths = False  # a 'path' argument means what the server says, not a workspace file

    def __init__(self, server: McpServer, remote: RemoteTool, name: str = "") -> None:
        self.server = server
        self.remote_name = remote.name
        self.name = name or tool_name(server.name, remote.name)  # type: ignore[misc]
        about = remote.description.strip() or f"The tool {remote.name} of the MCP server {server.name}."
        self.description = about[:DESCRIPTION_CAP]  # type: ignore[misc]
        schema = dict(remote.input_schema)
        schema.setdefault("type", "object")
        self.input_schema = schema  # type: ignore[misc]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            ctx.emit(
                ToolProgress(
                    id=ctx.tool_use_id,
                    progress=done,
                    total=total or 0.0,
                    message=message or "",
                    agent_id=ctx.agent_id,
                    parent_tool_use_id=ctx.parent_tool_use_id,
                )
            )

        result = await self.server.call(self.remote_name, args, progress)
        text, blocks = convert(getattr(result, "content", None) or [])
        structured = getattr(result, "structured_content", None)
        if not text and not blocks and structured is not None:
            text = json.dumps(structured, ensure_ascii=False, indent=1)
        if getattr(result, "is_error", False):
            raise ToolError(text or f"{self.name} failed without saying why.")
        return ToolOutcome(text, blocks=tuple(blocks))


def convert(content: list[Any]) -> tuple[str, list[dict[str, Any]]]:
    """An MCP result's content as (text for the model, image blocks to send after it)."""
    lines: list[str] = []
    images: list[dict[str, Any]] = []
    for item in content:
        kind = getattr(item, "type", "")
        if kind == "text":
            lines.append(item.text)
        elif kind == "image":
            lines.append(_image(item.data, item.mime_type, images))
        elif kind == "resource_link":
            about = f" ({item.mime_type})" if getattr(item, "mime_type", None) else ""
            described = f": {item.description}" if getattr(item, "description", None) else ""
            lines.append(f"[resource link: {item.name} <{item.uri}>{about}{described}]")
        elif kind == "resource":
            resource = item.resource
            text = getattr(resource, "text", None)
            mime = getattr(resource, "mime_type", None) or ""
            if text is not None:
                lines.append(f"[resource {resource.uri}]\n{text}")
            elif mime in IMAGE_TYPES:
                lines.append(_image(resource.blob, mime, images))
            else:
                lines.append(f"[resource {resource.uri}: {mime or 'binary'} content, not shown]")
        elif kind == "audio":
            lines.append(f"[audio ({getattr(item, 'mime_type', '')}) left out: the model cannot hear it]")
        else:
            lines.append(f"[{kind or 'unknown'} content left out]")
    return "\n".join(lines), images


def _image(data: str, mime: str, images: list[dict[str, Any]]) -> str:
    """Add an image block (when the API takes it); the line the text shows in its place."""
    size = len(data) * 3 // 4
    if mime not in IMAGE_TYPES:
        return f"[image ({mime}) left out: the model takes PNG, JPEG, GIF or WebP]"
    if size > IMAGE_CAP:
        return f"[image ({mime}, {size // 1024:,} KB) left out: larger than the API's 5 MB]"
    images.append({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}})
    return f"[image: {mime}, {max(size // 1024, 1):,} KB]"
