"""Custom slash commands: Markdown prompt templates, as Claude Code reads them.

``/NAME ARGS`` runs the file ``NAME.md`` found (lowest precedence first) in
``<config_home>/commands/``, the workspace's ``.claude/commands/`` and its ``.agentcli/commands/``
(subfolders included; the name is the file name). An optional frontmatter block sets:

- ``description``: what /help, completion and the palette show;
- ``argument-hint``: how to call it, such as ``[file] [focus]``;
- ``allowed-tools``: permission rules (``Bash(git diff:*)``, ``Read``) that run without asking
  while the command's turn runs. From a workspace's own files they act only once the workspace
  is trusted (``agentcli/trust.py``); from the user's folder always;
- ``model``: the model for the command's turn.

The body is the prompt. ``$ARGUMENTS`` becomes everything after the name, ``$1``, ``$2``… the
words of it (quotes group words). A body that uses neither gets ``ARGUMENTS: …`` appended.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import paths
from .definitions import Definition, from_folders, from_plugins
from .frontmatter import FrontmatterError, definition_files, split_frontmatter
from .plugins import Plugin, plugin_files

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9][0-9]*)")
# Claude Code's docs write `argument-hint: [pr-number] [priority]`, which is no YAML: read it as text.
HINT_LINE = re.compile(r"^(argument[-_]hint:[ \t]*)(\[.*?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class CustomCommand:
    """A command file's slash command: its prompt, the tools it allows and where it came from."""

    name: str
    description: str
    argument_hint: str
    allowed_tools: tuple[str, ...]  # permission rules, as written
    model: str | None
    body: str
    source: str  # the file, as the user knows it
    project: bool  # from the workspace's own files (not the user's folder)

    def expand(self, arguments: str) -> str:
        """The prompt this command sends for ``arguments``."""
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unclosed quote: plain words
            words = arguments.split()
        used = False

        def fill(match: re.Match[str]) -> str:
            nonlocal used
            used = True
            if match.group(1) == "ARGUMENTS":
                return arguments
            n = int(match.group(1))
            return words[n - 1] if n <= len(words) else ""

        prompt = PLACEHOLDER.sub(fill, self.body)
        if arguments.strip() and not used:
            prompt = f"{prompt}\n\nARGUMENTS: {arguments}"
        return prompt


def command_dirs(root: Path) -> list[tuple[Path, bool]]:
    """Where command files live, lowest precedence first, each with whether it is the workspace's own."""
    return [
        (paths.config_home() / "commands", False),
        (root / ".claude" / "commands", True),
        (root / ".agentcli" / "commands", True),
    ]


def load_commands(
    root: Path,
    warnings: list[str] | None = None,
    *,
    sources: Collection[str] = ("user", "project"),
    plugins: Sequence[Plugin] = (),
) -> dict[str, CustomCommand]:
    """The custom commands of a workspace, by name; each skipped file adds one sentence to ``warnings``.
    ``sources``: Claude Code's setting sources to read, "user" (your folder) and "project" (the workspace's).
    ``plugins``: enabled plugins, whose commands come as ``/<plugin>:<name>``, and as ``/<name>`` too where
    nothing else has that name (as Claude Code offers them); ``${CLAUDE_PLUGIN_ROOT}`` in them is the plugin's
    folder."""
    found: list[str] = [] if warnings is None else warnings
    commands: dict[str, CustomCommand] = {}
    base = root.resolve()
    for command, _ in from_folders(
        command_dirs(base),
        base,
        kind="command",
        label="command file",
        sources=sources,
        list_files=_command_files,
        parse=_parse,
        warnings=found,
    ):
        commands[command.name] = command
    bare: dict[str, CustomCommand] = {}
    for command, definition in from_plugins(
        plugins,
        lambda plugin, found: plugin_files(plugin, "commands", found),
        label="command file",
        parse=_parse,
        warnings=found,
    ):
        commands[command.name] = command
        bare.setdefault(definition.path.stem, command)
    return commands | {name: command for name, command in bare.items() if name not in commands}


