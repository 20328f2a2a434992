"""A subagent's hidden transcript as plain text, and a pager to read it in."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

from ...core.door import SubagentRecord, command_env
from ..transcript_text import subagent_lines
from ..view import Subagent


def transcript_text(record: SubagentRecord) -> str:
    """The brief, each assistant message, each tool call with input and output, and the result."""
    agent = Subagent.from_record(record)  # escapes already made visible
    return "\n".join(subagent_lines(agent, live=not agent.finished, now=0.0))


def pager_command() -> list[str] | None:
    """$PAGER, else less when it is installed; None when there is nothing to page with."""
    configured = os.environ.get("PAGER", "").strip()
    if configured:
        try:
            return shlex.split(configured)
        except ValueError:
            return None
    found = shutil.which("less")
    return [found] if found else None


def page(text: str, command: list[str]) -> bool:
    """Show ``text`` in the pager; False when the pager could not be run."""
    env = command_env()
    env.setdefault("LESS", "FR")  # quit at once if it fits on one screen; keep colors
    try:
        subprocess.run(command, input=text if text.endswith("\n") else text + "\n", text=True, env=env, check=False)
    except OSError:
        return False
    return True
