"""Slash commands in the full-screen app. Names and parsing come from ``ui/slash.py``, tables from reports.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable, Iterator

from textual.app import SystemCommand

from ...core.agents import load_agent_types
from ...core.permissions import MODES
from .. import slash
from . import reports

if TYPE_CHECKING:
    from .app import AgentApp

KEYS = [
    ("enter", "send the message"), ("ctrl+j, shift+enter", "new line"), ("↑ ↓", "earlier messages"),
    ("@", "complete a file"), ("/", "complete a command"), ("esc", "interrupt the answer"),
    ("ctrl+c", "interrupt, or clear the input; twice on an empty input quits"),
    ("ctrl+t", "show or hide the side panel"), ("ctrl+o", "a subagent's transcript"),
    ("shift+tab, tab", "to the panel's entries: enter transcript, space expand, x cancel"),
    ("ctrl+p", "every action"), ("ctrl+q", "quit"),
]
PANEL_HOW_TO = ("shift+tab (or tab) moves to the panel's entries: enter opens a transcript, space expands, "
                "x cancels a running one; ctrl+o opens the latest transcript from anywhere.")


async def run_command(app: "AgentApp", text: str) -> None:
    try:
        command, arg = slash.parse(text, "tui")
    except slash.UnknownCommand as exc:
        await app.conversation.add_notice(str(exc), "warning")
        return
    await HANDLERS[command.name](app, arg)


async def show_help(app: "AgentApp", arg: str) -> None:
    await app.conversation.add_report(reports.help_report(KEYS))


async def clear(app: "AgentApp", arg: str) -> None:
    if await app.refuse_while_busy():
        return
    app.session.clear()  # the conversation empties itself on the HistoryCleared event
    app.refresh_status()


async def agents(app: "AgentApp", arg: str) -> None:
    app.show_panel()  # the focus stays in the input: the panel's keys act only on an entry reached on purpose
    types = load_agent_types(app.session.workspace.root)
    await app.conversation.add_report(reports.agents_report(types.values(), app.subagents.values(), PANEL_HOW_TO))


async def cost(app: "AgentApp", arg: str) -> None:
    await app.conversation.add_report(reports.cost_report(app.session))


async def model(app: "AgentApp", arg: str) -> None:
    if not arg:
        await app.conversation.add_notice(f"The model is {app.session.main.model}; /model NAME switches it.")
        return
    app.session.set_model(arg)
    app.refresh_status()
    await app.conversation.add_notice(f"Switched the main agent to {arg}.")


async def compact(app: "AgentApp", arg: str) -> None:
    if await app.refuse_while_busy():
        return
    app.start_work(app.session.compact(arg), "compact")


async def permissions(app: "AgentApp", arg: str) -> None:
    rules = app.session.permissions
    if not arg:
        await app.conversation.add_notice(f"{rules.describe()}\n\nModes: {', '.join(MODES)}; "
                                          "/permissions MODE switches.", block=True)
        return
    try:
        rules.set_mode(arg)
    except ValueError as exc:
        await app.conversation.add_notice(str(exc), "warning")
        return
    app.refresh_status()
    await app.conversation.add_notice(f"Permission mode is now {arg}.")


async def bashes(app: "AgentApp", arg: str) -> None:
    await app.conversation.add_notice(await slash.bashes(app.session, arg), block=True)


async def stop(app: "AgentApp", arg: str) -> None:
    await app.conversation.add_notice(slash.stop(app.session))


async def leave(app: "AgentApp", arg: str) -> None:
    app.request_quit()


HANDLERS: dict[str, Callable[["AgentApp", str], Awaitable[None]]] = {
    "help": show_help, "clear": clear, "agents": agents, "cost": cost, "model": model,
    "compact": compact, "permissions": permissions, "bashes": bashes, "stop": stop, "exit": leave,
}


def palette_commands(app: "AgentApp") -> Iterator[SystemCommand]:
    """The app's own entries in the command palette (ctrl+p), next to Textual's (themes, keys, quit)."""
    yield SystemCommand("Interrupt", "Stop the running answer (esc)", app.action_interrupt)
    yield SystemCommand("Side panel", "Show or hide the subagent panel (ctrl+t)", app.action_toggle_panel)
    yield SystemCommand("Transcript", "Open the focused or latest subagent's transcript (ctrl+o)",
                        app.action_open_transcript)
    for command in slash.commands_for("tui"):
        if not command.args.startswith("NAME"):  # /model needs a name: type it
            yield SystemCommand(f"/{command.name}", command.help, lambda c=command: app.run_slash(f"/{c.name}"))
    for mode in MODES:
        yield SystemCommand(f"Permission mode: {mode}", f"/permissions {mode}",
                            lambda mode=mode: app.run_slash(f"/permissions {mode}"))
