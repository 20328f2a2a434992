"""Plugins in Claude Code's layout: one folder that brings commands, agents, skills, hooks, MCP servers and
language servers.

    my-plugin/
      .claude-plugin/plugin.json   {"name": "my-plugin", "version": "1.0.0", "description": …}
      commands/*.md  agents/*.md  skills/<name>/SKILL.md  hooks/hooks.json  .mcp.json  .lsp.json

``plugin.json`` may name more places for each kind (``"commands": "./extra/"`` or a list of them, ``"hooks":
"./config/hooks.json"`` or the table itself, ``"mcpServers": "./servers.json"`` or the servers themselves, and so
``"lspServers"``);
they add to the default folders, and every one must stay inside the plugin's folder. ``${CLAUDE_PLUGIN_ROOT}``
in a hook's command and in a server's command, args, env, url and headers is the plugin's folder, and the
hook or server gets it as the variable ``CLAUDE_PLUGIN_ROOT`` too.

This module reads one folder; it does not decide which plugins are enabled (``agentcli/plugins.py`` does,
from Claude Code's files). The loaders of each kind take the plugins (``agents.load_agent_types``,
``custom_commands.load_commands``, ``skills.load_skills``) and name what they bring ``<plugin>:<name>``, as
Claude Code does; like the user's own, they are offered by name and one line until used. A plugin's hooks and
MCP servers run in the OS sandbox, as a workspace's own do, with the plugin's folder readable.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..policy.hooks import EVENTS, WORKSPACE_MARK, HookConfigError, parse_hooks
from ..policy.hooks import PLUGIN_ROOT_MARK as ROOT_MARK

if TYPE_CHECKING:  # their parsers load when a plugin's servers are read, not for the trust check before the TUI
    from ..lsp.specs import ServerSpec
    from ..mcp.config import ServerConfig

MANIFEST = Path(".claude-plugin") / "plugin.json"
ROOT_VARIABLE = "CLAUDE_PLUGIN_ROOT"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
KINDS = ("commands", "agents", "skills")
COMPONENTS = (*KINDS, "hooks", "mcpServers", "lspServers", "outputStyles")  # the parts plugin.json may name
MANIFEST_CAP = 256 * 1024  # bytes of plugin.json, hooks.json or .mcp.json read at most
UNUSED_STYLES = "agentcli has no output styles: they are not applied; the rest of the plugin works"
LINE = 200  # characters of a plugin skill's description in the prompt, as an agent type's in the task tool's list


def one_line(description: str) -> str:
    """What a request carries of something a plugin brings, besides its name: one short line."""
    line = " ".join(description.split())
    return line if len(line) <= LINE else line[: LINE - 1].rstrip() + "…"


class PluginError(ValueError):
    """A plugin folder cannot be used; the message says why in one sentence."""


@dataclass(frozen=True)
class Plugin:
    """One plugin, read from its folder: its name, key, version and whose settings enabled it."""

    name: str
    root: Path  # resolved
    key: str = ""  # name@marketplace as Claude Code's settings name it; name@inline for --plugin-dir
    version: str = ""
    description: str = ""
    project: bool = False  # enabled by the workspace's own settings (so only in a trusted workspace)
    manifest: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def where(self) -> str:
        return f"the plugin {self.name}"

    def places(self, kind: str) -> list[Path]:
        """The folders (or files) a kind of definition comes from: the default folder, then what plugin.json adds."""
        named = self.manifest.get(kind)
        extra = [named] if isinstance(named, str) else named if isinstance(named, list) else []
        return [self.root / kind, *(self.inside(item) for item in extra if isinstance(item, str))]

    def inside(self, relative: str) -> Path:
        """A path plugin.json names, which must stay inside the plugin's folder; PluginError when it leads out."""
        path = (self.root / expand_root(relative, self.root)).resolve()
        if path != self.root and self.root not in path.parents:
            raise PluginError(f"{self.where}: {relative!r} leads outside its folder")
        return path

    def hooks_table(self, unknown: list[str] | None = None) -> dict[str, list[Any]]:
        """Its hooks as one settings ``hooks`` table, ``${CLAUDE_PLUGIN_ROOT}`` filled in, each group marked to run
        in the sandbox with the plugin's folder readable. PluginError when a file is malformed. Events agentcli does
        not have are left out, each named once in ``unknown``: a plugin written for a newer Claude Code still loads."""
        tables: list[Any] = []
        default = self.root / "hooks" / "hooks.json"
        if default.is_file():
            tables.append(_read_json(default, self).get("hooks"))
        named = self.manifest.get("hooks")
        for item in [named] if isinstance(named, (str, dict)) else named if isinstance(named, list) else []:
            if isinstance(item, dict):
                tables.append(item.get("hooks", item))
            elif isinstance(item, str) and self.inside(item) != default:
                tables.append(_read_json(self.inside(item), self).get("hooks"))
        merged: dict[str, list[Any]] = {}
        for table in tables:
            if table is None:
                continue
            if isinstance(table, dict):
                unknown_here = [event for event in table if event not in EVENTS]
                if unknown is not None:
                    unknown += [event for event in unknown_here if event not in unknown]
                table = {event: groups for event, groups in table.items() if event not in unknown_here}
            try:
                parse_hooks(table, self.where)
            except HookConfigError as exc:
                raise PluginError(str(exc)) from None
            for event, groups in table.items():
                merged.setdefault(event, []).extend(
                    {**_filled(group, self.root), WORKSPACE_MARK: True, ROOT_MARK: str(self.root)} for group in groups
                )
        return merged

    def servers(self) -> dict[str, ServerConfig]:
        """Its MCP servers, named ``plugin_<plugin>_<server>`` as Claude Code names them, ``${CLAUDE_PLUGIN_ROOT}``
        filled in, each to run in the sandbox with the plugin's folder readable. PluginError when malformed."""
        from ..mcp.config import McpConfigError, ServerConfig
        from ..mcp.config import parse as parse_servers

        found: dict[str, Any] = {}
        default = self.root / ".mcp.json"
        sources: list[Any] = [_read_json(default, self)] if default.is_file() else []
        named = self.manifest.get("mcpServers")
        for item in [named] if isinstance(named, (str, dict)) else named if isinstance(named, list) else []:
            sources.append(_read_json(self.inside(item), self) if isinstance(item, str) else item)
        for data in sources:
            if isinstance(data, dict):
                table = data.get("mcpServers", data)
                found.update(table if isinstance(table, dict) else {})
        try:
            parsed = parse_servers({"mcpServers": _filled(found, self.root)}, self.where)
        except McpConfigError as exc:
            raise PluginError(str(exc)) from None
        prefix = re.sub(r"[^A-Za-z0-9_-]", "_", self.name)
        return {
            f"plugin_{prefix}_{name}": ServerConfig(
                f"plugin_{prefix}_{name}",
                server.transport,
                server.source,
                server.command,
                server.args,
                (*server.env, (ROOT_VARIABLE, str(self.root))) if server.transport == "stdio" else server.env,
                server.url,
                server.headers,
                project=True,
                plugin_root=str(self.root),
            )
            for name, server in parsed.items()
        }

    def lsp_servers(self) -> list[ServerSpec]:
        """Its language servers (Claude Code's ``lspServers``: ``.lsp.json``, and what plugin.json names or holds),
        ``${CLAUDE_PLUGIN_ROOT}`` filled in, each to run in the sandbox with the plugin's folder readable, as its MCP
        servers do. PluginError when malformed."""
        from ..lsp.specs import LspConfigError
        from ..lsp.specs import parse_claude_code as parse_lsp_servers

        found: dict[str, Any] = {}
        default = self.root / ".lsp.json"
        sources: list[Any] = [_read_json(default, self)] if default.is_file() else []
        named = self.manifest.get("lspServers")
        for item in [named] if isinstance(named, (str, dict)) else named if isinstance(named, list) else []:
            if isinstance(item, str) and self.inside(item) != default:
                sources.append(_read_json(self.inside(item), self))
            elif isinstance(item, dict):
                sources.append(item)
        for data in sources:
            table = data.get("lspServers", data) if isinstance(data, dict) else None
            found.update(table if isinstance(table, dict) else {})
        try:
            parsed = parse_lsp_servers(_filled(found, self.root), self.where)
        except LspConfigError as exc:
            raise PluginError(str(exc).removesuffix(".")) from None
        return [dataclasses.replace(spec, plugin_root=str(self.root)) for spec in parsed.values()]

    def brings(self, granted: Sequence[str] = ()) -> list[str]:
        """What it brings, one line each, as installing and the trust question show it: what it offers by name,
        what its allowed-tools let run without asking (``granted``, which ``agentcli/plugins.py`` reads), then every
        hook command and MCP server that would run (raises PluginError when one is malformed)."""
        lines = []
        for kind in KINDS:
            names = sorted(
                {
                    f"{self.name}:{path.stem if kind != 'skills' else path.parent.name}"
                    for place in self.places(kind)
                    for path in _definitions(place, kind)
                }
            )
            if names:
                lines.append(f"{kind}: {', '.join(names)}")
        lines += granted
        unknown: list[str] = []
        for event, groups in self.hooks_table(unknown).items():
            for group in groups:
                matcher = group.get("matcher") or ""
                for hook in group.get("hooks", []):
                    lines.append(
                        f"{event} hook{f' on {matcher}' if matcher not in ('', '*') else ''}: "
                        f"{hook.get('command')} (runs a command)"
                    )
        lines += [f"{event} hooks (an event agentcli does not have yet: they do not run)" for event in unknown]
        lines += [f"MCP server {name}: {server.describe(values=True)}" for name, server in self.servers().items()]
        lines += [
            f"language server {spec.name}: {' '.join(spec.command)} (for {', '.join(spec.patterns)})"
            for spec in self.lsp_servers()
        ]
        styles = self.output_styles()
        if styles:
            lines.append(f"output styles: {', '.join(styles)} ({UNUSED_STYLES})")
        return lines

    def output_styles(self) -> list[str]:
        """The names of the output styles it brings (``output-styles/*.md`` and what ``outputStyles`` names),
        which agentcli does not apply: said when it is installed and when it loads."""
        named = self.manifest.get("outputStyles")
        places = [
            self.root / "output-styles",
            *(self.inside(item) for item in _as_list(named) if isinstance(item, str)),
        ]
        return sorted({f"{self.name}:{path.stem}" for place in places for path in _definitions(place, "agents")})


