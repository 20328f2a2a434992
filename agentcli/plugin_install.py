"""Adding marketplaces and installing plugins, into the files Claude Code keeps (``agentcli/plugins.py``), so
what one of the two installs the other runs.

A marketplace and a plugin are a stranger's repository. They are cloned with the hardened git runner
(``core/system/git.py``: no hooks, no submodules, no command-running transports, at most ``plugin_clone_max_mb``
written), into a temporary folder beside where they go, and moved there only once whole; copied without following
a symbolic link; and nothing in them runs while they are installed: installing says what the plugin would run
(``Plugin.brings``), and its hooks and MCP servers run only in a session, in the OS sandbox.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .core.engine.plugins import Plugin, PluginError, read_plugin
from .core.errors import ToolError
from .core.system import clones, git
from .plugin_sources import GITHUB, clone_cap, fetch_source
from .plugin_sources import PluginCommandError as PluginCommandError
from .plugins import (
    APPROVED_ENTRY,
    MARKETPLACE_FILE,
    brings,
    installed,
    known_marketplaces,
    marketplace_entries,
    plugin_entry,
    plugins_home,
    read_json,
    settings_file,
)

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write through a temporary file and a rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- marketplaces


def add_marketplace(source: str, max_bytes: int) -> str:
    """Add a marketplace: a local folder (used where it is), else a git repository (a URL, a path, or GitHub's
    owner/name), cloned (at most ``max_bytes``) into Claude Code's marketplaces folder. Returns its name."""
    folder = Path(source).expanduser()
    if folder.is_dir() and (folder / MARKETPLACE_FILE).is_file():
        location = folder.resolve()
        recorded: dict[str, Any] = {"source": "directory", "path": str(location)}
        name = _marketplace_name(location)
    else:
        url = f"https://github.com/{source}.git" if GITHUB.fullmatch(source) and not folder.exists() else source
        recorded = {"source": "github", "repo": source} if url != source else {"source": "git", "url": source}
        home = plugins_home() / "marketplaces"
        home.mkdir(parents=True, exist_ok=True)
        with _cloned(url, home, f"the marketplace {source}", max_bytes) as clone:
            name = _marketplace_name(clone)
            location = home / name
            if location.exists():
                raise PluginCommandError(
                    f"a marketplace named {name} is already added; 'agentcli plugin marketplace "
                    f"update {name}' refreshes it"
                )
            clone.rename(location)
    known = known_marketplaces()
    if name in known and known[name].get("installLocation") != str(location):
        raise PluginCommandError(f"a marketplace named {name} is already added from elsewhere; remove it first")
    known[name] = {"source": recorded, "installLocation": str(location), "lastUpdated": now()}
    write_json(plugins_home() / "known_marketplaces.json", known)
    return name


@contextlib.contextmanager
def _cloned(url: str, beside: Path, what: str, max_bytes: int, branch: str = "") -> Iterator[Path]:
    """A shallow clone of ``url`` (``what``, named with its source) in a temporary folder in ``beside``, for the
    caller to move into place; what is left of it (all of it when cloning failed or went past ``max_bytes``) is
    removed afterwards."""
    temp = Path(tempfile.mkdtemp(dir=beside, prefix=".cloning-"))
    try:
        with clone_cap(what, max_bytes):
            error = clones.clone(url, temp / "clone", max_bytes, shallow=True, branch=branch)
        if error:
            raise PluginCommandError(f"cannot clone {what}: {error}")
        yield temp / "clone"
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _marketplace_name(location: Path) -> str:
    data = read_json(location / MARKETPLACE_FILE)
    name = data.get("name")
    if not data or not isinstance(data.get("plugins"), list):
        raise PluginCommandError(f'{location} has no usable {MARKETPLACE_FILE} (a JSON object with a "plugins" list)')
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise PluginCommandError(f"the marketplace name {name!r} may only use letters, digits, '-', '_' and '.'")
    return name


def update_marketplace(name: str, max_bytes: int) -> None:
    """Bring a cloned marketplace to its newest commit (a local folder is read where it is): cloned afresh, at most
    ``max_bytes``, beside the one it replaces, which stays as it was until the new one is whole."""
    entry = _marketplace(name)
    location = Path(entry["installLocation"])
    if entry.get("source", {}).get("source") in ("git", "github"):
        try:
            url, branch = git.origin(location)
        except ToolError as exc:
            raise PluginCommandError(f"cannot update the marketplace {name}: {exc}") from None
        with _cloned(url, location.parent, f"the marketplace {name} from {url}", max_bytes, branch) as clone:
            old = clone.parent / "replaced"
            location.rename(old)
            try:
                clone.rename(location)
            except OSError:
                old.rename(location)
                raise
    known = known_marketplaces()
    known[name] = {**entry, "lastUpdated": now()}
    write_json(plugins_home() / "known_marketplaces.json", known)


