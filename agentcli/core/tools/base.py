"""What every tool is, the context it runs in, and input checking against its schema."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..errors import ToolError
from ..events import MAIN, Preview, Sink, ToolKind
from ..storage.records import finite, finite_copy
from ..system.workspace import Workspace
from ..tool_facts import KNOWN, Role, ToolFacts
from ..tool_settings import ToolSettings
from .shells import BackgroundShells

if TYPE_CHECKING:
    from ..policy.hooks import Hooks
    from ..policy.permissions import Permissions
    from ..storage.checkpoints import Checkpoints
    from ..system.sandbox import Sandbox

# read: no side effects, may run concurrently. edit: writes files. exec: runs commands.
# task: starts a subagent (concurrent, main agent only).


NO_RECURSION = "Subagents cannot start subagents; do this part of the work yourself."


class EditWatch(Protocol):
    """What looks at a file around an edit_file or write_file call (the language servers' new errors:
    ``core/lsp/tool.py``): ``before_edit`` returns what ``after_edit`` compares with (None: nothing to check),
    and ``after_edit`` the text added to the call's result."""

    def before_edit(self, path: Path) -> Any: ...

    async def after_edit(self, path: Path, before: Any, ctx: ToolContext) -> str: ...


class EditorFiles(Protocol):
    """A client's own file methods (an editor's unsaved buffers: ACP's fs/read_text_file and fs/write_text_file,
    ``ui/acp/editor.py``), which the file tools go through for the files it ``covers`` once every check of
    agentcli's has passed (``editor_files.py``). Each method raises ``ToolError`` with one sentence."""

    def covers(self, path: Path) -> bool: ...

    async def read(self, path: Path) -> str: ...

    async def write(self, path: Path, text: str) -> None: ...


