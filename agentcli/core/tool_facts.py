"""What the rest of agentcli knows about a tool without importing it: the facts each tool declares on its own
class (``Tool`` in ``core/tools/base.py``), and the views of them that permission rules, hooks, agent files,
``--tools`` and the receipts read.

A tool class declares its facts where it is defined (``claude_name``, ``reads_files``, ``changes_things``, …);
``Tool.__init_subclass__`` hands them to ``KNOWN``, the catalogue of every tool class defined. Policy and
storage sit below the tools and import this leaf, never a tool; what they need of the call in hand they read
from the tool object the registry passes them. Nothing here names a tool: ``tests/core/test_tool_facts.py``
fails when a table of tool names is written anywhere but the tools.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

# What the engine asks a tool for by what it does, never by its name: the plan the user sees, loading a skill,
# starting a subagent, running a command line (an attempt's check).
Role = Literal["", "plan", "skills", "delegate", "commands"]


@dataclass(frozen=True)
class ToolFacts:
    """One tool's facts, as its class declares them."""

    name: str
    claude_name: str = ""  # Claude Code's name for it (Bash, Read): hooks' tool_name, rules, agent files, --tools
    claude_aliases: tuple[str, ...] = ()  # Claude Code's other names for the same tool (MultiEdit, LS, Agent)
    rule_scope: str = ""  # a Claude Code rule name that covers it besides its own (grep: Read; write_file: Edit)
    reads_files: bool = False  # a deny rule on a path for any tool that reads files holds for it
    changes_things: bool = False  # it changes files or runs commands (a child given it gets the project memory)
    claude_file_path: bool = False  # Claude Code calls its path argument file_path (absolute), hooks see that
    companions: tuple[str, ...] = ()  # tools that come with it wherever it is given (bash: its background shells)
    named_by_agents: bool = False  # an agent file or --tools may give it to an agent by name
    # What a child's receipt and compaction's ledger keep of its calls: "reads" (the lines read), "changes" (the
    # file changed), "command" (the command and how it ended), "lookup" (its answer's first line), "contents" or
    # "names" (the pattern searched for, in files' text or their names); "": only that it was called.
    receipt: str = ""
    on_demand: bool = True  # named in the index of tools on demand, and loaded when needed; False: in every request
    brings_up: tuple[str, ...] = ()  # tools a call of it that starts something in the background loads too
    role: Role = ""  # what the engine asks for it by (Catalogue.role): one tool a role
    # The built-in agent types given it (explore, bash), besides general-purpose, which gets every tool.
    built_in_types: tuple[str, ...] = ()
    list_place: int = 0  # its place when a built-in agent type's tools are listed (``/agents``), lowest first


class Catalogue:
    """Every tool class's facts, by name, in the order the classes were defined."""

    def __init__(self) -> None:
        self._facts: dict[str, ToolFacts] = {}

    def declare(self, facts: ToolFacts) -> None:
        self._facts[facts.name] = facts

    def __iter__(self) -> Iterator[ToolFacts]:
        return iter(list(self._facts.values()))

    def get(self, name: str) -> ToolFacts | None:
        return self._facts.get(name)

    def claude_name(self, tool: str) -> str:
        """Claude Code's name for ``tool``; the name itself for a tool Claude Code has not (an MCP server's)."""
        facts = self._facts.get(tool)
        return facts.claude_name if facts is not None and facts.claude_name else tool

    def named(self, claude: str) -> str | None:
        """The tool one of Claude Code's names (``Bash``, ``MultiEdit``) stands for; None for no such name."""
        return next(
            (facts.name for facts in self if claude == facts.claude_name or claude in facts.claude_aliases), None
        )

    def rule_tools(self, name: str) -> tuple[str, ...]:
        """The tools a permission rule naming ``name`` (any case) covers: Claude Code's ``Read`` every tool that
        reads files its way, ``Edit`` every tool that changes them, another of its names its one tool; a name
        that is none of Claude Code's covers itself."""
        lower = name.lower()
        own = [
            facts.name
            for facts in self
            if facts.claude_name.lower() == lower or lower in (alias.lower() for alias in facts.claude_aliases)
        ]
        scoped = [facts.name for facts in self if facts.rule_scope.lower() == lower and facts.name not in own]
        return (*own, *scoped) if own or scoped else (lower,)

    def with_companions(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """``names`` and the tools that come with any of them (bash: bash_output, kill_bash)."""
        extra = [companion for name in names if (facts := self._facts.get(name)) for companion in facts.companions]
        return (*names, *(name for name in dict.fromkeys(extra) if name not in names))

    def receipt(self, tool: str) -> str:
        """What a receipt keeps of a call of ``tool`` (``ToolFacts.receipt``); "" for a tool that declares nothing."""
        facts = self._facts.get(tool)
        return facts.receipt if facts is not None else ""

    def role(self, role: Role) -> str:
        """The tool that plays ``role`` (``ToolFacts.role``); "" when none is declared."""
        return next((facts.name for facts in self if facts.role == role), "")

    def given_to(self, agent_type: str) -> tuple[str, ...]:
        """The tools a built-in agent type is given (``ToolFacts.built_in_types``)."""
        return tuple(
            facts.name
            for facts in sorted(self, key=lambda facts: facts.list_place)
            if agent_type in facts.built_in_types
        )

    def reading(self) -> tuple[str, ...]:
        """The tools that read files: a deny rule on a path for one of them holds for all."""
        return tuple(facts.name for facts in self if facts.reads_files)

    def changing(self) -> tuple[str, ...]:
        """The tools that change files or run commands."""
        return tuple(facts.name for facts in self if facts.changes_things)

    def for_agents(self) -> tuple[str, ...]:
        """The tools an agent file or ``--tools`` may name."""
        return tuple(facts.name for facts in self if facts.named_by_agents)


KNOWN = Catalogue()  # every tool class defined so far declares itself here (Tool.__init_subclass__)


def claude_name(tool: str) -> str:
    """Claude Code's name for ``tool`` (``KNOWN.claude_name``): what hooks, receipts and json output show."""
    return KNOWN.claude_name(tool)