def read_plugin(folder: Path, *, key: str = "", project: bool = False, entry: dict[str, Any] | None = None) -> Plugin:
    """The plugin in ``folder``; PluginError with one sentence when there is none or its manifest is bad.
    A folder without ``.claude-plugin/plugin.json`` is a plugin named after the folder, as Claude Code takes it.
    ``entry``: its marketplace entry, which adds to the manifest (``with_entry``)."""
    try:
        root = folder.expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        raise PluginError(f"there is no plugin folder {folder}") from None
    if not root.is_dir():
        raise PluginError(f"{folder} is not a folder")
    manifest: dict[str, Any] = {}
    if os.path.lexists(root / MANIFEST):
        manifest = _read_json(root / MANIFEST, None, f"{folder}: its plugin.json", root)
    if entry is not None:
        manifest = with_entry(manifest, entry, folder)
    name = manifest.get("name", root.name if not key else key.split("@")[0])
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise PluginError(f"{folder}: the plugin name {name!r} may only use letters, digits, '-', '_' and '.'")
    version, description = manifest.get("version"), manifest.get("description")
    return Plugin(
        name=name,
        root=root,
        key=key or f"{name}@inline",
        version=version if isinstance(version, str) else "",
        description=" ".join(description.split()) if isinstance(description, str) else "",
        project=project,
        manifest=manifest,
    )


