"""The client's own file methods (an editor's unsaved buffers) under read_file, write_file and edit_file.

When a front end hands the session an ``EditorFiles`` (ACP, when the client offers both fs/read_text_file and
fs/write_text_file), the file tools take a text file's current contents from it and write new contents through
it, for the files it ``covers`` (the workspace; not a worktree child's copy). Every check stays agentcli's and
comes first: the path is resolved and confined (``resolve_path``), the permissions and hooks have judged the call
(the registry), the file is reached one folder at a time following no link and must be a regular file
(``file_access``), and the read-before-write check compares with the editor's text. Only then is the editor
asked, about the resolved path; and that path is resolved again once it answered and before a write, so a link
swapped in meanwhile fails the call instead of leading the editor elsewhere. Images and binary files are read
and written on disk as before: the client's methods carry text.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ToolError
from .base import EditorFiles, ToolContext


def editing(ctx: ToolContext, real: Path) -> EditorFiles | None:
    """The editor that holds ``real`` (resolved and confined already), or None: go by the disk."""
    return ctx.editor if ctx.editor is not None and ctx.editor.covers(real) else None


def _unmoved(real: Path, shown: str) -> None:
    """``real`` still resolves to itself: no component of it became a link since it was checked."""
    if os.path.realpath(real) != str(real):
        raise ToolError(
            f"{shown} changed while it was being opened (a symbolic link was swapped into its path), "
            "so it was left alone; check the path and try again."
        )


async def read_through(editor: EditorFiles, real: Path, shown: str) -> str:
    """The editor's text of ``real``, which every check has passed."""
    _unmoved(real, shown)
    text = await editor.read(real)
    _unmoved(real, shown)
    return text


async def write_through(editor: EditorFiles, real: Path, shown: str, text: str) -> None:
    _unmoved(real, shown)
    await editor.write(real, text)


def as_bytes(text: str) -> bytes:
    """An editor's text as the bytes the read-before-write check and the checkpoints keep."""
    return text.encode("utf-8", "surrogatepass")
