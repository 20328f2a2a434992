"""Slash commands in the full-screen app. Names and parsing come from ``ui/slash.py``, tables from reports.py."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from ...core.door import MODES, SessionError
from .. import slash
from . import controls
from .base import AppBase

# The engine's modules (agent types, rewinding, the report tables) load when a command first needs them:
# this module is on the way to the first screen, the session opens after it.

if TYPE_CHECKING:
    from rich.text import Text


KEYS = [
    ("enter", "send the message (while the agent works: queued, or with steer_on_enter into its turn)"),
    (
        "ctrl+s",
        "while the agent works: into its running turn, read after the current tool call (empty input: "
        "the queued messages; with steer_on_enter: queue it)",
    ),
    ("ctrl+j, shift+enter", "new line"),
    ("↑ ↓", "earlier messages"),
    ("pageup pagedown, shift+↑ ↓", "scroll the conversation, from the input or the panel"),
    ("ctrl+home, ctrl+end", "the conversation's top; its bottom, following new output again"),
    ("@", "mention a file (attached), an agent type or a subagent"),
    ("/", "complete a command"),
    ("esc", "interrupt the answer; queued and unread steered messages back to the input"),
    ("esc esc", "rewind (on an empty input)"),
    ("ctrl+c", "interrupt, or clear the input; twice on an empty input quits"),
    ("ctrl+t", "show the side panel; when shown, go to it; from it, hide it"),
    ("ctrl+o", "a subagent's transcript"),
    (
        "tab",
        "on an empty input: to the panel's newest running entry (enter transcript, space expand, "
        "m message, w wrap up, x cancel)",
    ),
    ("shift+tab", "the next permission mode: default, acceptEdits, plan"),
    ("ctrl+p", "every action"),
    ("ctrl+q", "quit"),
]
PANEL_HOW_TO = (
    "tab on an empty input (or ctrl+t) moves to the panel's newest running entry: enter opens a "
    "transcript, space expands; on a running one m sends it a message, w asks it to wrap up, x cancels it; "
    "ctrl+o opens the latest transcript from anywhere."
)


async def run_command(app: AppBase, text: str) -> None:
    try:
        command, arg = slash.parse(text, "tui")
    except slash.UnknownCommand as exc:
        await app.conversation.add_notice(str(exc), "warning")
        return
    await HANDLERS[command.name](app, arg)


async def show_help(app: AppBase, arg: str) -> None:
    from . import reports

    await app.conversation.add_report(
        reports.help_report(KEYS, slash.session_commands(app.session), slash.web_search_line(app.session))
    )


async def clear(app: AppBase, arg: str) -> None:
    if await app.refuse_while_busy():
        return
    app.session.clear()  # the conversation empties itself on the HistoryCleared event
    app.refresh_status()


async def agents(app: AppBase, arg: str) -> None:
    app.show_panel()  # the focus stays in the input: the panel's keys act only on an entry reached on purpose
    from ...core.door import load_agent_types
    from . import reports

    types = load_agent_types(app.session.workspace.root, trusted=app.session.trusted)
    await app.conversation.add_report(reports.agents_report(types.values(), app.subagents.values(), PANEL_HOW_TO))


async def cost(app: AppBase, arg: str) -> None:
    from . import reports

    await app.conversation.add_report(reports.cost_report(app.session))


async def context(app: AppBase, arg: str) -> None:
    from . import reports

    await app.conversation.add_report(reports.context_report(await app.session.context_usage()))


async def model(app: AppBase, arg: str) -> None:
    if not arg:
        await app.conversation.add_notice(f"The model is {app.session.model}; /model NAME switches it.")
        return
    app.session.set_model(arg)
    app.refresh_status()
    await app.conversation.add_notice(f"Switched the main agent to {arg}.")


async def compact(app: AppBase, arg: str) -> None:
    if await app.refuse_while_busy():
        return
    app.start_work(app.session.compact(arg), "compact")


async def review(app: AppBase, arg: str) -> None:
    if await app.refuse_while_busy():
        return
    app.start_work(slash.review(app.session, arg), "review")


async def permissions(app: AppBase, arg: str) -> None:
    if not arg:
        await app.conversation.add_notice(
            f"{app.session.describe_permissions()}\n\nModes: {', '.join(MODES)}; /permissions MODE switches.",
            block=True,
        )
        return
    try:
        app.session.set_permission_mode(arg)
    except ValueError as exc:
        await app.conversation.add_notice(str(exc), "warning")
        return
    app.refresh_status()
    await app.conversation.add_notice(f"Permission mode is now {arg}.")


async def bashes(app: AppBase, arg: str) -> None:
    await app.conversation.add_notice(await slash.bashes(app.session, arg), block=True)


async def rewind(app: AppBase, arg: str) -> None:
    from ..rewind import parse_rewind
    from .screens.rewind import RewindScreen

    if await app.refuse_while_busy():
        return
    if arg:
        parsed = parse_rewind(arg)
        if isinstance(parsed, str):
            await app.conversation.add_notice(parsed, "warning")
        else:
            await rewind_to(app, *parsed)
        return
    prompts = app.session.prompt_list()
    if not prompts:
        await app.conversation.add_notice("There is nothing to rewind yet: no prompt has been sent.")
        return

    async def chosen(choice: tuple[int, str] | None) -> None:
        if choice is not None:
            await rewind_to(app, *choice)

    app.push_screen(RewindScreen(prompts, app.session.checkpoint_list()), callback=chosen)


async def rewind_to(app: AppBase, number: int, what: str, overwrite: bool = False) -> None:
    from ..rewind import rewind_session

    try:
        lines = rewind_session(app.session, number, what, overwrite)
    except SessionError as exc:
        await app.conversation.add_notice(str(exc), "warning")
        return
    if what != "files" and not app.prompt.text.strip():  # the prompt comes back, to edit and send again
        app.prompt.load_text(app.session.prompt_list()[number - 1].text)
        app.prompt.move_cursor(app.prompt.document.end)
    app.refresh_status()
    if lines:
        await app.conversation.add_notice("\n".join(lines), block=True)


def escape_on_empty_input(app: AppBase) -> None:
    """esc twice on an empty input (within a second) opens /rewind."""
    now = time.monotonic()
    if now - app.last_escape < 1.0:
        app.last_escape = -10.0
        app.run_worker(rewind(app, ""))
    else:
        app.last_escape = now


async def worktree(action: str, app: AppBase, arg: str) -> None:
    """/diff, /merge or /discard (the action first, so that each is the table's handler with it bound)."""
    if action == "discard":  # it cannot be undone: ask first
        from .screens.confirm import ConfirmScreen

        question, askable = await slash.before_discard(app.session, arg)
        if not askable:
            await app.conversation.add_notice(question, "warning")
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await act(app, action, arg)
            else:
                await app.conversation.add_notice(f"Kept {slash.subagent_id(arg)}'s worktree.")

        app.push_screen(ConfirmScreen(question, "drops it"), answered)
        return
    await act(app, action, arg)


async def act(app: AppBase, action: str, arg: str) -> None:
    text, failed = await slash.worktree(app.session, action, arg)
    if action == "diff" and not failed:
        await app.conversation.add_report(colored_diff(text))
    else:
        await app.conversation.add_notice(text, "warning" if failed else "info")


def colored_diff(text: str) -> Text:
    from rich.text import Text

    from ..calls import RICH_STYLES, patch_lines

    return Text("\n").join(Text(line, style=RICH_STYLES[kind]) for kind, line in patch_lines(text))


async def mcp(app: AppBase, arg: str) -> None:
    await app.conversation.add_notice(slash.mcp_report(app.session.mcp_servers), block=True)


async def skills(app: AppBase, arg: str) -> None:
    await app.conversation.add_notice(slash.skills_report(app.session), block=True)


async def plugin(app: AppBase, arg: str) -> None:
    """/plugin, in a worker: installing may clone for a while (esc stops it: ``AppBase.stop_plugin``), and asks
    its question in a modal screen."""
    from ..plugin_slash import plugin_command, working_line
    from .screens.confirm import ConfirmScreen

    async def ask(question: str) -> bool:
        answer: bool | None = await app.push_screen_wait(ConfirmScreen(question, "installs it", "installs nothing"))
        return bool(answer)

    async def run() -> None:
        text, failed = await plugin_command(app.session, arg, ask)
        await app.conversation.add_notice(text, "warning" if failed else "info", block=True)

    if line := working_line(arg, "esc"):
        await app.conversation.add_notice(line)
    app.run_worker(run(), group="plugin", name=arg)


async def resume(app: AppBase, arg: str) -> None:
    await controls.pick_session(app)


async def stop(app: AppBase, arg: str) -> None:
    await app.conversation.add_notice(slash.stop(app.session))


async def steer(app: AppBase, arg: str) -> None:
    text, failed = slash.steer(app.session, arg)
    await app.conversation.add_notice(text, "warning" if failed else "info")


async def wrap_up(app: AppBase, arg: str) -> None:
    text, failed = slash.wrap_up(app.session, arg)
    await app.conversation.add_notice(text, "warning" if failed else "info")


async def export(app: AppBase, arg: str) -> None:
    text, failed = slash.export(app.session, arg)
    await app.conversation.add_notice(text, "warning" if failed else "info")


async def leave(app: AppBase, arg: str) -> None:
    app.request_quit()


HANDLERS: dict[str, Callable[[AppBase, str], Awaitable[None]]] = {
    "help": show_help,
    "clear": clear,
    "agents": agents,
    "cost": cost,
    "context": context,
    "model": model,
    "compact": compact,
    "review": review,
    "permissions": permissions,
    "bashes": bashes,
    "rewind": rewind,
    "mcp": mcp,
    "exit": leave,
    "resume": resume,
    "stop": stop,
    "skills": skills,
    "plugin": plugin,
    "steer": steer,
    "wrapup": wrap_up,
    "export": export,
    **{action: functools.partial(worktree, action) for action in ("diff", "merge", "discard")},
}


def type_command(app: AppBase, command: slash.SlashCommand) -> None:
    """Put ``/name `` in the input, for the user to add the arguments."""
    app.prompt.load_text(f"/{command.name} ")
    app.prompt.move_cursor(app.prompt.document.end)
    app.prompt.focus()


def palette_commands(app: AppBase, run_slash: Callable[[str], None]) -> Iterator[SystemCommand]:
    """The app's own entries in the command palette (ctrl+p), next to Textual's (themes, keys, quit); a slash
    command is typed into the app through ``run_slash``."""
    yield SystemCommand("Interrupt", "Stop the running answer (esc)", app.action_interrupt)
    yield SystemCommand("Side panel", "Show or hide the subagent panel (ctrl+t)", lambda: controls.toggle_panel(app))
    yield SystemCommand(
        "Transcript",
        "Open the focused or latest subagent's transcript (ctrl+o)",
        lambda: controls.open_focused_transcript(app),
    )
    for command in slash.commands_for("tui", slash.session_commands(app.session) if app.session else []):
        if not command.args.startswith(("NAME", "ID")):  # /model needs a name, /merge an id: type them
            yield SystemCommand(f"/{command.name}", command.help, lambda c=command: run_slash(f"/{c.name}"))
    for command in slash.session_commands(app.session) if app.session else []:
        yield SystemCommand(
            f"/{command.name}",
            command.help,
            lambda c=command: type_command(app, c) if c.args else run_slash(f"/{c.name}"),
        )
    for mode in MODES:
        yield SystemCommand(
            f"Permission mode: {mode}", f"/permissions {mode}", lambda mode=mode: run_slash(f"/permissions {mode}")
        )
