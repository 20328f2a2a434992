"""`agentcli plugin …`: Claude Code's `claude plugin …` subcommands, on the same files (docs/plugins.md).

    agentcli plugin marketplace add SOURCE | list | update [NAME] | remove NAME
    agentcli plugin install NAME[@MARKETPLACE] [--scope user|project|local] [-y]
    agentcli plugin list | enable | disable | uninstall | update NAME[@MARKETPLACE] [--scope …]

Exit status 0 when done, 1 when it could not be done (one sentence on stderr), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from .plugins import SCOPES, enabled_keys, install_path, installed, known_marketplaces


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentcli plugin", description="Plugins and marketplaces, in Claude Code's files (docs/plugins.md).")
    sub = p.add_subparsers(dest="action", required=True)
    market = sub.add_parser("marketplace", help="add, list, update or remove plugin marketplaces")
    market_sub = market.add_subparsers(dest="market_action", required=True)
    market_sub.add_parser("add", help="a local folder or a git repository (URL, path, or GitHub's owner/name)"
                          ).add_argument("source")
    market_sub.add_parser("list", help="the marketplaces added")
    market_sub.add_parser("update", help="refresh one marketplace, or all").add_argument("name", nargs="?")
    market_sub.add_parser("remove", help="forget a marketplace").add_argument("name")
    for action, text in (("install", "install a plugin from a marketplace and enable it"),
                         ("uninstall", "remove an installed plugin"), ("enable", "enable an installed plugin"),
                         ("disable", "disable a plugin"), ("update", "install a plugin's newest version")):
        one = sub.add_parser(action, help=text)
        one.add_argument("plugin", metavar="NAME[@MARKETPLACE]")
        one.add_argument("-s", "--scope", choices=SCOPES, default="user",
                         help="user (~/.claude/settings.json), project (.claude/settings.json) or local "
                              "(.claude/settings.local.json)")
        if action in ("install", "update"):
            one.add_argument("-y", "--yes", action="store_true", help="do not ask before installing")
    sub.add_parser("list", help="the installed plugins and whether each is enabled here")
    return p


def run_plugin(argv: list[str], root: Path, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from .plugin_install import PluginCommandError
    from .trust import visible  # a marketplace's strings reach these sentences: no terminal escapes of theirs

    out, err = out or sys.stdout, err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return _run(args, root, out)
    except PluginCommandError as exc:
        print(visible(f"agentcli: {exc}."), file=err)
        return 1
    except OSError as exc:
        print(visible(f"agentcli: {exc.strerror or exc} ({exc.filename})."), file=err)
        return 1


def _run(args: argparse.Namespace, root: Path, out: TextIO) -> int:
    from . import plugin_install as store

    if args.action == "marketplace":
        if args.market_action == "add":
            name = store.add_marketplace(args.source)
            print(f"Added the marketplace {name}; 'agentcli plugin install NAME@{name}' installs one of its plugins.",
                  file=out)
        elif args.market_action == "list":
            known = known_marketplaces()
            for name, entry in sorted(known.items()):
                print(f"{name}  {_source(entry.get('source'))}  ({entry.get('installLocation')})", file=out)
            if not known:
                print("No marketplaces yet; 'agentcli plugin marketplace add SOURCE' adds one.", file=out)
        elif args.market_action == "update":
            for name in [args.name] if args.name else sorted(known_marketplaces()):
                store.update_marketplace(name)
                print(f"Updated the marketplace {name}.", file=out)
        else:
            store.remove_marketplace(args.name)
            print(f"Removed the marketplace {args.name}.", file=out)
        return 0
    if args.action == "list":
        for line in listing(root):
            print(line, file=out)
        return 0
    if args.action in ("install", "update"):
        confirm = None if args.yes or not sys.stdin.isatty() else _ask
        done = (store.install(args.plugin, args.scope, root, confirm) if args.action == "install"
                else store.update(args.plugin, args.scope, root))
        version = f" {done.version}" if done.version != "unknown" else ""
        print(f"{'Installed' if args.action == 'install' else 'Updated'} {done.plugin.key}{version} "
              f"({args.scope} scope).", file=out)
        for line in brought(done.brings):
            print(line, file=out)
        return 0
    if args.action == "uninstall":
        print(f"Uninstalled {store.uninstall(args.plugin, args.scope, root)} ({args.scope} scope).", file=out)
        return 0
    key = store.require_installed(args.plugin, root) if args.action == "enable" else _known_key(args.plugin, root)
    store.set_enabled(key, args.action == "enable", args.scope, root)
    print(f"{args.action.capitalize()}d {key} ({args.scope} scope); a new session picks it up.", file=out)
    return 0


def brought(lines: list[str]) -> list[str]:
    """What a plugin brings, as installing shows it."""
    from .trust import visible

    runs = any(line.endswith("(runs a command)") or line.startswith("MCP server") for line in lines)
    return ([f"  {visible(line)}" for line in lines] or ["  nothing agentcli uses"]) + (
        ["Its hooks and MCP servers run in the OS sandbox, in sessions from now on."] if runs else [])


def _ask(done: object) -> bool:
    from .plugin_install import Installed

    assert isinstance(done, Installed)
    print(f"{done.plugin.key} brings:")
    for line in brought(done.brings):
        print(line)
    try:
        return input("Install it? [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _known_key(spec: str, root: Path) -> str:
    """For disable: an installed plugin, or one a settings file here names (it may be installed elsewhere)."""
    from .plugin_install import PluginCommandError, require_installed

    try:
        return require_installed(spec, root)
    except PluginCommandError:
        if "@" in spec:
            return spec
        raise


def listing(root: Path) -> list[str]:
    """Each installed plugin (and each enabled here that is not), with its version, scope and state here."""
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
    return lines or ["No plugins installed; 'agentcli plugin install NAME@MARKETPLACE' installs one."]


def _source(source: object) -> str:
    if isinstance(source, dict):
        return str(source.get("repo") or source.get("url") or source.get("path") or source)
    return str(source)
