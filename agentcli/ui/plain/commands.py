"""Slash commands in line mode. Names, help and reports come from ``ui/slash.py``, shared with the TUI."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from rich.table import Table
from rich.text import Text

from ...core.door import MODES, SessionError, SessionSurface, SubagentRecord
from .. import slash
from ..calls import RICH_STYLES, patch_lines
from ..escapes import visible
from ..format import seconds, turns
from ..rewind import parse_rewind, rewind_list, rewind_session
from .display import STATUS_MARKS, Display
from .transcript import transcript_text
from .turn_keys import TurnKeys


class LineApp(Protocol):
    """What a command uses of line mode's app (app.py, which runs the commands and so is not imported here)."""

    session: SessionSurface
    display: Display
    keys: TurnKeys

    async def run_turn(self, work: Awaitable[Any]) -> Any: ...

    async def show_long(self, text: str) -> None: ...

    async def confirm(self, question: str) -> bool: ...

    async def may_quit(self) -> bool: ...


KEYS = (
    ("enter", "send"),
    ("ctrl+j, meta+enter", "new line"),
    (
        "ctrl+s",
        "while a turn runs: what you typed goes into it, read after the current tool call (with "
        "steer_on_enter, enter does that and ctrl+s keeps the line for the prompt)",
    ),
    ("tab", "complete /commands and @paths"),
    ("ctrl+o", "whole output of the latest request's bash calls, where the preview was cut"),
    ("esc", "interrupt the running turn"),
    ("ctrl+c", "interrupt the running turn; clear the line; twice on an empty line quits"),
    ("ctrl+d", "quit"),
)
APPROVAL_KEYS = (
    "Approvals: y allows once, c for this subagent, s for this session, a always, n denies, t denies "
    "and lets you type why (enter sends it to the model)."
)