class SubagentFacts(Protocol):
    """What tools read of one subagent (``SubagentRecord`` in ``core/engine/subagents.py``)."""

    @property
    def id(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def running(self) -> bool: ...


class SubagentRunner(Protocol):
    """What tools ask of the session's subagents (``Subagents`` in ``core/engine/subagents.py``), without
    importing them. mypy checks that ``Subagents`` matches it where the session puts it in a ``ToolContext``."""

    agent_types: dict[str, Any]

    @property
    def records(self) -> Mapping[str, SubagentFacts]: ...

    @property
    def running(self) -> Sequence[SubagentFacts]: ...

    def is_running(self, agent_id: str) -> bool: ...

    def steer(self, agent_id: str, text: str, source: str = "user") -> str: ...

    def wrap_up(self, agent_id: str, source: str = "user") -> str: ...

    async def run(
        self,
        description: str,
        prompt: str,
        type_name: str | None,
        ctx: ToolContext,
        *,
        background: bool = False,
        resume: str | None = None,
        isolation: str | None = None,
        files: list[str] | None = None,
        token_budget: int | None = None,
        cost_budget: float | None = None,
        model: str | None = None,
        effort: str | None = None,
    ) -> tuple[str, bool]: ...


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool call may use. One per agent; ``tool_use_id`` is set per call."""

    workspace: Workspace
    emit: Sink
    permissions: Permissions
    settings: ToolSettings = field(kw_only=True)  # the session's settings that tools read
    agent_id: str = MAIN
    agent_description: str = ""  # a subagent's task description, shown with its approval requests
    parent_tool_use_id: str | None = None
    depth: int = 0  # 0 for the main agent, 1 for a subagent
    subagents: SubagentRunner | None = None
    tool_use_id: str = ""
    output_dir: Path | None = None  # where full copies of cut outputs go
    shells: BackgroundShells = field(default_factory=BackgroundShells)  # shared by all agents of a session
    checkpoints: Checkpoints | None = None  # keeps files' earlier contents for /rewind; shared likewise
    hooks: Hooks | None = None  # the session's hooks (PreToolUse, PostToolUse, …), shared by all agents
    sandbox: Sandbox | None = None  # the OS sandbox bash runs in (core/system/sandbox.py); None: the setting is off
    edit_watch: EditWatch | None = None  # adds a language server's new errors to an edit's result; shared likewise
    editor: EditorFiles | None = None  # the client's buffers, which the file tools read and write through; likewise

    def for_call(self, tool_use_id: str) -> ToolContext:
        return dataclasses.replace(self, tool_use_id=tool_use_id)


class Tool:
    """A tool the model can call. Subclasses set the class attributes and implement run()."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_schema: ClassVar[dict[str, Any]]
    kind: ClassVar[ToolKind] = "read"
    key_arg: ClassVar[str] = ""  # the argument a one-line summary shows
    preview: ClassVar[Preview] = ""  # how its calls read for people (vocabulary.Preview): the front ends' previews
    brief: ClassVar[str] = ""  # a few words for the index of tools on demand (on_demand.py); "": its first sentence
    workspace_paths: ClassVar[bool] = True  # a 'path' argument names a file in the workspace
    main_only: ClassVar[bool] = (
        False  # the main agent's alone: a subagent is never offered it (ToolRegistry.for_subagents)
    )
    # run() passes the outside text in its output through content.quoted itself, beside notes of agentcli's that
    # must stay notes (task: a child's answer, then its receipt); the registry quotes every other tool's output.
    quotes_own_output: ClassVar[bool] = False
    # What policy, hooks, agent files and receipts need to know of it (core/tool_facts.py), said here alone.
    claude_name: ClassVar[str] = ""  # Claude Code's name for it
    claude_aliases: ClassVar[tuple[str, ...]] = ()  # Claude Code's other names for it
    rule_scope: ClassVar[str] = ""  # a Claude Code rule name that covers it too (Read, Edit)
    reads_files: ClassVar[bool] = False  # a read deny rule on a path holds for it (it reads what it is pointed at)
    changes_things: ClassVar[bool] = False  # it changes files or runs commands
    claude_file_path: ClassVar[bool] = False  # Claude Code calls its 'path' file_path (hooks see that)
    companions: ClassVar[tuple[str, ...]] = ()  # tools given with it wherever it is given
    named_by_agents: ClassVar[bool] = True  # an agent file or --tools may give it by name (main_only: never)
    # How permissions judge a call: "command" (a bash command line), "address" (a URL, by its host), or "" (its
    # 'path' argument against the workspace where it takes one and workspace_paths holds, else its key argument).
    judged_by: ClassVar[str] = ""
    reads_saved_outputs: ClassVar[bool] = False  # may read this session's full copies of cut outputs
    receipt: ClassVar[str] = ""  # what a child's receipt keeps of its calls (tool_facts.ToolFacts.receipt)
    on_demand: ClassVar[bool] = True  # deferred where tools come on demand (on_demand.py); False: in every request
    brings_up: ClassVar[tuple[str, ...]] = ()  # what a call of it that starts something in the background loads too
    role: ClassVar[Role] = ""  # what the engine asks for it by: plan, skills, delegate, commands (tool_facts.Role)
    built_in_types: ClassVar[tuple[str, ...]] = ()  # the built-in agent types given it (explore, bash)
    list_place: ClassVar[int] = 0  # its place when a built-in agent type's tools are listed, lowest first

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if isinstance(name, str) and cls.__module__.startswith(
            "agentcli."
        ):  # agentcli's own (an MCP tool's is per object)
            KNOWN.declare(cls.facts())

    @classmethod
    def facts(cls) -> ToolFacts:
        return ToolFacts(
            name=cls.name,
            claude_name=cls.claude_name,
            claude_aliases=cls.claude_aliases,
            rule_scope=cls.rule_scope,
            reads_files=cls.reads_files,
            changes_things=cls.changes_things,
            claude_file_path=cls.claude_file_path,
            companions=cls.companions,
            named_by_agents=cls.named_by_agents and not cls.main_only,
            receipt=cls.receipt,
            on_demand=cls.on_demand,
            brings_up=cls.brings_up,
            role=cls.role,
            built_in_types=cls.built_in_types,
            list_place=cls.list_place,
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str | ToolOutcome:
        raise NotImplementedError

    async def check(self, args: dict[str, Any], ctx: ToolContext) -> tuple[str, ...]:
        """Before the user is asked to approve this call: raise ToolError if it would fail (nobody should
        approve an edit that cannot apply), else return the change it would make, as ``preview.file_diff``
        lines (() for a tool that changes no file)."""
        return ()

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def summary(self, args: dict[str, Any]) -> str:
        value = args.get(self.key_arg, "") if self.key_arg else ""
        return str(value).splitlines()[0] if value else ""


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def check_input(tool: Tool, args: Any) -> str | None:
    """Why ``args`` does not fit the tool's schema, in one sentence; None when it fits."""
    schema = tool.input_schema
    props: dict[str, Any] = schema.get("properties", {})
    expected = _describe_params(schema)
    if not isinstance(args, dict):
        return f"{tool.name} expects a JSON object of arguments ({expected})."
    problem = check_numbers(tool.name, args)
    if problem:
        return problem
    missing = [name for name in schema.get("required", []) if name not in args]
    if missing:
        return f"{tool.name} is missing required argument {_names(missing)}; it takes {expected}."
    unknown = [name for name in args if name not in props]
    if unknown and schema.get("additionalProperties", False) is False:
        return f"{tool.name} has no argument {_names(unknown)}; it takes {expected}."
    for name, value in args.items():
        spec = props.get(name)
        if not isinstance(spec, dict):
            continue
        json_type = spec.get("type")
        if isinstance(json_type, list):  # ["string", "null"]: any of them
            json_type = next((t for t in json_type if isinstance(t, str) and _is_type(value, t)), json_type[0])
        if json_type and not _is_type(value, json_type):
            return f"{tool.name}: '{name}' must be {_article(json_type)}, not {_json_name(value)}."
        if isinstance(value, str) and "\x00" in value:
            return f"{tool.name}: '{name}' contains a NUL character, which no path or command can hold."
        if isinstance(spec.get("enum"), list) and value not in spec["enum"]:
            options = ", ".join(repr(v) for v in spec["enum"])
            return f"{tool.name}: '{name}' must be one of {options}, not {value!r}."
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in spec and value < spec["minimum"]:
                return f"{tool.name}: '{name}' must be at least {spec['minimum']}, not {value}."
            if "maximum" in spec and value > spec["maximum"]:
                return f"{tool.name}: '{name}' must be at most {spec['maximum']}, not {value}."
    return None


def check_numbers(tool_name: str, args: Any) -> str | None:
    """Refuse NaN and Infinity (which some models send, and JSON has not), in one sentence.

    They are replaced by null in ``args`` itself: that dict is the call's input in the agent's
    history, which every later request sends again, and a request holding NaN cannot be encoded.
    """
    if not isinstance(args, dict):
        return None
    not_numbers = [name for name, value in args.items() if not finite(value)]
    if not not_numbers:
        return None
    args.update({name: finite_copy(args[name]) for name in not_numbers})
    return (
        f"{tool_name}: {_names(not_numbers)} held NaN or Infinity, which is not a number JSON can carry; "
        "call it again with finite numbers."
    )


def _is_type(value: Any, json_type: Any) -> bool:
    if not isinstance(json_type, str):
        return True  # a schema this check does not read: the server checks it
    if json_type in ("integer", "number") and isinstance(value, bool):
        return False
    if json_type == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(json_type, (object,)))


def _describe_params(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    parts = []
    for name, spec in schema.get("properties", {}).items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        parts.append(
            f"{name}{'' if name in required else '?'}: {kind if isinstance(kind, str) else '|'.join(map(str, kind))}"
        )
    return ", ".join(parts) if parts else "no arguments"


def _names(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _article(json_type: str) -> str:
    return ("an " if json_type[0] in "aeiou" else "a ") + json_type


def _json_name(value: Any) -> str:
    for name, types in _JSON_TYPES.items():
        if name != "number" and isinstance(value, types) and not (name == "integer" and isinstance(value, bool)):
            return _article(name)
    if value is None:
        return "null"
    return _article("number") if isinstance(value, float) else type(value).__name__


class SandboxStopped(ToolError):
    """A call the OS sandbox stopped for want of ``needed`` (a ``system.sandbox.Widening``). The registry judges it
    as it judged the call (``Permissions.ask_sandbox``: the user is asked once), then runs ``again()`` with that
    added, or takes ``refused(why)``, the call's result with why nobody allowed it (it raises ToolError as a failed
    command does). Where no registry judges the call, it is that ToolError, as if nobody could be asked."""

    def __init__(self, needed: Any, again: Callable[[], Awaitable[str]], refused: Callable[[str], str]) -> None:
        try:
            message = refused("no one can be asked here")
        except ToolError as exc:
            message = str(exc)
        super().__init__(message)
        self.needed, self.again, self.refused = needed, again, refused


@dataclass(frozen=True)
class ToolOutcome:
    output: str
    is_error: bool = False
    blocks: tuple[dict[str, Any], ...] = ()  # content blocks after the text, such as an MCP tool's images
    denied: bool = False  # refused before it ran: by the permissions or a PreToolUse hook
    stop: str = ""  # a hook said "continue": false: the turn ends after this call, and this says why
    waited: float = 0.0  # seconds it waited on its permission (a question to the user): not the call's own time

    def content(self) -> str | list[dict[str, Any]]:
        """The ``tool_result`` content: the text, and the other blocks after it when there are any."""
        text = self.output or "(no output)"
        return [{"type": "text", "text": text}, *self.blocks] if self.blocks else text
