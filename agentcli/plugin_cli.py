"""`agentcli plugin …`: Claude Code's `claude plugin …` subcommands, on the same files (docs/plugins.md).

    agentcli plugin marketplace add SOURCE | list | update [NAME] | remove NAME
    agentcli plugin install NAME[@MARKETPLACE] [--scope user|project|local] [-y]
    agentcli plugin list | enable | disable | uninstall | update NAME[@MARKETPLACE] [--scope …]

Exit status 0 when done, 1 when it could not be done (one sentence on stderr), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn, TextIO

from .plugins import SCOPES, enabled_keys, install_path, installed, known_marketplaces, read_json, settings_file


class UsageError(Exception):
    """A plugin command that does not parse, said in one sentence (in a session, where argparse may not exit)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser(*, raising: bool = False) -> argparse.ArgumentParser:
    """``raising``: a usage error raises UsageError rather than printing and exiting (for /plugin)."""
    p = (_Parser if raising else argparse.ArgumentParser)(
        prog="agentcli plugin", description="Plugins and marketplaces, in Claude Code's files (docs/plugins.md)."
    )
    sub = p.add_subparsers(dest="action", required=True)
    market = sub.add_parser("marketplace", help="add, list, update or remove plugin marketplaces")
    market_sub = market.add_subparsers(dest="market_action", required=True)
    market_sub.add_parser(
        "add", help="a local folder or a git repository (URL, path, or GitHub's owner/name)"
    ).add_argument("source")
    market_sub.add_parser("list", help="the marketplaces added")
    market_sub.add_parser("update", help="refresh one marketplace, or all").add_argument("name", nargs="?")
    market_sub.add_parser("remove", help="forget a marketplace").add_argument("name")
    for action, text in (
        ("install", "install a plugin from a marketplace and enable it"),
        ("uninstall", "remove an installed plugin"),
        ("enable", "enable an installed plugin"),
        ("disable", "disable a plugin"),
        ("update", "install a plugin's newest version"),
    ):
        one = sub.add_parser(action, help=text)
        one.add_argument("plugin", metavar="NAME[@MARKETPLACE]")
        one.add_argument(
            "-s",
            "--scope",
            choices=SCOPES,
            default="user",
            help="user (~/.claude/settings.json), project (.claude/settings.json) or local "
            "(.claude/settings.local.json)",
        )
        if action in ("install", "update"):
            one.add_argument("-y", "--yes", action="store_true", help="do not ask before installing")
    sub.add_parser("list", help="the installed plugins and whether each is enabled here")
    return p


Ask = Callable[[str], Awaitable[bool]]