def remove_marketplace(name: str) -> None:
    entry = _marketplace(name)
    known = known_marketplaces()
    del known[name]
    write_json(plugins_home() / "known_marketplaces.json", known)
    location = Path(entry["installLocation"])
    if location.parent == plugins_home() / "marketplaces":  # a clone of ours, never the user's own folder
        shutil.rmtree(location, ignore_errors=True)


def _marketplace(name: str) -> dict[str, Any]:
    entry = known_marketplaces().get(name)
    if entry is None or not isinstance(entry.get("installLocation"), str):
        raise PluginCommandError(f"no marketplace named {name}; 'agentcli plugin marketplace list' shows them")
    return entry


# ---------------------------------------------------------------- plugins


@dataclass(frozen=True)
class Installed:
    plugin: Plugin
    brings: list[str]
    version: str = ""


def split_key(spec: str) -> tuple[str, str]:
    """``name@marketplace`` as its two parts; a bare name is looked up in every known marketplace."""
    name, _, market = spec.partition("@")
    if market:
        return name, market
    having = [
        m
        for m, entry in known_marketplaces().items()
        if any(e.get("name") == name for e in marketplace_entries(Path(str(entry.get("installLocation")))))
    ]
    if len(having) != 1:
        raise PluginCommandError(
            f"no marketplace offers {name}"
            if not having
            else f"{name} is offered by {', '.join(having)}; say which as {name}@MARKETPLACE"
        )
    return name, having[0]


@dataclass
class Prepared:
    """A plugin copied into Claude Code's cache but not yet recorded or enabled: what installing asks about.
    ``finish`` records and enables it; ``drop`` leaves things as they were. While it waits, the copy recorded at
    ``dest`` (the same version installed before) stays as the user said yes to: the new one waits in ``staged``."""

    key: str
    dest: Path
    sha: str
    done: Installed
    staged: Path  # where the new copy waits: ``dest`` itself when nothing was there, else a folder beside it
    made: tuple[int, int]  # that folder's (device, inode): at ``dest``, another install of the version may replace it

    def finish(self, scope: str, root: Path) -> Installed:
        if self.staged != self.dest:  # the copy the user said yes to takes the recorded one's place only now
            old = Path(tempfile.mkdtemp(dir=self.dest.parent, prefix=".replaced-")) / self.dest.name
            with contextlib.suppress(FileNotFoundError):  # (another install of the version, not kept, removed it)
                self.dest.rename(old)
            self.staged.rename(self.dest)
            for gone in (old.parent, self.staged.parent):
                shutil.rmtree(gone, ignore_errors=True)
            plugin = read_plugin(self.dest, key=self.key, entry=plugin_entry(self.key, self.dest))
            self.done = Installed(plugin, brings(plugin), self.done.version)
        record: dict[str, Any] = {
            "scope": scope,
            "installPath": str(self.dest),
            "version": self.done.version,
            "installedAt": now(),
            "lastUpdated": now(),
            **({"gitCommitSha": self.sha} if self.sha else {}),
        }
        if scope != "user":
            record["projectPath"] = str(root.resolve())
        _record(self.key, record, scope, root)
        set_enabled(self.key, True, scope, root)
        return self.done

    def drop(self) -> None:
        if self.staged == self.dest and _identity(self.dest) != self.made:
            return  # another install of the same version replaced it meanwhile (and may have recorded it): not ours
        _discard(self.staged, self.dest)


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        found = folder.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _discard(staged: Path, dest: Path) -> None:
    """Remove a new copy that was not kept (the recorded one at ``dest``, if any, was never touched)."""
    shutil.rmtree(staged if staged == dest else staged.parent, ignore_errors=True)


