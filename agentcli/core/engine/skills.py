"""Skills: folders of instructions the model loads when it decides they apply (Claude Code's and the Agent
Skills format).

A skill is a folder holding ``SKILL.md``, and any files beside it that the instructions name. Skills are
found (lowest precedence first) in ``<config_home>/skills/``, ``~/.claude/skills/`` (the user's own, as
Claude Code keeps them), then the workspace's ``.claude/skills/`` and ``.agentcli/skills/``. ``SKILL.md``
starts with a frontmatter block:

- ``name``: lowercase letters, digits and hyphens (the folder's name when left out);
- ``description``: what it does and when to use it, the one thing the model sees before it loads it;
- ``allowed-tools``: permission rules (``Bash(pdftotext:*)``, ``Read``) that run without asking for the
  rest of the turn once the skill is loaded, as a custom command's do, inside the workspace only: a path
  outside it still asks (``Permissions.turn_rules``).

Only names and descriptions go into the system prompt (``catalog``); the ``skill`` tool loads a body
(``SkillTool``), and ``/<name>`` runs one by hand (a skill is also a custom command). A workspace's
skills are instructions from strangers: they ask for trust (``trust_sources``), and without it none of
them is loaded at all, so neither their text nor their ``allowed-tools`` reaches the model. ``SKILL.md``
is read as memory and command files are (``frontmatter.read_definition``): confined to its base, opened
without following a symlink, a regular file, capped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import paths
from .custom_commands import CustomCommand, _split_rules, check_rules
from .definitions import Definition, from_folders, from_plugins
from .frontmatter import FrontmatterError, split_frontmatter
from .plugins import Plugin, one_line, skill_places

if TYPE_CHECKING:
    from ..policy.rules import Rule

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
DESCRIPTION_CAP = 1_024  # characters of a description that reach the prompt (Agent Skills' limit)
MAX_SKILLS = 200  # skills listed in the prompt at most: a repository cannot flood it
CATALOG_CAP = 20_000  # characters of descriptions in the prompt
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class Skill:
    """A skill (a SKILL.md and the files beside it): what the model sees of it and what it allows."""

    name: str
    description: str  # on one line, capped
    allowed_tools: tuple[str, ...]  # permission rules, as written
    body: str
    folder: Path  # the skill's real folder: the files beside SKILL.md
    source: str  # SKILL.md as the user knows it
    project: bool  # from the workspace's own files (not the user's folders)

    def instructions(self, arguments: str = "") -> str:
        """What loading it gives the model: where its files are, the body, and the arguments if any."""
        text = f"Base directory for this skill: {self.folder}\n\n{self.body}"
        return f"{text}\n\nARGUMENTS: {arguments}" if arguments.strip() else text

    def as_command(self) -> CustomCommand:
        """The skill as ``/<name>``: its instructions are the prompt, its allowed-tools apply for the turn."""
        return CustomCommand(
            name=self.name,
            description=self.description,
            argument_hint="",
            allowed_tools=self.allowed_tools,
            model=None,
            body=self.instructions(),
            source=self.source,
            project=self.project,
        )


def skill_dirs(root: Path) -> list[tuple[Path, bool]]:
    """Where skill folders live, lowest precedence first, each with whether it is the workspace's own."""
    return [
        (paths.config_home() / "skills", False),
        (Path.home() / ".claude" / "skills", False),
        (root / ".claude" / "skills", True),
        (root / ".agentcli" / "skills", True),
    ]


def load_skills(
    root: Path,
    warnings: list[str] | None = None,
    *,
    trusted: bool = True,
    sources: Collection[str] = ("user", "project"),
    plugins: Sequence[Plugin] = (),
) -> dict[str, Skill]:
    """The skills this session may use, by name. Without ``trusted``, the workspace's own are left out, and
    so are those of a setting source not in ``sources`` ("user", "project"). Each skipped folder adds one
    sentence to ``warnings``. ``plugins``: enabled plugins, whose skills come as ``<plugin>:<name>``."""
    found: list[str] = [] if warnings is None else warnings
    skills: dict[str, Skill] = {}
    base = root.resolve()
    folders = [(folder, project) for folder, project in skill_dirs(base) if trusted or not project]
    for skill, _ in from_folders(
        folders,
        base,
        kind="skill",
        label="the skill",
        sources=sources,
        list_files=_skill_files,
        parse=_parse,
        warnings=found,
    ):
        skills[skill.name] = skill
    singles: set[Path] = set()  # a plugin's skill place that is itself one skill: its own SKILL.md names it

    def places(plugin: Plugin, found: list[str]) -> list[Path]:
        files: list[Path] = []
        for place in skill_places(plugin, found):
            if (place / SKILL_FILE).is_file():
                singles.add(place / SKILL_FILE)
                files.append(place / SKILL_FILE)
            else:
                files += _skill_files(place, (plugin.root,), plugin.where, found)
        return files

    def parse_plugin_skill(definition: Definition) -> Skill:
        assert definition.plugin is not None
        skill = parse_skill(
            definition.text,
            definition.path,
            definition.shown,
            definition.project,
            named_by_folder=definition.path not in singles,
        )
        return dataclasses.replace(
            skill, name=f"{definition.plugin.name}:{skill.name}", description=one_line(skill.description)
        )

    for skill, _ in from_plugins(plugins, places, label="the skill", parse=parse_plugin_skill, warnings=found):
        skills[skill.name] = skill
    return skills