def run_plugin(argv: list[str], root: Path, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from .config import load_settings
    from .plugin_sources import PluginCommandError
    from .signals import exit_code, exit_signals
    from .trust import visible  # a marketplace's strings reach these sentences: no terminal escapes of theirs

    out, err = out or sys.stdout, err or sys.stderr
    args = build_parser().parse_args(argv)
    ask = None if getattr(args, "yes", False) or not sys.stdin.isatty() else _ask
    clone_max_mb = load_settings(root).plugin_clone_max_mb  # the workspace is not trusted here: it cannot raise it
    ended_by: list[int] = []  # SIGTERM or SIGHUP: stopped as ctrl+c stops it (asyncio.run's), its clone removed

    async def until_signal() -> list[str]:
        work = asyncio.current_task()
        assert work is not None

        def on_signal(signum: int) -> None:
            ended_by.append(signum)
            work.cancel()

        with exit_signals(on_signal):
            return await perform(args, root, ask, clone_max_mb=clone_max_mb)

    try:
        lines = asyncio.run(until_signal())
    except asyncio.CancelledError:
        if not ended_by:
            raise
        print(f"agentcli: stopped by {signal.Signals(ended_by[0]).name}.", file=err)
        return exit_code(ended_by[0])
    except PluginCommandError as exc:
        print(visible(f"agentcli: {exc}."), file=err)
        return 1
    except OSError as exc:
        print(visible(f"agentcli: {exc.strerror or exc} ({exc.filename})."), file=err)
        return 1
    for line in lines:
        print(line, file=out)
    return 0


async def perform(
    args: argparse.Namespace,
    root: Path,
    ask: Ask | None,
    *,
    clone_max_mb: float,
    command: str = "agentcli plugin",
    scope_note: str = "",
) -> list[str]:
    """Do one plugin command, in a shell or a session: the lines that say what was done. ``ask``: asked with
    what a plugin brings before it is installed (None: not asked); ``clone_max_mb``: the plugin_clone_max_mb
    setting; PluginCommandError says what was not done."""
    from . import plugin_install as store
    from .core.system import clones
    from .plugin_sources import MB

    cap = int(clone_max_mb * MB)

    if args.action == "marketplace":
        if args.market_action == "add":
            before = set(known_marketplaces())

            def forget(name: str) -> None:  # added all the same as the command was stopped: not kept
                if name not in before:
                    store.remove_marketplace(name)

            name = await clones.stoppable(store.add_marketplace, args.source, cap, undo=forget)
            return [f"Added the marketplace {name}; '{command} install NAME@{name}' installs one of its plugins."]
        if args.market_action == "list":
            known = known_marketplaces()
            return [
                f"{name}  {_source(entry.get('source'))}  ({entry.get('installLocation')})"
                for name, entry in sorted(known.items())
            ] or [f"No marketplaces yet; '{command} marketplace add SOURCE' adds one."]
        if args.market_action == "update":
            updated = []
            for name in [args.name] if args.name else sorted(known_marketplaces()):
                await clones.stoppable(store.update_marketplace, name, cap)
                updated.append(f"Updated the marketplace {name}.")
            return updated
        store.remove_marketplace(args.name)
        return [f"Removed the marketplace {args.name}."]
    if args.action == "list":
        return listing(root, command)
    if args.action in ("install", "update"):
        key = store.require_installed(args.plugin, root) if args.action == "update" else args.plugin
        if args.action == "update":
            await clones.stoppable(store.update_marketplace, key.partition("@")[2], cap)
            was = read_json(settings_file(args.scope, root)).get("enabledPlugins", {})
        pending = await clones.stoppable(store.prepare, key, cap, undo=store.Prepared.drop)
        try:
            agreed = ask is None or await ask(
                "\n".join(
                    [
                        f"{pending.key} brings:",
                        *brought(pending.done.brings),
                        f"{args.action.capitalize()} it ({args.scope} scope)?",
                    ]
                )
            )
        except BaseException:  # the session ended while it asked: nothing of it stays
            pending.drop()
            raise
        if not agreed:
            pending.drop()
            raise store.PluginCommandError(f"did not {args.action} {pending.key}; nothing of it was kept")
        done = pending.finish(args.scope, root)
        if args.action == "update" and isinstance(was, dict) and was.get(done.plugin.key) is False:
            store.set_enabled(done.plugin.key, False, args.scope, root)  # an update does not turn it back on
        version = f" {done.version}" if done.version != "unknown" else ""
        return [
            f"{'Installed' if args.action == 'install' else 'Updated'} {done.plugin.key}{version} "
            f"({args.scope} scope){scope_note}.",
            *brought(done.brings),
        ]
    if args.action == "uninstall":
        return [f"Uninstalled {store.uninstall(args.plugin, args.scope, root)} ({args.scope} scope){scope_note}."]
    key = store.require_installed(args.plugin, root) if args.action == "enable" else _known_key(args.plugin, root)
    store.set_enabled(key, args.action == "enable", args.scope, root)
    return [f"{args.action.capitalize()}d {key} ({args.scope} scope){scope_note or '; a new session picks it up'}."]


def brought(lines: list[str]) -> list[str]:
    """What a plugin brings, as installing shows it."""
    from .trust import visible

    runs = any(line.endswith("(runs a command)") or line.startswith("MCP server") for line in lines)
    return ([f"  {visible(line)}" for line in lines] or ["  nothing agentcli uses"]) + (
        ["Its hooks and MCP servers run in the OS sandbox, in sessions from now on."] if runs else []
    )


async def _ask(question: str) -> bool:
    print(question.rsplit("\n", 1)[0])
    print(f"{question.rsplit(chr(10), 1)[-1]} [y/N] ", end="", flush=True)
    answer = await typed_line()
    return answer.strip().lower() in ("y", "yes")


async def typed_line() -> str:
    """The line the user types at the terminal ('' at its end: ctrl+d), read on the loop once it is there, so a
    signal meanwhile stops the command at once: input() held the loop, and the signal, until Enter; in a thread it
    held agentcli's exit after a ctrl+c."""
    loop = asyncio.get_running_loop()
    typed: asyncio.Future[None] = loop.create_future()
    terminal = sys.stdin.fileno()

    def ready() -> None:
        if not typed.done():
            typed.set_result(None)

    loop.add_reader(terminal, ready)
    try:
        await typed
    finally:
        loop.remove_reader(terminal)
    return sys.stdin.readline()


def _known_key(spec: str, root: Path) -> str:
    """For disable: an installed plugin, or one a settings file here names (it may be installed elsewhere)."""
    from .plugin_install import PluginCommandError, require_installed

    try:
        return require_installed(spec, root)
    except PluginCommandError:
        if "@" in spec:
            return spec
        raise


def listing(root: Path, command: str = "agentcli plugin") -> list[str]:
    """Each installed plugin (and each enabled here that is not), with its version, scope and state here;
    ``command``: how the user installs one where they are (the shell's, or /plugin in a session)."""
    from .trust import visible

    on = enabled_keys(root, trusted=True)
    table = installed()
    lines = []
    for key in sorted(set(table) | set(on)):
        entries = table.get(key, [])
        version = next((str(e.get("version")) for e in entries if e.get("version")), "")
        scopes = ", ".join(sorted({str(e.get("scope")) for e in entries})) or "not installed"
        state = "disabled" if key not in on else "enabled by this workspace" if on[key] else "enabled"
        where = "" if install_path(key, root) or not entries else " (its folder is missing)"
        lines.append(visible(f"{key}  {version or '-'}  {scopes}  {state}{where}"))
    return lines or [f"No plugins installed; '{command} install NAME@MARKETPLACE' installs one."]


def _source(source: object) -> str:
    if isinstance(source, dict):
        return str(source.get("repo") or source.get("url") or source.get("path") or source)
    return str(source)
