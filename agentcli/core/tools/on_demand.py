"""Tools on demand: a request carries the tools an agent is likely to need now, and names the others.

The core (the tools that say ``on_demand = False``: what nearly every errand uses, the main agent's delegation,
the plan the prompt asks for, the skills the prompt lists, and the answer tool a --json-schema run must call)
goes in every request. Every other tool (the rare built-ins, the worktree tools, MCP
servers' tools) is *deferred*: the request names it with a few words in an index, and it is reached by name
one of two ways, by what the endpoint supports (the ``tool_search`` setting; ``route``):

- ``api``: the Messages API's own tool search. Every definition goes in ``tools``, the deferred ones with
  ``defer_loading: true``, beside the server tool ``tool_search_tool_regex``; the API loads a definition into
  the conversation where the model's search found it (a ``tool_reference``), so the tools, and the cached
  prefix, never change.
- ``agentcli``: for endpoints without it (LiteLLM, Ollama, vLLM), agentcli's own ``tool_search`` tool, whose
  description is the index: it loads tools by name or by words. A call of a deferred tool by its name runs
  too, and loads it. The request's tools stay what the agent's first request offered: a tool loaded later is
  carried in the conversation, its definition in a note after the latest message (``Offer.carried``), and a
  tool that joins later (an MCP server that comes up) is named in one (``Offer.joined``), so the request's
  beginning stays what the prompt cache holds (appending a loaded tool to the tools rewrote the whole cached
  prefix once; docs/benchmarks.md measures both).
- ``off``: every tool in every request.

Loading is per agent (``Loaded``): a subagent starts with the core of its own tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..content import NOTE_OPEN, Message, quoted
from ..tool_facts import KNOWN
from .base import Tool, ToolContext

if TYPE_CHECKING:
    from . import ToolRegistry


SEARCH_NAME = "tool_search"  # agentcli's own
API_SEARCH = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
MOST_LOADED = 5  # tools one search by words loads
INDEX_TITLE = "Tools on demand:"
JOINED = "These tools on demand joined since tool_search's list was made (load one with tool_search, or call it):"
CARRIED = (
    "Loaded tools on demand: call each by its name like the tools of your list; their definitions, as the "
    "list would give them:"
)


def refused_by_endpoint(status: int | None, message: str) -> bool:
    """Whether a failed request is an endpoint's refusal of the API's tool search (an unknown tool type or field),
    which ``auto`` answers by going on with agentcli's own."""
    text = message.lower()
    return status == 400 and any(word in text for word in ("tool_search", "defer_loading", "tool_reference"))


def brief(tool: Tool) -> str:
    """A tool in a few words: its ``brief``, else its description's first sentence, cut."""
    text = tool.brief or " ".join(str(tool.description).split())
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].rstrip(".")
    return first if len(first) <= 70 else first[:69].rstrip() + "…"


def index(tools: Iterable[Tool]) -> str:
    """One line a deferred tool: the index a request carries instead of their definitions."""
    lines = [f"- {tool.name}: {brief(tool)}" for tool in tools]
    return "\n".join([INDEX_TITLE, *lines]) if lines else ""


@dataclass
class Loaded:
    """The deferred tools one agent has loaded, in the order it loaded them."""

    names: list[str] = field(default_factory=list)

    def add(self, names: Iterable[str]) -> list[str]:
        added = [name for name in names if name not in self.names]
        self.names.extend(added)
        return added

    def after_calls(self, calls: Iterable[dict[str, Any]], deferred: Iterable[str]) -> None:
        """A deferred tool called by its name is loaded, and so are those a background start brings up."""
        known = set(deferred)
        for call in calls:
            name, args = call.get("name"), call.get("input")
            wanted = [name] if name in known else []
            facts = KNOWN.get(str(name))
            if isinstance(args, dict) and args.get("run_in_background") and facts is not None:
                wanted += facts.brings_up  # the tools that follow a background start up (no search needed)
            self.add(n for n in wanted if n in known)


def called(history: Iterable[Message]) -> list[str]:
    """The tools ``history`` calls, in the order of their first call."""
    names = [
        block.get("name")
        for message in history
        if message.get("role") == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]
    return list(dict.fromkeys(name for name in names if isinstance(name, str)))


def is_deferred(tool: Tool) -> bool:
    return tool.on_demand


def __getattr__(name: str) -> frozenset[str]:
    """``CORE``: the tools declared so far that go in every request (their ``on_demand`` is False)."""
    if name != "CORE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return frozenset(facts.name for facts in KNOWN if not facts.on_demand)


