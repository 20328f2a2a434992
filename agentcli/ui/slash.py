"""Slash commands shared by the TUI and line mode: names, help, parsing, and reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.events import Usage
from .escapes import visible
from .format import tokens

if TYPE_CHECKING:
    from ..core.session import Session


@dataclass(frozen=True)
class SlashCommand:
    name: str
    args: str
    help: str
    front_ends: tuple[str, ...] = ("tui", "plain")


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "", "List commands and keys"),
    SlashCommand("clear", "", "Start a fresh conversation (the session file keeps the old one)"),
    SlashCommand("agents", "", "Show this session's subagents, and the agent types"),
    SlashCommand("transcript", "N", "Print subagent N's full transcript", ("plain",)),
    SlashCommand("cost", "", "Tokens and cost per agent and in total, and context use"),
    SlashCommand("model", "NAME", "Switch the main agent's model"),
    SlashCommand("compact", "[FOCUS]", "Summarize older turns to free context"),
    SlashCommand("permissions", "[MODE]", "Show or set the permission mode"),
    SlashCommand("stop", "", "Cancel every running subagent; each still reports what it found"),
    SlashCommand("bashes", "[kill ID]", "List background shells (bash run_in_background); kill ID stops one"),
    SlashCommand("exit", "", "Quit agentcli"),
)
ALIASES = {"quit": "exit", "q": "exit", "?": "help"}


class UnknownCommand(Exception):
    pass


def commands_for(front_end: str) -> list[SlashCommand]:
    return [c for c in COMMANDS if front_end in c.front_ends]


def parse(text: str, front_end: str = "tui") -> tuple[SlashCommand, str]:
    """Split '/model opus' into the command and its argument text."""
    head, _, rest = text.strip().lstrip("/").partition(" ")
    name = ALIASES.get(head.lower(), head.lower())
    for command in commands_for(front_end):
        if command.name == name:
            return command, rest.strip()
    raise UnknownCommand(f"Unknown command /{head}; /help lists the commands.")


def complete(prefix: str, front_end: str = "tui") -> list[SlashCommand]:
    """Commands whose name starts with what follows the slash."""
    typed = prefix.lstrip("/").lower()
    return [c for c in commands_for(front_end) if c.name.startswith(typed)]


def help_text(front_end: str) -> str:
    width = max(len(f"/{c.name} {c.args}".strip()) for c in commands_for(front_end))
    return "\n".join(f"{f'/{c.name} {c.args}'.strip():<{width}}  {c.help}" for c in commands_for(front_end))


def stop(session: "Session") -> str:
    """/stop: cancel every running subagent, and say which."""
    stopped = session.subagents.cancel_all()
    if not stopped:
        return "No subagent is running."
    return f"Cancelling {', '.join(stopped)}; each sends the main agent a summary of what it found."


def still_running(session: "Session") -> str:
    """The question before quitting while subagents run; "" when none does."""
    running = [record.id for record in session.subagents.running]
    if not running:
        return ""
    one = len(running) == 1
    return (f"{', '.join(running)} {'is' if one else 'are'} still running. Quit anyway? "
            f"{'Its transcript is' if one else 'Their transcripts are'} kept as interrupted.")


def money(usage: Usage) -> str:
    return "n/a" if usage.cost is None else f"${usage.cost:.4f}"


def usage_line(label: str, usage: Usage) -> str:
    return (f"{label:<10} in {tokens(usage.input_tokens):>7}  out {tokens(usage.output_tokens):>7}  "
            f"cache read {tokens(usage.cache_read_tokens):>7}  write {tokens(usage.cache_write_tokens):>7}  "
            f"{money(usage):>9}")


def cost_report(session: "Session") -> str:
    """Usage per agent and in total, how full the main context is, and what delegation kept out."""
    lines = [usage_line("main", session.main.usage)]
    for record in session.subagents.records.values():
        lines.append(usage_line(record.id, record.usage) + f"  {visible(record.description)}")
    lines.append(usage_line("total", session.usage))
    lines.append(context_line(session))
    lines.append(f"kept out of main context: {tokens(session.subagents.tokens_kept_out)} tokens")
    return "\n".join(lines)


def context_line(session: "Session") -> str:
    used, window = session.context_used(), session.context_window()
    return f"main context: {tokens(used)} of {tokens(window)} tokens ({100 * used / window:.0f}%)"


def bashes_text(session: "Session") -> str:
    """/bashes: one line per background shell of the session, newest last."""
    shells = session.main.ctx.shells.shells.values()
    if not shells:
        return "No background shells in this session; the model starts one with bash run_in_background."
    lines = []
    for shell in shells:
        command = shell.command.splitlines()[0] if shell.command.strip() else ""
        lines.append(f"{shell.id:<8} {shell.state():<22} pid {shell.pid:<8} {shell.seconds():>6.0f} s  "
                     f"{shell.owner:<6} {command[:80]}")
    return "\n".join(lines) + "\n/bashes kill ID stops one; all are stopped when the session ends."


async def kill_bash(session: "Session", arg: str) -> str:
    """/bashes kill ID: stop one background shell; the sentence to show."""
    shells = session.main.ctx.shells
    shell = shells.shells.get(arg.strip())
    if shell is None:
        return f"No background shell {arg.strip()!r}; /bashes lists them."
    if shell.status != "running":
        return f"{shell.id} is no longer running: it {shell.state()}."
    await shells.stop(shell)
    return f"Stopped {shell.id} and everything it started."


async def bashes(session: "Session", arg: str) -> str:
    """/bashes [kill ID]: the list, or the outcome of stopping one."""
    verb, _, rest = arg.strip().partition(" ")
    if not verb:
        return bashes_text(session)
    if verb == "kill" and rest.strip():
        return await kill_bash(session, rest)
    return "Usage: /bashes lists background shells; /bashes kill ID stops one."
