"""Which plugins are enabled, found where Claude Code keeps them, so a Claude Code user's plugins work unchanged.

Claude Code keeps plugins under ``~/.claude/plugins/`` (``$CLAUDE_CONFIG_DIR/plugins`` when that is set):

- ``known_marketplaces.json``: ``{"<marketplace>": {"source": {"source": "git", "url": …} | {"source":
  "github", "repo": "owner/name"} | {"source": "directory", "path": …}, "installLocation": …, "lastUpdated": …}}``;
- ``marketplaces/<marketplace>/``: a clone of each marketplace from git, with ``.claude-plugin/marketplace.json``;
- ``installed_plugins.json``: ``{"version": 2, "plugins": {"<plugin>@<marketplace>": [{"scope": "user" |
  "project" | "local", "projectPath": …, "installPath": …, "version": …, "installedAt": …, "lastUpdated": …,
  "gitCommitSha": …}]}}`` (version 1 held one object per plugin instead of a list);
- ``cache/<marketplace>/<plugin>/<version>/``: the installed copies.

A plugin runs when ``enabledPlugins`` (``{"<plugin>@<marketplace>": true}``) in Claude Code's settings says so: the
user's ``~/.claude/settings.json``, the workspace's ``.claude/settings.json`` (project) and ``.claude/settings.local.json``
(local), a later one winning. What the workspace's own files enable is a stranger's choice: it counts only in a
trusted workspace (``trust_sources`` asks), as the rest of those files. ``--plugin-dir DIR`` adds a plugin for
one run.

The language servers read ``enabled_plugin_folders``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from .core.engine.plugins import Plugin, PluginError, read_plugin
from .paths import claude_home as claude_home

SCOPES = ("user", "project", "local")
MARKETPLACE_FILE = Path(".claude-plugin") / "marketplace.json"
APPROVED_ENTRY = Path(".claude-plugin") / "agentcli-entry.json"  # the entry a copy was installed with (plugin_entry)


def plugins_home() -> Path:
    return claude_home() / "plugins"


def settings_file(scope: str, root: Path) -> Path:
    """Claude Code's settings file of a scope, where ``enabledPlugins`` is kept."""
    if scope == "user":
        return claude_home() / "settings.json"
    return root / ".claude" / ("settings.json" if scope == "project" else "settings.local.json")


JSON_CAP = 8 * 1024 * 1024  # bytes of one of these files read at most: a marketplace's is a stranger's


