"""What every tool is, the context it runs in, and input checking against its schema."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from ..events import MAIN, Sink
from ..storage.records import finite, finite_copy
from ..system.workspace import Workspace
from .shells import BackgroundShells

if TYPE_CHECKING:
    from ..storage.checkpoints import Checkpoints
    from ..policy.hooks import Hooks
    from ..policy.permissions import Permissions
    from ..system.sandbox import Sandbox

# read: no side effects, may run concurrently. edit: writes files. exec: runs commands.
# task: starts a subagent (concurrent, main agent only).
ToolKind = Literal["read", "edit", "exec", "task"]


NO_RECURSION = "Subagents cannot start subagents; do this part of the work yourself."


class EditWatch(Protocol):
    """What looks at a file around an edit_file or write_file call (the language servers' new errors:
    ``core/lsp/tool.py``): ``before_edit`` returns what ``after_edit`` compares with (None: nothing to check),
    and ``after_edit`` the text added to the call's result."""

    def before_edit(self, path: Path) -> Any: ...

    async def after_edit(self, path: Path, before: Any, ctx: "ToolContext") -> str: ...


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

    def is_running(self, subagent_id: str) -> bool: ...

    def steer(self, subagent_id: str, text: str, source: str = "user") -> str: ...

    def wrap_up(self, subagent_id: str, source: str = "user") -> str: ...

    async def run(self, description: str, prompt: str, type_name: str | None, ctx: "ToolContext", *,
                  background: bool = False, resume: str | None = None,
                  isolation: str | None = None, files: list[str] | None = None, token_budget: int | None = None,
                  cost_budget: float | None = None, model: str | None = None,
                  effort: str | None = None) -> tuple[str, bool]: ...


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool call may use. One per agent; ``tool_use_id`` is set per call."""

    workspace: Workspace
    emit: Sink
    permissions: "Permissions"
    agent_id: str = MAIN
    agent_description: str = ""  # a subagent's task description, shown with its approval requests
    parent_tool_use_id: str | None = None
    depth: int = 0  # 0 for the main agent, 1 for a subagent
    subagents: SubagentRunner | None = None
    tool_use_id: str = ""
    output_dir: Path | None = None  # where full copies of cut outputs go
    env: dict[str, str] = field(default_factory=dict)  # extra settings for tools
    shells: BackgroundShells = field(default_factory=BackgroundShells)  # shared by all agents of a session
    checkpoints: "Checkpoints | None" = None  # keeps files' earlier contents for /rewind; shared likewise
    hooks: "Hooks | None" = None  # the session's hooks (PreToolUse, PostToolUse, …), shared by all agents
    sandbox: "Sandbox | None" = None  # the OS sandbox bash runs in (core/system/sandbox.py); None: the setting is off
    edit_watch: EditWatch | None = None  # adds a language server's new errors to an edit's result; shared likewise
    editor: EditorFiles | None = None  # the client's buffers, which the file tools read and write through; likewise

    def for_call(self, tool_use_id: str) -> "ToolContext":
        return dataclasses.replace(self, tool_use_id=tool_use_id)


class Tool:
    """A tool the model can call. Subclasses set the class attributes and implement run()."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_schema: ClassVar[dict[str, Any]]
    kind: ClassVar[ToolKind] = "read"
    key_arg: ClassVar[str] = ""  # the argument a one-line summary shows
    brief: ClassVar[str] = ""  # a few words for the index of tools on demand (on_demand.py); "": its first sentence
    workspace_paths: ClassVar[bool] = True  # a 'path' argument names a file in the workspace
    main_only: ClassVar[bool] = False  # the main agent's alone: a subagent is never offered it (ToolRegistry.for_subagents)
    # run() passes the outside text in its output through content.quoted itself, beside notes of agentcli's that
    # must stay notes (task: a child's answer, then its receipt); the registry quotes every other tool's output.
    quotes_own_output: ClassVar[bool] = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> "str | ToolOutcome":
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
    return (f"{tool_name}: {_names(not_numbers)} held NaN or Infinity, which is not a number JSON can carry; "
            "call it again with finite numbers.")


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
        parts.append(f"{name}{'' if name in required else '?'}: {kind if isinstance(kind, str) else '|'.join(map(str, kind))}")
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