def with_entry(manifest: dict[str, Any], entry: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The manifest with what its marketplace entry says of its parts, as Claude Code reads them: by default
    (``"strict": true``) plugin.json rules and the entry's parts add to its own; with ``"strict": false`` the
    entry is the whole definition, and a plugin.json that names parts too is a conflict (PluginError)."""
    parts = {kind: entry[kind] for kind in COMPONENTS if kind in entry}
    if entry.get("strict") is False:
        own = [kind for kind in COMPONENTS if kind in manifest]
        if own:
            raise PluginError(
                f'{folder}: its marketplace entry says "strict": false, so the entry defines the '
                f"plugin, but its plugin.json names {', '.join(own)} too"
            )
        facts = {k: entry[k] for k in ("name", "version", "description") if isinstance(entry.get(k), str)}
        return {**facts, **manifest, **parts}
    merged = dict(manifest)
    for kind, value in parts.items():
        merged[kind] = [*_as_list(manifest.get(kind)), *_as_list(value)] if kind in manifest else value
    return merged


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def expand_root(text: str, root: Path) -> str:
    """``${CLAUDE_PLUGIN_ROOT}`` in ``text`` as the plugin's folder, as Claude Code fills it in."""
    return text.replace("${" + ROOT_VARIABLE + "}", str(root))


def _filled(value: Any, root: Path) -> Any:
    """``value`` (JSON data) with ``${CLAUDE_PLUGIN_ROOT}`` filled in every string."""
    if isinstance(value, str):
        return expand_root(value, root)
    if isinstance(value, list):
        return [_filled(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _filled(item, root) for key, item in value.items()}
    return value


def _read_json(path: Path, plugin: Plugin | None, shown: str = "", root: Path | None = None) -> dict[str, Any]:
    """One of a plugin's JSON files (no bigger than MANIFEST_CAP), inside its folder (``root``, else the
    plugin's) and a regular file (a FIFO would block the start), as an object; PluginError says what is wrong."""
    shown = shown or f"{plugin.where if plugin else path}: {path.name}"
    root = root or (plugin.root if plugin is not None else None)
    if root is not None:
        real = path.resolve()
        if real != root and root not in real.parents:
            raise PluginError(f"{shown} leads outside the plugin's folder")
    if not path.is_file():
        raise PluginError(f"{shown} is not a regular file")
    try:
        with path.open("rb") as f:
            data = f.read(MANIFEST_CAP + 1)
    except OSError as exc:
        raise PluginError(f"{shown} cannot be read: {(exc.strerror or str(exc)).lower()}") from None
    if len(data) > MANIFEST_CAP:
        raise PluginError(f"{shown} is larger than {MANIFEST_CAP // 1024} kB")
    try:
        parsed = json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise PluginError(f"{shown} is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise PluginError(f"{shown} must hold a JSON object")
    return parsed


def _definitions(place: Path, kind: str) -> list[Path]:
    """The definition files in one place (a folder or a file), for ``brings``: names only, never read here."""
    if kind == "skills":
        if (place / "SKILL.md").is_file():
            return [place / "SKILL.md"]
        return sorted(place.glob("*/SKILL.md")) if place.is_dir() else []
    if place.is_file():
        return [place] if place.suffix == ".md" else []
    return sorted(place.rglob("*.md") if kind == "commands" else place.glob("*.md")) if place.is_dir() else []


def plugin_files(plugin: Plugin, kind: str, warnings: list[str]) -> list[Path]:
    """The ``*.md`` definition files of ``kind`` (commands, agents) a plugin brings, each inside its folder;
    a place that leads out is skipped with one sentence in ``warnings``."""
    from .frontmatter import definition_files

    found: list[Path] = []
    try:
        places = plugin.places(kind)
    except PluginError as exc:
        warnings.append(f"Skipped the {kind} of {plugin.where}: {exc}.")
        return []
    for place in places:
        try:
            if place.is_file():
                found.append(place)
            else:
                found += definition_files(place, (plugin.root,), plugin.where, recursive=kind == "commands")
        except ValueError as exc:
            warnings.append(f"Skipped {place} of {plugin.where}: {exc}.")
    return found


def skill_places(plugin: Plugin, warnings: list[str]) -> list[Path]:
    """The folders holding a plugin's skill folders (``skills/``, and what plugin.json adds)."""
    try:
        return plugin.places("skills")
    except PluginError as exc:
        warnings.append(f"Skipped the skills of {plugin.where}: {exc}.")
        return []


__all__ = [
    "Plugin",
    "PluginError",
    "ROOT_MARK",
    "ROOT_VARIABLE",
    "expand_root",
    "one_line",
    "plugin_files",
    "read_plugin",
    "skill_places",
]
