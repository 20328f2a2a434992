"""Agent types: what a subagent of each kind may use, and how it is told to work.

Three are built in (general-purpose, explore, bash). More come from Markdown files with a
frontmatter block, whose body is the type's system prompt:

- ``.agentcli/agents/*.md`` in the workspace (project),
- ``.claude/agents/*.md`` in the workspace (Claude Code's project agents; tool names are mapped),
- ``<config_home>/agents/*.md`` (user).

A project file overrides a user file of the same name, and a user file overrides a built-in.
A file that cannot be used is skipped with one warning that names it and says why.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import paths
from ..model.catalogue import resolve_model
from ..tool_facts import KNOWN  # each tool's own facts: its Claude Code names, what comes with it
from .definitions import Definition, from_folders, from_plugins
from .frontmatter import definition_files, split_frontmatter
from .plugins import Plugin, plugin_files

if TYPE_CHECKING:
    from ..tools import ToolRegistry


def __getattr__(name: str) -> tuple[str, ...]:
    """Views of the tools' facts, read when first asked (the tools load with a session, not with agent files):
    ``TOOL_NAMES`` every tool a subagent can be given by name (never task), ``READ_TOOLS`` the tools that read
    files which Claude Code has too (read_file, grep, glob), ``GIT_TOOLS`` those it has not (the git tools)."""
    from .tool_catalogue import catalogue

    if name not in ("TOOL_NAMES", "READ_TOOLS", "GIT_TOOLS"):  # the import system asks for __path__ and the like
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    known = catalogue()
    views: dict[str, Callable[[], tuple[str, ...]]] = {
        "TOOL_NAMES": known.for_agents,
        "READ_TOOLS": lambda: tuple(name for name in known.reading() if known.claude_name(name) != name),
        "GIT_TOOLS": lambda: tuple(name for name in known.reading() if known.claude_name(name) == name),
    }
    return views[name]()


# Model aliases Claude Code agent files use.

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class AgentType:
    """A kind of subagent the task tool can start: its name, description, tools, model and prompt."""

    name: str
    description: str
    tools: tuple[str, ...] | None = None  # None: every tool but task
    disallowed_tools: tuple[str, ...] = ()
    model: str = "inherit"
    max_turns: int | None = None  # at most the configured ceiling
    timeout: float | None = None  # seconds; at most the configured ceiling
    token_budget: int | None = None  # tokens (as the footer counts them) at which a child is asked to wrap up
    cost_budget: float | None = None  # likewise in USD
    prompt: str = ""  # added to the subagent system prompt
    memory: bool = False  # whether the project memory (AGENTS.md, CLAUDE.md) reaches it: see changes_things
    isolation: str | None = None  # "worktree": it works in its own git worktree (core/storage/worktrees.py)
    source: str = "built-in"  # "built-in", or the file it came from
    project: bool = False  # from the workspace's own files (not the user's folder)
    skills: tuple[str, ...] | None = None  # the skills it may load; None: every skill of the session

    def select(self, tools: ToolRegistry) -> ToolRegistry:
        """The part of ``tools`` this type may use."""
        wanted = self.tools
        if wanted is not None:
            wanted = KNOWN.with_companions(wanted)
        offered = tools.for_subagents()
        chosen = offered if wanted is None else offered.only(wanted)
        unwanted = KNOWN.with_companions(self.disallowed_tools)
        chosen = chosen.without(*unwanted)
        from .tool_catalogue import catalogue

        skills = catalogue().role("skills")  # a type that lists its skills gets the skill tool with only those
        skill = tools.get(skills)
        if self.skills is not None and skill is not None and skills not in unwanted:
            if self.skills:
                chosen.add(skill.narrowed(self.skills))  # type: ignore[attr-defined]  # skills.SkillTool: only those
            else:
                chosen = chosen.without(skills)  # `skills: []`: none
        return chosen

    def may_use(self, name: str) -> bool:
        """Whether this type is given the tool ``name`` (when the session has it)."""
        return (self.tools is None or name in self.tools) and name not in self.disallowed_tools

    def tools_text(self) -> str:
        """The tools, as a person would read them."""
        text = "all tools but task" if self.tools is None else ", ".join(self.tools) or "no tools"
        if self.disallowed_tools:
            text += f" (except {', '.join(self.disallowed_tools)})"
        return text


# Which children get the project memory: those that change files or run commands, since the conventions
# there (how to test, style, what never to touch) are about doing that; a read-only scout only looks, and
# its brief carries what it needs. The main agent's prompt says so (context.py).
def changes_things(tools: tuple[str, ...] | None, disallowed: tuple[str, ...] = ()) -> bool:
    """Whether a type with these tools can change files or run commands (as the tools declare: changes_things)."""
    from .tool_catalogue import catalogue

    return any((tools is None or name in tools) and name not in disallowed for name in catalogue().changing())


EXPLORE_PROMPT = """\
You are a read-only scout. Your job is to locate things fast, not to explain everything.
- Start broad and cheap: grep with output_mode 'files_with_matches' or glob, then narrow down.
- Read only the lines that settle the question (read_file with offset and limit).
- Answer with path:line for every claim, most relevant first, one short line each.
- Stop as soon as the question is answered."""
BASH_PROMPT = """\
You run commands for the agent that sent you: builds, tests, linters, scripts.
- Run the command you were asked to run; read its output carefully.
- Report the outcome first: passed or failed, with counts.
- For failures, quote the few lines that matter (test name, assertion, path:line), not the whole log.
- Change files only when the brief asks you to."""


@functools.cache
def _built_in() -> tuple[AgentType, ...]:
    from .tool_catalogue import catalogue

    known = catalogue()
    return (
        AgentType(
            name="general-purpose",
            memory=True,
            description="Researches a question or does a multi-step errand, with every tool but task.",
        ),
        AgentType(
            name="explore",
            tools=known.given_to("explore"),
            prompt=EXPLORE_PROMPT,
            description="Read-only scout: finds where something is defined, handled or used; answers with path:line.",
        ),
        AgentType(
            name="bash",
            tools=known.given_to("bash"),
            prompt=BASH_PROMPT,
            memory=True,
            description="Runs builds, tests and other commands, fixes what they need, reports the outcome.",
        ),
    )


BUILT_IN_NAMES = ("general-purpose", "explore", "bash")  # known without the tools (the trust check reads them)


def built_in() -> dict[str, AgentType]:
    """The built-in agent types, by name. Explore's and bash's tools are those that say they are given to it
    (``Tool.built_in_types``), read when first asked: the tools load with a session, not with agent files."""
    return {agent_type.name: agent_type for agent_type in _built_in()}


REVIEWER_PREFIX = (
    "review-"  # an agent file named review-<concern> is a reviewer of /review (review.py), not the task tool's
)


class AgentFileError(ValueError):
    """An agent file cannot be used; the message says why."""


def agent_dirs(root: Path | None) -> list[Path]:
    """Where agent files live, lowest precedence first: user, then Claude Code's project folder, then project."""
    dirs = [paths.config_home() / "agents"]
    if root is not None:
        dirs += [root / ".claude" / "agents", root / ".agentcli" / "agents"]
    return dirs