def two_columns(rows: Iterable[tuple[str, str]], style: str = "") -> Table:
    """Names and what they do, the second column wrapped under itself (not under the names) when it is long."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style=style)
    grid.add_column(style=style)
    for name, what in rows:
        grid.add_row(Text(name), Text(what))  # text, never markup: descriptions come from command files
    return grid


async def run_command(app: LineApp, text: str) -> bool:
    """Run one slash command; False when line mode should quit."""
    try:
        command, arg = slash.parse(text, "plain")
    except slash.UnknownCommand as exc:
        app.display.say(str(exc), "red")
        return True
    handler = HANDLERS[command.name]
    keep_going = await handler(app, arg)
    app.display.emit("")
    return keep_going is not False


async def help_(app: LineApp, arg: str) -> None:
    own = slash.session_commands(app.session)
    listed = [*slash.commands_for("plain", own), *own]
    app.display.say(two_columns((f"/{c.name} {c.args}".strip(), c.help) for c in listed))
    app.display.say(Text("Keys", style="dim"))
    app.display.say(two_columns(KEYS, "dim"))
    app.display.say(APPROVAL_KEYS, "dim")
    app.display.say(slash.web_search_line(app.session), "dim")


async def clear(app: LineApp, arg: str) -> None:
    app.session.clear()
    app.display.say("Started a fresh conversation; the session file keeps the earlier one.")


async def cost(app: LineApp, arg: str) -> None:
    app.display.say(slash.cost_report(app.session))


async def context(app: LineApp, arg: str) -> None:
    app.display.say(slash.context_report(await app.session.context_usage()))


async def model(app: LineApp, arg: str) -> None:
    if not arg:
        app.display.say(f"Model: {app.session.model}. /model NAME switches it.")
        return
    app.session.set_model(arg)
    app.display.say(f"Model set to {arg}.")


async def compact(app: LineApp, arg: str) -> None:
    run = app.session.compact
    if await app.run_turn(run(arg)) is False:
        app.display.say("There is too little to compact yet.")


async def review(app: LineApp, arg: str) -> None:
    await app.run_turn(slash.review(app.session, arg))


async def permissions(app: LineApp, arg: str) -> None:
    if arg:
        try:
            app.session.set_permission_mode(arg)
        except ValueError as exc:
            app.display.say(str(exc), "red")
            return
        app.display.say(f"Permission mode set to {arg}.")
        return
    app.display.say(app.session.describe_permissions())
    app.display.say(f"Modes: {', '.join(MODES)}; /permissions MODE switches.", "dim")


async def agents(app: LineApp, arg: str) -> None:
    records = app.session.children
    if not records:
        app.display.say("No subagents in this session yet.")
    for n, record in enumerate(records, start=1):
        app.display.say(agent_row(n, record))
    types = ", ".join(app.session.agent_types)
    app.display.say(f"Agent types: {types}. /transcript N prints subagent N's transcript.", "dim")


def agent_row(n: int, record: SubagentRecord) -> Text:
    mark, style = STATUS_MARKS.get(record.status, ("·", "cyan"))
    counted = turns(record.turns)
    return (
        Text(f"{n:>3}. ")
        + Text(record.id, style="bold")
        + Text(f" {mark} {record.status:<9}", style=style)
        + Text(
            f" {counted} · {slash.tokens(record.usage.total_tokens)} tokens · {seconds(record.seconds)}"
            f" · {record.type} · ",
            style="dim",
        )
        + Text(visible(record.description))
    )


async def transcript(app: LineApp, arg: str) -> None:
    records = app.session.children
    if not records:
        app.display.say("No subagents in this session yet.")
        return
    record = find_record(records, arg)
    if record is None:
        app.display.say(f"No subagent {arg!r}; /agents lists them, numbered from 1.", "red")
        return
    await app.show_long(transcript_text(record))


def find_record(records: list[SubagentRecord], arg: str) -> SubagentRecord | None:
    """By number in /agents (default: the latest), or by id such as sa-2."""
    if not arg:
        return records[-1]
    if arg.isdigit():
        n = int(arg)
        return records[n - 1] if 1 <= n <= len(records) else None
    return next((r for r in records if r.id == arg), None)


async def bashes(app: LineApp, arg: str) -> None:
    app.display.say(await slash.bashes(app.session, arg))


async def rewind(app: LineApp, arg: str) -> None:
    if not arg:
        lines = rewind_list(app.session.prompt_list(), app.session.checkpoint_list())
        app.display.say("\n".join(visible(line) for line in lines))
        app.display.say("/rewind N [files|conversation|both] goes back to just before prompt N.", "dim")
        return
    parsed = parse_rewind(arg)
    if isinstance(parsed, str):
        app.display.say(parsed, "red")
        return
    try:
        lines = rewind_session(app.session, *parsed)
    except SessionError as exc:
        app.display.say(str(exc), "red")
        return
    if lines:
        app.display.say("\n".join(visible(line) for line in lines))


async def worktree(action: str, app: LineApp, arg: str) -> None:
    """/diff, /merge or /discard (the action first, so that each is the table's handler with it bound)."""
    if action == "discard":  # it cannot be undone: ask first
        question, askable = await slash.before_discard(app.session, arg)
        if not askable:
            app.display.say(question, "red")
            return
        if not await app.confirm(question):
            app.display.say(f"Kept {slash.subagent_id(arg)}'s worktree.")
            return
    text, failed = await slash.worktree(app.session, action, arg)
    if action == "diff" and not failed:
        app.display.say(Text("\n").join(Text(line, style=RICH_STYLES[kind]) for kind, line in patch_lines(text)))
    else:
        app.display.say(text, "red" if failed else "")


async def mcp(app: LineApp, arg: str) -> None:
    app.display.say(slash.mcp_report(app.session.mcp_servers))


async def skills(app: LineApp, arg: str) -> None:
    app.display.say(slash.skills_report(app.session))


async def plugin(app: LineApp, arg: str) -> None:
    """/plugin; ctrl+c stops one that clones (``clones.stoppable`` removes the clone), not the program."""
    from ..plugin_slash import plugin_command, stopped, working_line

    if line := working_line(arg, "ctrl+c"):
        app.display.say(line, "dim")
    work = asyncio.ensure_future(plugin_command(app.session, arg, app.confirm))
    try:
        with app.keys.sigint(work.cancel):
            await asyncio.wait([work])
    finally:
        work.cancel()  # done already, unless line mode itself is being stopped
    if work.cancelled():
        app.display.say(stopped(arg), "yellow")
        return
    text, failed = work.result()
    app.display.say(text, "red" if failed else "")


async def stop(app: LineApp, arg: str) -> None:
    app.display.say(slash.stop(app.session))


async def steer(app: LineApp, arg: str) -> None:
    text, failed = slash.steer(app.session, arg)
    app.display.say(text, "red" if failed else "")


async def wrap_up(app: LineApp, arg: str) -> None:
    text, failed = slash.wrap_up(app.session, arg)
    app.display.say(text, "red" if failed else "")


async def export(app: LineApp, arg: str) -> None:
    text, failed = slash.export(app.session, arg)
    app.display.say(text, "red" if failed else "")


async def exit_(app: LineApp, arg: str) -> bool:
    return not await app.may_quit()


HANDLERS: dict[str, Callable[[LineApp, str], Awaitable[bool | None]]] = {
    "help": help_,
    "clear": clear,
    "cost": cost,
    "context": context,
    "model": model,
    "compact": compact,
    "review": review,
    "permissions": permissions,
    "agents": agents,
    "transcript": transcript,
    "bashes": bashes,
    "mcp": mcp,
    "skills": skills,
    "plugin": plugin,
    "rewind": rewind,
    "stop": stop,
    "steer": steer,
    "wrapup": wrap_up,
    "exit": exit_,
    "export": export,
    **{action: functools.partial(worktree, action) for action in ("diff", "merge", "discard")},
}