class Offer:
    """What one agent's requests offer of its tools: its loaded tools (``Loaded``) and the route's shape."""

    def __init__(self) -> None:
        self.loaded = Loaded()
        self.recalled = False  # the history's calls were read (request_tools)
        self.indexed: list[str] | None = None  # the deferred tools tool_search's index lists (agentcli's route)
        self.told: set[str] = set()  # those that joined later, named in a note (joined)
        self.declared: list[str] | None = None  # the loaded tools the request's tools carry: those of its first

    def request_tools(self, registry: ToolRegistry, how: str, history: Iterable[Message] = ()) -> list[dict[str, Any]]:
        """The ``tools`` of a request on route ``how`` (api, agentcli or off). ``history``: the agent's messages,
        whose calls of deferred tools load them the first time (a resumed session's, so that no call in its
        history names a tool its requests do not declare)."""
        if how == "off":
            return registry.schemas()
        deferred = [tool for tool in registry if is_deferred(tool)]
        if not self.recalled:
            self.recalled = True
            self.loaded.add(name for name in called(history) if name in {tool.name for tool in deferred})
        core = [tool.schema() for tool in registry if not is_deferred(tool)]
        if not deferred:
            return core
        if how == "api":
            return [*core, *({**tool.schema(), "defer_loading": True} for tool in deferred), dict(API_SEARCH)]
        by_name = {tool.name: tool for tool in deferred}
        if self.indexed is None:
            self.indexed, self.declared = list(by_name), list(self.loaded.names)
        return [
            *core,
            ToolSearch(deferred, self.loaded, self.indexed).schema(),
            *(by_name[name].schema() for name in self.declared or () if name in by_name),
        ]

    def registry(self, registry: ToolRegistry, how: str) -> ToolRegistry:
        """The registry calls run through: on agentcli's route, with its ``tool_search`` for this agent."""
        deferred = [tool for tool in registry if is_deferred(tool)]
        if how != "agentcli" or not deferred:
            return registry
        return registry.joined(ToolSearch(deferred, self.loaded, self.indexed))

    def after_calls(self, registry: ToolRegistry, calls: Iterable[dict[str, Any]], how: str) -> None:
        if how == "agentcli":
            self.loaded.after_calls(calls, (tool.name for tool in registry if is_deferred(tool)))

    def joined(self, registry: ToolRegistry, how: str) -> str:
        """On agentcli's route, the note that names the deferred tools which joined since the index was listed
        (each once); "" when none did."""
        if how != "agentcli" or self.indexed is None:
            return ""
        new = [
            tool
            for tool in registry
            if is_deferred(tool) and tool.name not in self.indexed and tool.name not in self.told
        ]
        self.told.update(tool.name for tool in new)
        return f"{JOINED}\n{index(new).removeprefix(INDEX_TITLE + chr(10))}" if new else ""

    def carried(self, registry: ToolRegistry, how: str, history: list[Message]) -> str:
        """On agentcli's route, the note with the definitions of the tools loaded after the agent's first request
        that ``history`` does not hold yet (a compaction or /clear may have taken an earlier one away); "" when
        there are none. The tools stay as cached: a definition at the end of the request costs its own bytes,
        where appending it to the tools made the whole conversation miss the cache once."""
        if how != "agentcli" or self.declared is None:
            return ""
        by_name = {tool.name: tool for tool in registry if is_deferred(tool)}
        wanted = [name for name in self.loaded.names if name not in self.declared and name in by_name]
        if not wanted:
            return ""
        # Only agentcli's own note with a tool's definition as it is now counts: a file, a page or a server's
        # resource the user attached may hold these words and a forged definition, which must not stand in for it.
        held = [
            text
            for message in history
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and (text := str(block.get("text", ""))).startswith(NOTE_OPEN + CARRIED)
        ]
        lines = {name: json.dumps(by_name[name].schema(), ensure_ascii=False) for name in wanted}
        missing = [name for name in wanted if not any(f"\n{quoted(lines[name])}\n" in text for text in held)]
        return "\n".join([CARRIED, *(lines[name] for name in missing)]) if missing else ""

    def system_index(self, registry: ToolRegistry, how: str) -> str:
        """On the API's route the index ends the system prompt (its search tool's own text is the API's)."""
        return index(tool for tool in registry if is_deferred(tool)) if how == "api" else ""


class ToolSearch(Tool):
    """``tool_search``: agentcli's way to load deferred tools on endpoints without the API's tool search."""

    name = SEARCH_NAME
    named_by_agents = False  # each agent's own, made for it
    on_demand = False
    kind = "read"
    key_arg = "query"
    description: ClassVar[str] = (
        "Load the tools below by name, or by words for what you need."  # the result says how to call them
    )
    input_schema = {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "Tool names, or words."}},
        "required": ["query"],
    }

    def __init__(self, deferred: list[Tool], loaded: Loaded, listed: list[str] | None = None) -> None:
        self.deferred = {tool.name: tool for tool in deferred}
        self.loaded = loaded
        self.listed = listed  # the names its index lists (None: every deferred tool); it finds them all

    def schema(self) -> dict[str, Any]:
        """Its description ends with the index of the deferred tools it was first given, loaded ones too: it
        never changes as the agent loads tools or as tools join (a note names those: ``Offer.joined``), so a
        loaded tool, appended after it, is the only change to the request's tools."""
        shown = [t for name, t in self.deferred.items() if self.listed is None or name in self.listed]
        return {
            "name": self.name,
            "description": self.description + "\n\n" + index(shown),
            "input_schema": self.input_schema,
        }

    def find(self, query: str) -> list[str]:
        words = [w for w in re.split(r"[\s,]+", query.strip()) if w]
        named = [w for w in words if w in self.deferred]
        if named:
            return named
        lowered = [w.lower() for w in words]
        scored = sorted(
            (
                (sum(w in f"{t.name} {t.description}".lower() for w in lowered), i, t.name)
                for i, t in enumerate(self.deferred.values())
            ),
            reverse=True,
        )
        return [name for score, _, name in scored if score][:MOST_LOADED]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        found = self.find(str(args.get("query", "")))
        if not found:
            return (
                "No tool on demand matches that. The tools on demand are: " + ", ".join(self.deferred) + "."
                if self.deferred
                else "There are no tools on demand."
            )
        self.loaded.add(found)
        return (
            f"Loaded: {', '.join(found)}. "
            + ("Its definition follows" if len(found) == 1 else "Their definitions follow")
            + " in a note; call "
            + ("it" if len(found) == 1 else "them")
            + " by name from your next step on."
        )