def _command_files(folder: Path, bases: tuple[Path, ...], where: str, warnings: list[str]) -> list[Path]:
    return definition_files(folder, bases, where, recursive=True)


def _parse(definition: Definition) -> CustomCommand:
    """A command named by its file (``/<plugin>:<file>`` for a plugin's)."""
    name = definition.path.stem if definition.plugin is None else f"{definition.plugin.name}:{definition.path.stem}"
    return parse_command(definition.text, name, definition.shown, definition.project)


def parse_command(text: str, name: str, source: str, project: bool) -> CustomCommand:
    """One command file; ValueError (FrontmatterError, RuleError) with the reason when it cannot be used."""
    if not NAME.fullmatch(name):
        raise ValueError(f"'{name}' is not a usable command name (letters, digits, '-', '_', '.', ':')")
    fields: dict[str, Any] = {}
    body = text.strip()
    if text.lstrip("\ufeff").startswith("---"):
        fields, body = split_frontmatter(HINT_LINE.sub(_quoted_hint, text, count=1))
    tools = fields.get("allowed-tools", fields.get("allowed_tools"))
    if isinstance(tools, str):
        tools = _split_rules(tools)
    if tools is None:
        tools = []
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise ValueError("'allowed-tools' must be a comma-separated list of rules, or a list of them")
    check_rules(tools)
    model = fields.get("model")
    return CustomCommand(
        name=name,
        description=_text(fields, "description") or _first_line(body),
        argument_hint=_text(fields, "argument-hint") or _text(fields, "argument_hint"),
        allowed_tools=tuple(t.strip() for t in tools if t.strip()),
        model=str(model).strip() if model else None,
        body=body,
        source=source,
        project=project,
    )


def find(commands: Mapping[str, CustomCommand], text: str) -> tuple[CustomCommand, str] | None:
    """The command ``text`` calls (``/name args``) and its arguments; None when it calls none."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].partition(" ")
    head, newline, more = head.partition("\n")
    command = commands.get(head)
    if command is None:
        return None
    return command, (more + " " + rest if newline else rest).strip()


def trust_sources(root: Path) -> list[tuple[Path, list[str], Any]]:
    """For the trust check: the workspace's command files whose ``allowed-tools`` widen permissions."""
    sources = []
    for command in load_commands(root).values():
        if command.project and command.allowed_tools:
            asks = [
                f"/{command.name} allowed-tools {rule} (runs without asking during the command)"
                for rule in command.allowed_tools
            ]
            sources.append((root.resolve() / command.source, asks, list(command.allowed_tools)))
    return sources


def check_rules(rules: list[str]) -> None:
    """Each of an allowed-tools list a permission rule (RuleError names the bad one). The rules' parser, with the
    bash parser it needs, loads for a file that has some: the trust check reads these files before the TUI's first
    screen."""
    if rules:
        from ..policy.rules import Rule

        for rule in rules:
            Rule.parse(rule)


def _split_rules(text: str) -> list[str]:
    """'Bash(git add:*), Bash(git commit:*)' → the rules; commas inside parentheses stay."""
    rules, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            rules.append(current)
            current = ""
        else:
            current += char
    return [r.strip() for r in [*rules, current] if r.strip()]


def _quoted_hint(match: re.Match[str]) -> str:
    return match.group(1) + '"' + match.group(2).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _text(fields: dict[str, Any], key: str) -> str:
    value = fields.get(key)
    if value is None:
        return ""
    if isinstance(value, list):  # argument-hint: [file] reads as a flow list
        return " ".join(f"[{item}]" for item in value)
    return str(value).strip()


def _first_line(body: str) -> str:
    line = next((line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), "")
    return line[:80]


__all__ = ["CustomCommand", "FrontmatterError", "find", "load_commands", "trust_sources"]