def prepare(spec: str, max_bytes: int) -> Prepared:
    """Copy a plugin from its marketplace into Claude Code's cache and read what it brings, recording nothing
    (blocking: it may clone, at most ``max_bytes``). PluginCommandError when it cannot be had or used."""
    name, market = split_key(spec)
    key = f"{name}@{market}"
    if not NAME.fullmatch(name) or not NAME.fullmatch(market):
        raise PluginCommandError(f"{key!r} is not a plugin name (letters, digits, '-', '_', '.', then @MARKETPLACE)")
    location = Path(_marketplace(market)["installLocation"])
    entry = next((e for e in marketplace_entries(location) if e.get("name") == name), None)
    if entry is None:
        raise PluginCommandError(f"the marketplace {market} has no plugin {name}")
    cache = plugins_home() / "cache" / market / name
    cache.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(dir=cache, prefix=".installing-"))
    try:
        sha = fetch_source(entry.get("source"), location, temp / "plugin", name, max_bytes)
        if (temp / "plugin" / APPROVED_ENTRY.parent).is_symlink():
            raise PluginCommandError(f"the plugin {key} cannot be used: its {APPROVED_ENTRY.parent} is a link")
        write_json(temp / "plugin" / APPROVED_ENTRY, entry)  # what the user is shown: a later marketplace adds nothing
        manifest = read_json(temp / "plugin" / ".claude-plugin" / "plugin.json")
        version = next(
            (
                v
                for v in (entry.get("version"), manifest.get("version"), sha[:12])
                if isinstance(v, str) and NAME.fullmatch(v)
            ),
            "unknown",
        )
        dest = cache / version
        staged = dest if not dest.exists() else Path(tempfile.mkdtemp(dir=cache, prefix=".staged-")) / version
        (temp / "plugin").rename(staged)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        for folder in (cache, cache.parent):  # the plugin's and its marketplace's, if made for this try alone
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    shutil.rmtree(temp, ignore_errors=True)
    try:
        plugin = read_plugin(staged, key=key, entry=entry)
        brought = brings(plugin)
    except PluginError as exc:
        _discard(staged, dest)
        raise PluginCommandError(f"the plugin {key} cannot be used: {exc}") from None
    return Prepared(key, dest, sha, Installed(plugin, brought, version), staged, _identity(staged) or (0, 0))


def _record(key: str, record: dict[str, Any], scope: str, root: Path) -> None:
    table = installed()
    base = str(root.resolve())
    kept = [
        e
        for e in table.get(key, [])
        if not (e.get("scope") == scope and (scope == "user" or e.get("projectPath") == base))
    ]
    table[key] = [*kept, record]
    write_json(plugins_home() / "installed_plugins.json", {"version": 2, "plugins": table})


def set_enabled(key: str, on: bool | None, scope: str, root: Path) -> None:
    """Set ``enabledPlugins[key]`` in the scope's Claude Code settings file (None: remove it), keeping the rest."""
    path = settings_file(scope, root)
    data = read_json(path)
    if path.exists() and not data:
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise PluginCommandError(f"{path} is not a JSON object; fix it first") from None
    table = data.get("enabledPlugins")
    table = dict(table) if isinstance(table, dict) else {}
    if on is None:
        table.pop(key, None)
    else:
        table[key] = on
    write_json(path, {**data, "enabledPlugins": table})


def require_installed(spec: str, root: Path) -> str:
    """The key of an installed plugin (a bare name when only one installed plugin has it)."""
    keys = [k for k in installed() if k == spec or k.split("@")[0] == spec]
    if len(keys) == 1:
        return keys[0]
    if keys:
        raise PluginCommandError(f"{spec} is installed from {', '.join(keys)}; say which")
    raise PluginCommandError(f"the plugin {spec} is not installed; 'agentcli plugin list' shows what is")


def uninstall(spec: str, scope: str, root: Path) -> str:
    key = require_installed(spec, root)
    table = installed()
    base = str(root.resolve())
    gone = [
        e for e in table.get(key, []) if e.get("scope") == scope and (scope == "user" or e.get("projectPath") == base)
    ]
    if not gone:
        raise PluginCommandError(f"{key} is not installed in the {scope} scope here")
    table[key] = [e for e in table[key] if e not in gone]
    if not table[key]:
        del table[key]
    write_json(plugins_home() / "installed_plugins.json", {"version": 2, "plugins": table})
    still = {e.get("installPath") for entries in table.values() for e in entries}
    for entry in gone:
        path = Path(str(entry.get("installPath")))
        if str(path) not in still and (plugins_home() / "cache") in path.parents:
            shutil.rmtree(path, ignore_errors=True)
    set_enabled(key, None, scope, root)
    return key