def load_agent_types(
    root: Path | str | None = None,
    warnings: list[str] | None = None,
    *,
    trusted: bool = False,
    sources: Collection[str] = ("user", "project"),
    plugins: Sequence[Plugin] = (),
    with_built_in: bool = True,
) -> dict[str, AgentType]:
    """The agent types available in a workspace, by name: built-ins first, then custom types by name.

    A project file overrides a user file of the same name, and a user file overrides a built-in.
    A project file may replace a built-in (a read-only ``explore`` that could write) only when the
    workspace is ``trusted``; otherwise it is skipped. Each skipped file, and each built-in
    replaced, adds one sentence to ``warnings`` when a list is given. ``sources``: Claude Code's
    setting sources whose agent files load, "user" (your folder) and "project" (the workspace's). ``plugins``:
    enabled plugins, whose agent files come as ``<plugin>:<name>`` (engine/plugins.py).
    """
    found: list[str] = [] if warnings is None else warnings
    types = built_in() if with_built_in else {}  # without: the trust check's, which loads no tool
    custom: dict[str, AgentType] = {}
    base = Path(root).resolve() if root is not None else None
    folders = [(folder, base is not None and folder.is_relative_to(base)) for folder in agent_dirs(base)]
    here: dict[str, AgentType] = {}  # one folder's: a name twice in one folder is a mistake, in two an override
    folder = None
    for agent_type, definition in from_folders(
        folders,
        base,
        kind="agent",
        label="agent file",
        sources=sources,
        list_files=_agent_files,
        parse=_parse(found),
        warnings=found,
    ):
        if definition.folder != folder:
            custom.update(here)
            here, folder = {}, definition.folder
        if definition.project and not trusted and agent_type.name in BUILT_IN_NAMES:
            found.append(
                f"Skipped agent file {definition.shown}: '{agent_type.name}' is a built-in agent type, "
                "and a workspace's own files may replace one only once you trust the workspace."
            )
            continue
        if agent_type.name in here:
            found.append(
                f"Skipped agent file {definition.shown}: {here[agent_type.name].source} already defines "
                f"'{agent_type.name}'."
            )
            continue
        here[agent_type.name] = agent_type
    custom.update(here)
    for agent_type, definition in from_plugins(
        plugins,
        lambda plugin, found: plugin_files(plugin, "agents", found),
        label="agent file",
        parse=_parse(found),
        warnings=found,
        fill_root=False,
    ):
        assert definition.plugin is not None
        name = f"{definition.plugin.name}:{agent_type.name}"
        custom[name] = dataclasses.replace(agent_type, name=name)
    for name in sorted(custom):
        if name in BUILT_IN_NAMES:
            found.append(
                f"The agent type '{name}' comes from {custom[name].source}, which replaces the built-in "
                f"one (tools: {custom[name].tools_text()})."
            )
        types[name] = custom[name]
    return types


