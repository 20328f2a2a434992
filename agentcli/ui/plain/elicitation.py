"""An MCP server's question to the user (elicitation) in line mode: its message, then one typed line per
value its schema asks for, each checked as it is typed (``bridge.elicitation_answer``); n declines,
ctrl+c or ctrl+d cancels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit import PromptSession

from ...core.door import elicitation_answer
from ...core.events import ElicitationRequested
from .prompt import prompt_line


def field_prompt(title: str, kind: str, required: bool, choices: tuple[str, ...]) -> str:
    """``  Count (a whole number, optional): ``."""
    takes = (
        " | ".join(choices)
        if choices
        else "yes or no"
        if kind == "boolean"
        else "a whole number"
        if kind == "integer"
        else "a number"
        if kind == "number"
        else ""
    )
    facts = ", ".join(part for part in (takes, "" if required else "optional") if part)
    return f"  {title}{f' ({facts})' if facts else ''}: "


async def ask(
    event: ElicitationRequested, prompt: PromptSession[str], say: Callable[[str, str], None]
) -> dict[str, Any] | str:
    """The user's answer: the values (accept), "decline" or "cancel"."""
    say(f"? The MCP server {event.server} asks: {event.message}", "bold")
    if event.url:
        say(f"  Open {event.url} to answer.", "")
    try:
        choice = await prompt_line(prompt, "  Answer it? [Y]es, [n]o declines, ctrl+c cancels: ")
        if choice.strip().lower() in ("n", "no"):
            return "decline"
        typed: dict[str, str] = {}
        for field in event.fields:
            name, kind, title, required, choices = field
            while True:
                text = await prompt_line(prompt, field_prompt(title, kind, required, choices))
                try:
                    elicitation_answer((field,), {name: text})
                except ValueError as exc:  # one sentence; asked again
                    say(f"  {exc}", "red")
                    continue
                typed[name] = text
                break
        return elicitation_answer(event.fields, typed)
    except (KeyboardInterrupt, EOFError):
        return "cancel"
