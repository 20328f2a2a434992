"""/plugin in the TUI and line mode: `agentcli plugin …`'s subcommands (``plugin_cli.perform``), the same words
and files, with the front end's own yes-or-no question before a plugin is installed or updated."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from .escapes import visible

if TYPE_CHECKING:
    from ..core.door import SessionSurface
    from ..plugin_cli import Ask

USAGE = (
    "Usage: /plugin [list | install NAME@MARKETPLACE | enable | disable | uninstall | update NAME] "
    "[--scope user|project|local], /plugin marketplace add SOURCE | list | update [NAME] | remove NAME."
)


def working_line(arg: str, stop_key: str) -> str:
    """The line shown as ``/plugin ARG`` starts, when it may clone (a marketplace added or updated, a plugin
    installed or updated), which can take a while: that it works, and how to stop it. "" for the rest (a usage
    error or help, said at once)."""
    try:
        words = shlex.split(arg)
    except ValueError:
        return ""
    clones = (
        words[:1] in (["install"], ["update"])
        and len(words) > 1
        or words[:2] == ["marketplace", "update"]
        or words[:2] == ["marketplace", "add"]
        and len(words) > 2
    )
    if not clones or {"-h", "--help"} & set(words):
        return ""
    return visible(f"/plugin {arg}: working on it; {stop_key} stops it.")


def stopped(arg: str) -> str:
    """What is said once ``/plugin ARG`` was stopped (``clones.stoppable``: git stopped, its clone removed)."""
    return visible(f"Stopped /plugin {arg}; what it had not finished was undone.")


async def plugin_command(session: SessionSurface, arg: str, ask: Ask) -> tuple[str, bool]:
    """Run ``/plugin ARG``: the text to show, and whether it failed. ``ask`` puts the question of what a plugin
    brings to the user before it is installed; no answer, or no, installs nothing."""
    from ..plugin_cli import UsageError, build_parser, listing, perform
    from ..plugin_install import PluginCommandError

    root = session.workspace.root
    try:
        words = shlex.split(arg)
    except ValueError as exc:
        return f"{str(exc).capitalize()}. {USAGE}", True
    if words in ([], ["list"]):
        loaded = [visible(f"  {p.key}  {p.root}") for p in session.settings.plugins]
        return "\n".join([*listing(root, "/plugin"), *(["Loaded in this session:", *loaded] if loaded else [])]), False
    if {"help", "-h", "--help"} & set(words):
        return USAGE, False
    try:
        args = build_parser(raising=True).parse_args(words)
    except UsageError as exc:
        return visible(f"{str(exc)[:1].upper()}{str(exc)[1:]}. {USAGE}"), True
    try:
        lines = await perform(
            args,
            root,
            ask,
            clone_max_mb=session.settings.plugin_clone_max_mb,
            command="/plugin",
            scope_note="; it takes effect in your next session",
        )
    except PluginCommandError as exc:  # written to follow "agentcli: ", so it starts in lower case
        return visible(f"{str(exc)[:1].upper()}{str(exc)[1:]}."), True
    except OSError as exc:
        return visible(f"Could not change the plugin files: {exc.strerror or exc} ({exc.filename})."), True
    return visible("\n".join(lines)), False