def _skill_files(folder: Path, bases: tuple[Path, ...], where: str, warnings: list[str]) -> list[Path]:
    """``<folder>/<skill>/SKILL.md`` for each skill folder; [] when there is no such folder. A folder that
    leads outside ``bases`` is skipped with a warning: a cloned ``.claude/skills -> /`` walks nothing."""
    try:
        real = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        return []
    if not any(real == b or b in real.parents for b in bases):
        warnings.append(f"Skipped the skill folder {folder}: it leads outside {where} (to {real}).")
        return []
    try:
        folders = [entry for entry in real.iterdir() if entry.is_dir()]
        # A SKILL.md that is a dangling or outside link is kept, for read_definition to refuse with a reason.
        return sorted(f / SKILL_FILE for f in folders if (f / SKILL_FILE).exists() or (f / SKILL_FILE).is_symlink())
    except OSError:
        return []


def _parse(definition: Definition) -> Skill:
    return parse_skill(definition.text, definition.path, definition.shown, definition.project)


def parse_skill(text: str, path: Path, source: str, project: bool, *, named_by_folder: bool = False) -> Skill:
    """One SKILL.md; ValueError (FrontmatterError, RuleError) with the reason when it cannot be used.
    ``named_by_folder``: the folder names it, as a plugin's skills are named (their ``name`` may be a title)."""
    fields: dict[str, Any] = {}
    body = text.strip()
    if text.lstrip("\ufeff").startswith("---"):
        fields, body = split_frontmatter(text)
    name = path.parent.name if named_by_folder else fields.get("name") or path.parent.name
    if not isinstance(name, str) or not NAME.fullmatch(name.strip()):
        raise ValueError(f"{name!r} is not a usable skill name (letters, digits, '-', '_', '.'; at most 64)")
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("it has no 'description', which is how the model knows when to use it")
    description = " ".join(description.split())  # one line: a description cannot forge prompt sections
    if len(description) > DESCRIPTION_CAP:
        description = description[: DESCRIPTION_CAP - 1] + "…"
    tools = fields.get("allowed-tools", fields.get("allowed_tools"))
    tools = _split_rules(tools) if isinstance(tools, str) else tools if tools is not None else []
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise ValueError("'allowed-tools' must be a comma-separated list of rules, or a list of them")
    check_rules(tools)
    return Skill(
        name=name.strip(),
        description=description,
        allowed_tools=tuple(t.strip() for t in tools if t),
        body=body,
        folder=path.resolve().parent,
        source=source,
        project=project,
    )


def catalog(skills: Iterable[Skill]) -> str:
    """The system prompt's section: each skill's name and description, nothing of its body."""
    listed = sorted(skills, key=lambda s: s.name)[:MAX_SKILLS]
    if not listed:
        return ""
    lines: list[str] = []
    room = CATALOG_CAP
    for number, skill in enumerate(listed):
        line = f"- {skill.name}: {skill.description}"
        if len(line) > room:  # the rest by name only: a few long descriptions cannot crowd the prompt
            lines.append("- and, without their descriptions: " + ", ".join(s.name for s in listed[number:]))
            break
        lines.append(line)
        room -= len(line)
    return (
        "# Skills\nInstructions for particular tasks, loaded on demand. When the user's request matches "
        "one below, call the skill tool with its name before you start, then follow what it says.\n" + "\n".join(lines)
    )


def grants(skill: Skill, trusted: bool) -> list[Rule]:
    """The rules a loaded skill's allowed-tools add: none from a workspace's skill unless it is trusted."""
    if skill.project and not trusted:
        return []
    from ..policy.rules import Rule, RuleError

    try:
        return [Rule.parse(text) for text in skill.allowed_tools]
    except RuleError:
        return []


def trust_sources(root: Path) -> list[tuple[Path, list[str], Any]]:
    """For the trust check: every skill of the workspace (its instructions reach the model), and what its
    allowed-tools would let run without asking. The content covers the body, so an edited skill asks again."""
    sources = []
    for skill in load_skills(root).values():
        if not skill.project:
            continue
        asks = [f"skill {skill.name} (instructions the model may load: {skill.description[:80]})"]
        asks += [
            f"skill {skill.name} allowed-tools {rule} (runs without asking once loaded)" for rule in skill.allowed_tools
        ]
        digest = hashlib.sha256(skill.body.encode()).hexdigest()
        sources.append(
            (
                root.resolve() / skill.source,
                asks,
                {
                    "name": skill.name,
                    "description": skill.description,
                    "allowed_tools": list(skill.allowed_tools),
                    "body": digest,
                },
            )
        )
    return sources


__all__ = ["Skill", "FrontmatterError", "catalog", "grants", "load_skills", "trust_sources"]
