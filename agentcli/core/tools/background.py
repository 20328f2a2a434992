"""Background shells: the tools that read and stop what ``bash`` with ``run_in_background`` started.

A background shell is a bash command left running after its call returns (a dev server, a
watcher). It gets an id (``bash-1``), its output goes to a capped file in the session folder
(``outputs.py``), and the newest unread part is kept in memory for ``bash_output``. When its
command exits, whatever it left running is stopped (``processes.py``); ``kill_bash`` stops it
earlier, and every shell is stopped when the session ends. A subagent sees only the shells it
started itself; the main agent sees all of them. The registry of shells is ``shells.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .base import Tool, ToolContext

_BASH_ID = {"bash_id": {"type": "string", "description": "The id `bash` returned, e.g. 'bash-1'."}}


class BashOutput(Tool):
    name = "bash_output"
    preview = "output"  # its output is worth seeing under the call
    claude_name = "BashOutput"
    brief = "a background shell's new output"  # its line in the index of tools on demand (on_demand.py)
    description = (
        "Read the new output of a background shell started with bash run_in_background: everything it "
        "printed since the last read (long output is cut to its beginning and end), then a status line "
        "saying whether it still runs or how it exited."
    )
    input_schema = {"type": "object", "properties": _BASH_ID, "required": ["bash_id"], "additionalProperties": False}
    kind = "read"
    key_arg = "bash_id"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        shells = ctx.shells
        shell = shells.find(args["bash_id"], ctx)
        await asyncio.sleep(0)  # let output that has arrived be read first
        return shells.read_new(shell)


class KillBash(Tool):
    name = "kill_bash"
    claude_name = "KillShell"
    brief = "stop a background shell"  # its line in the index of tools on demand (on_demand.py)
    description = (
        "Stop a background shell started with bash run_in_background, with everything it started. Its "
        "output stays readable with bash_output."
    )
    input_schema = {"type": "object", "properties": _BASH_ID, "required": ["bash_id"], "additionalProperties": False}
    kind = "read"  # it stops only what this session started, like ctrl+c: no approval needed
    key_arg = "bash_id"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        shell = ctx.shells.find(args["bash_id"], ctx)
        if shell.status != "running":
            return f"{shell.id} is no longer running: it {shell.state()}."
        await ctx.shells.stop(shell)
        return f"Stopped {shell.id} ({shell.command.splitlines()[0][:200]}) and everything it started."