def _agent_files(folder: Path, bases: tuple[Path, ...], where: str, warnings: list[str]) -> list[Path]:
    return definition_files(folder, bases, where)


def _parse(notes: list[str]) -> Callable[[Definition], AgentType]:
    """An agent file's parser that adds its notes (fields ignored) to ``notes``."""

    def parse(definition: Definition) -> AgentType:
        agent_type = parse_agent_file(definition.text, source=definition.shown, notes=notes)
        return dataclasses.replace(agent_type, project=definition.project)

    return parse


def trust_sources(root: Path) -> list[tuple[Path, list[str], Any]]:
    """For the trust check: the workspace's agent files that would replace a built-in agent type."""
    base = root.resolve()
    return [
        (
            base / agent_type.source,
            [f"agent type {agent_type.name} replaces the built-in one (tools: {agent_type.tools_text()})"],
            {key: value for key, value in dataclasses.asdict(agent_type).items() if key != "source"},
        )
        for agent_type in load_agent_types(base, [], trusted=True, with_built_in=False).values()
        if agent_type.project and agent_type.name in BUILT_IN_NAMES
    ]


def parse_agent_file(text: str, *, source: str, notes: list[str] | None = None) -> AgentType:
    """One agent type from the text of its file. Raises AgentFileError or FrontmatterError.

    Claude Code's tool names (Read, Grep, ...) are mapped to agentcli's; names agentcli does not
    have are left out, with a note in ``notes``.
    """
    meta, body = split_frontmatter(text)
    fields = {_field_name(key): value for key, value in meta.items()}
    name = _required_text(fields, "name")
    if not NAME.fullmatch(name):
        raise AgentFileError(f"the name {name!r} may only use letters, digits, '-', '_' and '.'")
    description = _required_text(fields, "description")
    unknown: list[str] = []
    tools = _tool_list(fields.get("tools"), "tools", unknown)
    disallowed = _tool_list(fields.get("disallowed_tools"), "disallowed_tools", unknown) or ()
    if unknown and notes is not None:
        notes.append(f"Agent file {source}: leaving out tools agentcli does not have: {', '.join(unknown)}.")
    model = _optional_text(fields, "model") or "inherit"
    return AgentType(
        name=name,
        description=" ".join(description.split()),
        tools=tools,
        disallowed_tools=tuple(disallowed),
        model=model if model == "inherit" else resolve_model(model),
        max_turns=_positive(fields, "max_turns", whole=True),
        timeout=_positive(fields, "timeout", whole=False),
        token_budget=_positive(fields, "token_budget", whole=True),
        cost_budget=_positive(fields, "cost_budget", whole=False),
        prompt=body,
        memory=_flag(fields, "memory") if "memory" in fields else changes_things(tools, tuple(disallowed)),
        isolation=_isolation(fields),
        source=source,
        skills=_names(fields.get("skills"), "skills"),
    )


# What an agent definition given as data (Claude Code's --agents JSON, the Agent SDK's ``agents=``) may
# hold that agentcli reads; the other fields it names are left out with a note.
DEFINITION_FIELDS = {"description", "prompt", "tools", "disallowed_tools", "model", "max_turns"}


