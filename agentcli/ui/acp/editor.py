"""The client's own file methods under the file tools: ``fs/read_text_file`` and ``fs/write_text_file``.

A client that offers both (``clientCapabilities.fs``) holds the files its user has open, saved or not: read_file,
write_file and edit_file of every agent of the session (children too) read what the editor shows and their
changes land in its buffers. agentcli checks each call first, as it would without the editor
(core/tools/editor_files.py: the path resolved and confined, permissions and hooks, a regular file reached
without following a link); the client is asked only about the resolved path, and only inside the session's
workspace (a worktree child's copy, or a file outside that the user allowed, goes by the disk).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import schema as s

from ...core.door import EditorFiles, ToolError


def offered(capabilities: s.ClientCapabilities | None) -> bool:
    """Whether the client reads and writes text files for the agent (both: a read from a buffer must be
    checked against a write to the same buffer)."""
    fs = capabilities.fs if capabilities is not None else None
    return bool(fs is not None and fs.read_text_file and fs.write_text_file)


class ClientFiles:
    """``EditorFiles`` over one ACP session's connection (a child's calls go on its parent's session)."""

    def __init__(self, conn: Any, session_id: str, root: Path) -> None:
        self.conn, self.session_id, self.root = conn, session_id, root

    def covers(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents

    async def read(self, path: Path) -> str:
        try:
            response = await self.conn.read_text_file(session_id=self.session_id, path=str(path))
        except Exception as exc:  # the client's error, or a connection gone: one sentence for the model
            raise ToolError(f"The editor could not read {path}: {reason(exc)}.") from None
        return str(response.content)

    async def write(self, path: Path, text: str) -> None:
        try:
            await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except Exception as exc:
            raise ToolError(f"The editor could not write {path}: {reason(exc)}.") from None


def reason(exc: Exception) -> str:
    return str(getattr(exc, "message", "") or exc or type(exc).__name__).rstrip(".")


def files_for(conn: Any, session_id: str, root: Path, capabilities: s.ClientCapabilities | None) -> EditorFiles | None:
    return ClientFiles(conn, session_id, root) if offered(capabilities) else None