def brings(plugin: Plugin) -> list[str]:
    """What ``plugin`` brings, as installing and the trust question show it (``Plugin.brings``), with what its
    commands' and skills' ``allowed-tools`` let run without asking while one is in use: a widening of the
    permissions the user's yes must have seen. Raises PluginError when a part is malformed."""
    from .core.engine.custom_commands import load_commands
    from .core.engine.skills import load_skills

    rules = [
        (f"command {name}", command.allowed_tools)
        for name, command in load_commands(plugin.root, [], sources=(), plugins=[plugin]).items()
    ]
    rules += [
        (f"skill {name}", skill.allowed_tools)
        for name, skill in load_skills(plugin.root, [], sources=(), plugins=[plugin]).items()
    ]
    return plugin.brings(
        [
            f"{what} allowed-tools: {', '.join(tools)} (run without asking while it is used)"
            for what, tools in sorted(rules)
            if what.split(" ", 1)[1].startswith(f"{plugin.name}:") and tools
        ]
    )


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from a file; {} when it is missing, unreadable, larger than JSON_CAP or not an object
    (Claude Code's files are read as they are; a damaged one counts as empty rather than stopping agentcli)."""
    try:
        with path.open("rb") as f:
            raw = f.read(JSON_CAP + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= JSON_CAP else None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def known_marketplaces() -> dict[str, dict[str, Any]]:
    return {
        name: entry
        for name, entry in read_json(plugins_home() / "known_marketplaces.json").items()
        if isinstance(entry, dict)
    }


def installed() -> dict[str, list[dict[str, Any]]]:
    """installed_plugins.json as version 2 holds it: each key with its installs."""
    table = read_json(plugins_home() / "installed_plugins.json").get("plugins")
    found: dict[str, list[dict[str, Any]]] = {}
    for key, entries in (table if isinstance(table, dict) else {}).items():
        items = entries if isinstance(entries, list) else [entries]
        found[key] = [{"scope": "user", **item} for item in items if isinstance(item, dict)]
    return found


def marketplace_entries(location: Path) -> list[dict[str, Any]]:
    """The plugin entries of the marketplace at ``location`` (its ``.claude-plugin/marketplace.json``)."""
    plugins = read_json(location / MARKETPLACE_FILE).get("plugins")
    return [entry for entry in plugins if isinstance(entry, dict)] if isinstance(plugins, list) else []


def enabled_keys(root: Path, *, trusted: bool, sources: Collection[str] = SCOPES) -> dict[str, bool]:
    """The ``name@marketplace`` keys enabled here, each with whether the workspace's own files enabled it.
    Without ``trusted``, what only the workspace's files enable is left out (what they disable still is)."""
    found: dict[str, bool] = {}
    for scope in SCOPES:
        if scope not in sources:
            continue
        table = read_json(settings_file(scope, root)).get("enabledPlugins")
        for key, on in (table if isinstance(table, dict) else {}).items():
            if on is True and (scope == "user" or trusted):
                found[key] = scope != "user"
            elif on is False:
                found.pop(key, None)
    return found


def install_path(key: str, root: Path) -> Path | None:
    """Where the plugin ``key`` is installed for this workspace: its record in installed_plugins.json (a
    project or local install for this workspace first), else its folder in a known marketplace's own copy."""
    base = str(root.resolve())
    entries = sorted(installed().get(key, []), key=lambda e: e.get("projectPath") != base)
    for entry in entries:
        if entry.get("scope") in ("project", "local") and entry.get("projectPath") not in (None, base):
            continue
        path = entry.get("installPath")
        if isinstance(path, str) and Path(path).is_dir():
            return Path(path)
    listed, location = (
        marketplace_entry(key),
        known_marketplaces().get(key.partition("@")[2], {}).get("installLocation"),
    )
    source = listed.get("source") if listed is not None else None
    if isinstance(source, str) and isinstance(location, str):
        folder = (Path(location) / source).resolve()
        if folder.is_dir() and Path(location).resolve() in folder.parents:
            return folder
    return None


def plugin_entry(key: str, folder: Path) -> dict[str, Any] | None:
    """The marketplace entry the plugin in ``folder`` loads with: the one agentcli kept with the copy it installed
    (``APPROVED_ENTRY``: what the user was shown and said yes to), else its marketplace's entry as it is now (a
    copy Claude Code installed, or a plugin used where its marketplace holds it). A marketplace brought up to date
    cannot add a hook, a server or a part to a plugin installed before: installing or updating it again asks."""
    kept = folder / APPROVED_ENTRY
    if os.path.lexists(kept) and (kept.is_symlink() or folder.resolve() not in kept.resolve().parents):
        return {}  # a link, or in a folder that is one: never a file of the user's read as the entry
    return read_json(kept) if kept.is_file() else marketplace_entry(key)


def marketplace_entry(key: str) -> dict[str, Any] | None:
    """The entry of the plugin ``key`` (name@marketplace) in its known marketplace, which may add to or (with
    ``"strict": false``) make its manifest; None when the marketplace is not known or does not list it."""
    name, _, market = key.partition("@")
    location = known_marketplaces().get(market, {}).get("installLocation")
    if not isinstance(location, str):
        return None
    return next((e for e in marketplace_entries(Path(location)) if e.get("name") == name), None)


def enabled_plugins(
    root: Path,
    *,
    trusted: bool,
    dirs: Sequence[str] = (),
    sources: Collection[str] = SCOPES,
    warnings: list[str] | None = None,
) -> list[Plugin]:
    """The plugins this run loads: those enabled in Claude Code's settings and installed, then ``--plugin-dir``'s.
    Each that cannot be loaded adds one sentence to ``warnings``."""
    found: list[str] = [] if warnings is None else warnings
    plugins: dict[str, Plugin] = {}
    for key, project in enabled_keys(root, trusted=trusted, sources=sources).items():
        folder = install_path(key, root)
        if folder is None:
            found.append(f"The plugin {key} is enabled but not installed; 'agentcli plugin install {key}' installs it.")
            continue
        try:
            plugin = read_plugin(folder, key=key, project=project, entry=plugin_entry(key, folder))
        except PluginError as exc:
            found.append(f"Skipped the plugin {key}: {exc}.")
            continue
        plugins[plugin.name] = plugin
    for given in dirs:
        try:
            plugin = read_plugin(Path(given))
        except PluginError as exc:
            found.append(f"--plugin-dir: {exc}.")
            continue
        plugins[plugin.name] = plugin  # a development copy wins over the installed one of the same name
    return list(plugins.values())


def enabled_plugin_folders(root: Path, *, trusted: bool, dirs: Sequence[str] = ()) -> list[Path]:
    """The folders of the plugins enabled here (their LSP settings are for the language servers to read)."""
    return [plugin.root for plugin in enabled_plugins(root, trusted=trusted, dirs=dirs)]


def trust_sources(root: Path) -> list[tuple[Path, list[str], Any]]:
    """For the trust check: each plugin the workspace's own settings enable, with what it would run, and each
    marketplace they ask to know (``extraKnownMarketplaces``; agentcli never adds one by itself)."""
    yours = enabled_keys(root, trusted=False)  # what your own settings enable needs no trust
    own = {key for key, project in enabled_keys(root, trusted=True).items() if project and key not in yours}
    sources: list[tuple[Path, list[str], Any]] = []
    for scope in ("project", "local"):
        path = settings_file(scope, root)
        data = read_json(path)
        table = data.get("enabledPlugins")
        asks: list[str] = []
        content: dict[str, Any] = {}
        for key in sorted(k for k, on in (table if isinstance(table, dict) else {}).items() if on is True and k in own):
            folder = install_path(key, root)
            try:
                lines = (
                    brings(read_plugin(folder, key=key, project=True, entry=plugin_entry(key, folder)))
                    if folder
                    else []
                )
            except PluginError as exc:
                lines = [f"malformed: {exc}"]
            asks.append(f"plugin {key} ({'installed' if folder else 'not installed'}; enabled by this workspace)")
            asks += [f"plugin {key} {line}" for line in lines]
            content[key] = lines
        extra = data.get("extraKnownMarketplaces")
        for name, entry in sorted((extra if isinstance(extra, dict) else {}).items()):
            asks.append(
                f"marketplace {name}: {json.dumps(entry.get('source') if isinstance(entry, dict) else entry)} "
                "(add it with 'agentcli plugin marketplace add')"
            )
            content[f"marketplace {name}"] = entry
        if asks:
            sources.append((path, asks, content))
    return sources