def agent_from_definition(name: str, spec: Any, *, source: str, notes: list[str] | None = None) -> AgentType:
    """One agent type from a definition given as data: ``{"description": …, "prompt": …, "tools": […],
    "model": …}``, as an agent file's fields. Raises AgentFileError with one sentence."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise AgentFileError(f"the agent name {name!r} may only use letters, digits, '-', '_' and '.'")
    if not isinstance(spec, dict):
        raise AgentFileError(f"the agent {name!r} must be an object with a description and a prompt")
    fields = {_field_name(key): value for key, value in spec.items() if value is not None}
    ignored = sorted(key for key in spec if _field_name(key) not in DEFINITION_FIELDS and spec[key] is not None)
    unknown: list[str] = []
    tools = _tool_list(fields.get("tools"), "tools", unknown)
    disallowed = _tool_list(fields.get("disallowed_tools"), "disallowed_tools", unknown) or ()
    if notes is not None and (unknown or ignored):
        left = [f"the tools {', '.join(unknown)}"] if unknown else []
        left += [f"the fields {', '.join(ignored)}"] if ignored else []
        notes.append(f"Agent {name} ({source}): agentcli leaves out {' and '.join(left)}, which it does not have.")
    model = _optional_text(fields, "model") or "inherit"
    prompt = fields.get("prompt", "")
    if not isinstance(prompt, str):
        raise AgentFileError(f"the prompt of the agent {name!r} must be text")
    return AgentType(
        name=name,
        description=" ".join(_required_text(fields, "description").split()),
        tools=tools,
        disallowed_tools=tuple(disallowed),
        model=model if model == "inherit" else resolve_model(model),
        max_turns=_positive(fields, "max_turns", whole=True),
        prompt=prompt.strip(),
        memory=changes_things(tools, tuple(disallowed)),
        source=source,
    )


# ---------------------------------------------------------------- fields


def _field_name(key: str) -> str:
    """maxTurns, max-turns and max_turns all mean max_turns."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", key).replace("-", "_").lower()


def _required_text(fields: dict[str, Any], key: str) -> str:
    value = fields.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise AgentFileError(f"the required field '{key}' is missing")
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise AgentFileError(f"'{key}' must be text")
    return str(value).strip()


def _optional_text(fields: dict[str, Any], key: str) -> str | None:
    value = fields.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise AgentFileError(f"'{key}' must be text, not {value!r}")
    return value.strip() or None


def _tool_list(value: Any, key: str, unknown: list[str]) -> tuple[str, ...] | None:
    """A tools field, given as 'a, b' or a list, in agentcli's names; None when absent."""
    from .tool_catalogue import catalogue

    if value is None:
        return None
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value]
    else:
        raise AgentFileError(f"'{key}' must be a comma-separated list of tool names, or a list of them")
    items = [item for item in items if item]
    if not items and key == "tools":
        return None
    names: list[str] = []
    for item in items:
        bare = item.split("(", 1)[0].strip()  # Claude Code permission forms like Bash(npm test:*)
        if bare == "*":
            return None
        name = catalogue().named(bare) or bare  # as Claude Code names them in .claude/agents files
        if name.lower() == catalogue().role("delegate"):  # subagents never start subagents
            continue
        if name.startswith("mcp__") and len(name) > 5:  # an MCP server's tool, or all of a server's
            if name not in names:
                names.append(name)
        elif name not in __getattr__("TOOL_NAMES"):
            if item not in unknown:
                unknown.append(item)
        elif name not in names:
            names.append(name)
    return tuple(names)


def _names(value: Any, key: str) -> tuple[str, ...] | None:
    """A list of names given as 'a, b' or a list; None when absent."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise AgentFileError(f"'{key}' must be a comma-separated list of names, or a list of them")
    return tuple(item.strip() for item in items if item.strip())


def _positive(fields: dict[str, Any], key: str, *, whole: bool) -> Any:
    value = fields.get(key)
    if value is None:
        return None
    kind = "a whole number" if whole else "a number of US dollars" if key == "cost_budget" else "a number of seconds"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not float(value).is_integer()):
        raise AgentFileError(f"'{key}' must be {kind}, not {value!r}")
    if value <= 0:
        raise AgentFileError(f"'{key}' must be positive, not {value}")
    return int(value) if whole else float(value)


def _isolation(fields: dict[str, Any]) -> str | None:
    value = fields.get("isolation")
    if value in (None, "", "none"):
        return None
    if value != "worktree":
        raise AgentFileError(f"'isolation' can only be worktree, not {value!r}")
    return "worktree"


def _flag(fields: dict[str, Any], key: str) -> bool:
    value = fields.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise AgentFileError(f"'{key}' must be true or false, not {value!r}")
    return value
