"""The workspace trust question in line mode, asked before the session opens."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from ...trust import Request
from .prompt import prompt_line

QUESTION = "Trust this workspace and apply what these files ask for? [y/N] "


def explain(request: Request, out: TextIO) -> None:
    print(f"Files in {request.root} ask for more than agentcli allows by default:", file=out)
    for line in request.lines(mark_new=True):
        print(f"  {line}", file=out)
    print(
        "Anyone who wrote this repository wrote them; trust it only if you trust them. No: agentcli runs with "
        "these parts ignored (what narrows permissions still applies).",
        file=out,
    )


async def ask(
    request: Request, *, input: Input | None = None, output: Output | None = None, out: TextIO | None = None
) -> bool | None:
    """True or False as answered (enter is no); None when the input ends (ctrl+d). ctrl+c raises
    KeyboardInterrupt: agentcli stops."""
    out = out or sys.stdout
    explain(request, out)
    session: PromptSession[str] = PromptSession(input=input, output=output)
    while True:
        try:
            text = (await prompt_line(session, QUESTION)).strip().lower()
        except EOFError:
            return None
        if text in ("y", "yes"):
            return True
        if text in ("", "n", "no"):
            return False
        print("Please answer y or n.", file=out)


def ask_in_line_mode(request: Request) -> bool | None:
    """Asks on the terminal; without one (piped input) there is no one to ask, so None."""
    if not (sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    return asyncio.run(ask(request))
