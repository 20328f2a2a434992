"""What an ACP client's requests carry, read into agentcli's terms: the workspace folder (``cwd``), the client's
MCP servers as ``--mcp-config`` JSON, a prompt's text, resources and images; and the checks a request fails with
one clear sentence (an ACP error) instead of a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import RequestError
from acp import schema as s

from ...core.content import typed
from ...core.door import MissingCredentials, images, resolve_credentials
from ...core.events import Event, UserMessage


def first_prompt(events: list[Event]) -> str:
    """A loaded session's first prompt, which names it (as session/list does)."""
    return next((typed(e.content) for e in events if isinstance(e, UserMessage) and e.origin == "user"), "")


def check_credentials() -> None:
    try:
        resolve_credentials()
    except MissingCredentials as exc:
        raise RequestError(-32000, str(exc)) from None


def workspace_root(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError(-32602, f"cwd must be an absolute path, not {cwd!r}.")
    if not path.is_dir():
        raise RequestError(-32602, f"cwd {cwd} is not a folder.")
    return path.resolve()


def mcp_config(servers: list[Any] | None) -> list[str]:
    """The client's MCP servers in Claude Code's format, the one --mcp-config takes (so they start the same
    way: in the sandbox, with the same timeouts)."""
    config: dict[str, Any] = {}
    for server in servers or []:
        if isinstance(server, s.McpServerStdio):
            config[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": {v.name: v.value for v in server.env},
            }
        elif isinstance(server, (s.HttpMcpServer, s.McpServerHttp, s.SseMcpServer, s.McpServerSse)):
            sse = isinstance(server, (s.SseMcpServer, s.McpServerSse))
            config[server.name] = {
                "type": "sse" if sse else "http",
                "url": server.url,
                "headers": {h.name: h.value for h in server.headers},
            }
        else:
            raise RequestError(
                -32602, f"agentcli starts MCP servers over stdio, HTTP or SSE, not {type(server).__name__}."
            )
    return [json.dumps({"mcpServers": config})] if config else []


def prompt_content(blocks: list[Any]) -> tuple[str, list[dict[str, Any]]]:
    """The user's message: its text, and the text of resources the client embedded (a file's content),
    a link to a resource named by its URI; and its images, checked as an image file is (each with its marker)."""
    parts: list[str] = []
    pictures: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, s.TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, s.ImageContentBlock):
            source = {"type": "base64", "media_type": block.mime_type, "data": block.data}
            try:
                pictures += images.from_block({"source": source}, f"image {len(pictures) // 2 + 1} of the prompt")
            except images.ImageError as exc:
                raise RequestError(-32602, str(exc)) from None
        elif isinstance(block, s.EmbeddedResourceContentBlock) and hasattr(block.resource, "text"):
            parts.append(f'<context uri="{block.resource.uri}">\n{block.resource.text}\n</context>')
        elif isinstance(block, s.ResourceContentBlock):
            parts.append(block.uri)
        else:
            raise RequestError(
                -32602,
                f"agentcli takes text, images and resources in a prompt, "
                f"not {getattr(block, 'type', type(block).__name__)}.",
            )
    text = "\n\n".join(parts)
    if not text.strip() and not pictures:
        raise RequestError(-32602, "The prompt is empty.")
    return text, pictures
