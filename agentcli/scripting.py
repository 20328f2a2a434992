"""The flags scripts written for ``claude -p`` pass, and what they mean in agentcli.

Claude Code's tool names (``Bash``, ``Read``, ``Edit``, ``Write``, ``Grep``, ``Glob``, ``Task``/``Agent``)
map to agentcli's, as agent files do (each tool declares its names: ``core/tool_facts.py``). A flag agentcli cannot honour is a usage error, never ignored.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import UsageError
from .core.model.catalogue import EFFORT_ORDER  # the Agent SDK's effort levels, in order

if TYPE_CHECKING:
    from .config import Settings
    from .core.door import SessionSurface
    from .core.system.workspace import Workspace
    from .ui.headless import HeadlessOutput

SETTINGS_KEYS = {
    "permissions",
    "model",
    "hooks",
    "statusLine",
    "$schema",
}  # what agentcli understands of a --settings object
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def add_script_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="stream-json: user messages (and the Agent SDK's control requests) as JSON lines on "
        "standard input; headless",
    )
    p.add_argument("--verbose", action="store_true", help="needed with --output-format stream-json, as in Claude Code")
    p.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="stream-json: add the API's raw stream events as stream_event lines",
    )
    p.add_argument("--system-prompt", metavar="TEXT", help="replace agentcli's system prompt (headless)")
    p.add_argument("--append-system-prompt", metavar="TEXT", help="add to agentcli's system prompt (headless)")
    p.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="append",
        default=[],
        metavar="RULES",
        help="allow rules such as 'Bash(git diff:*) Read', comma or space separated",
    )
    p.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="append",
        default=[],
        metavar="RULES",
        help="deny rules, written like --allowedTools",
    )
    p.add_argument(
        "--tools",
        metavar="NAMES",
        help="the tools the model gets: 'default', '' (none), or names such as 'Bash,Read' (headless)",
    )
    p.add_argument(
        "--max-budget-usd",
        type=positive_amount,
        metavar="USD",
        help="stop with error_max_budget_usd once the cost passes this (headless)",
    )
    p.add_argument("--session-id", metavar="ID", help="the id of the new session (headless)")
    p.add_argument("--settings", metavar="FILE_OR_JSON", help="Claude Code settings: a JSON file or a JSON string")
    p.add_argument(
        "--add-dir",
        action="extend",
        nargs="+",
        default=[],
        metavar="DIR",
        help="another directory the tools may use, confined like the workspace (headless)",
    )
    p.add_argument(
        "--permission-prompt-tool",
        metavar="stdio",
        help="stdio: ask the program on standard input (the Agent SDK's can_use_tool) about each "
        "approval; needs --input-format stream-json",
    )
    p.add_argument(
        "--agents",
        metavar="JSON",
        help="agent types for this session, as Claude Code's --agents takes "
        'them: {"name": {"description": …, "prompt": …}}',
    )
    p.add_argument(
        "--system-prompt-file", metavar="FILE", help="replace agentcli's system prompt with a file's text (headless)"
    )
    p.add_argument(
        "--fork-session",
        action="store_true",
        help="with --resume or --continue: go on in a new session with a copy of the history",
    )
    p.add_argument(
        "--setting-sources",
        type=setting_sources,
        metavar="SOURCES",
        help="the settings that load, as Claude Code names them: user, project, local, comma separated; "
        "'' loads no settings files (docs/scripting.md)",
    )
    p.add_argument(
        "--strict-mcp-config",
        action="store_true",
        help="start only the MCP servers --mcp-config names, none from mcp.json or .mcp.json",
    )
    p.add_argument(
        "--json-schema",
        metavar="SCHEMA",
        help="the final answer as JSON matching this JSON Schema (a "
        "JSON string or file), in the result's structured_output",
    )
    p.add_argument(
        "--fallback-model",
        metavar="MODEL",
        help="go on with this model when the model is overloaded or not found (headless)",
    )
    p.add_argument(
        "--effort",
        choices=EFFORT_ORDER,
        help="how much effort the model spends: the API's effort where "
        "the model has it, else a thinking budget (headless)",
    )
    p.add_argument(
        "--include-hook-events",
        action="store_true",
        help="stream-json: add a hook_started and a hook_response line for each hook command run",
    )
    p.add_argument(
        "--replay-user-messages",
        action="store_true",
        help="stream-json input: write each user message back, with its uuid, as it is taken up",
    )
    # --thinking, --max-thinking-tokens and --mcp-config are agentcli's own flags (cli.py).


def setting_sources(text: str) -> list[str]:
    """``--setting-sources user,project``: the sources named, each once; "" names none."""
    from .config import SETTING_SOURCES

    named = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in named if name not in SETTING_SOURCES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown setting source {unknown[0]!r} (the sources are {', '.join(SETTING_SOURCES)})"
        )
    return named


def positive_amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount in USD, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected an amount above 0, got {text!r}")
    return value


def positive_whole(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def check_script_flags(args: argparse.Namespace) -> None:
    """Refuse combinations agentcli cannot honour; set ``args.headless``."""
    if args.fork_session and not (args.resume or args.continue_):
        raise UsageError("--fork-session works with --resume or --continue")
    if args.system_prompt_file is not None:
        if args.system_prompt:
            raise UsageError("give either --system-prompt or --system-prompt-file, not both")
        try:
            args.system_prompt = Path(args.system_prompt_file).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"--system-prompt-file: cannot read {args.system_prompt_file} ({getattr(exc, 'strerror', None) or exc})"
            ) from None
    streaming_in = args.input_format == "stream-json"
    args.headless = args.prompt is not None or streaming_in
    args.dont_ask = args.permission_mode == "dontAsk"
    if args.dont_ask:  # Claude Code's dontAsk: what would ask is refused; headless, agentcli asks no one anyway
        if not args.headless:
            raise UsageError("--permission-mode dontAsk works with -p or --input-format stream-json")
        args.permission_mode = "default"
    if streaming_in and args.output_format != "stream-json":
        raise UsageError("--input-format stream-json needs --output-format stream-json")
    if streaming_in and args.prompt not in (None, "-"):
        raise UsageError("--input-format stream-json reads the prompts from standard input; leave out -p's PROMPT")
    if args.headless and args.output_format == "stream-json" and not args.verbose:
        raise UsageError("--output-format stream-json needs --verbose, as in Claude Code")
    if args.verbose and not (args.headless and args.output_format == "stream-json"):
        raise UsageError("--verbose works with -p and --output-format stream-json only")
    for flag, given in (
        ("--include-partial-messages", args.include_partial_messages),
        ("--include-hook-events", args.include_hook_events),
    ):
        if given and args.output_format != "stream-json":
            raise UsageError(f"{flag} works with --output-format stream-json only")
    if args.replay_user_messages and not streaming_in:
        raise UsageError("--replay-user-messages works with --input-format stream-json only")
    headless_only = {
        "--system-prompt": args.system_prompt,
        "--append-system-prompt": args.append_system_prompt,
        "--tools": args.tools,
        "--max-budget-usd": args.max_budget_usd,
        "--session-id": args.session_id,
        "--add-dir": args.add_dir or None,
        "--agents": args.agents,
        "--json-schema": args.json_schema,
        "--fallback-model": args.fallback_model,
        "--effort": args.effort,
    }
    given = [flag for flag, value in headless_only.items() if value is not None]
    if given and not args.headless:
        raise UsageError(f"{given[0]} works with -p or --input-format stream-json")
    if args.session_id is not None:
        if not _SESSION_ID.fullmatch(args.session_id):
            raise UsageError(f"--session-id must be letters, digits, '.', '_' or '-', not {args.session_id!r}")
        if args.resume or args.continue_:
            raise UsageError("--session-id names a new session; it cannot go with --resume or --continue")
    for directory in args.add_dir:
        if not Path(directory).expanduser().is_dir():
            raise UsageError(f"--add-dir {directory}: no such directory")
    if args.tools is not None:
        tool_names(args.tools)  # fail early on a name agentcli does not have
    if args.permission_prompt_tool is not None:
        if args.permission_prompt_tool != "stdio":
            raise UsageError(
                f"--permission-prompt-tool {args.permission_prompt_tool}: agentcli asks only over stdio "
                "(the Agent SDK's can_use_tool), not through an MCP tool"
            )
        if not streaming_in:
            raise UsageError(
                "--permission-prompt-tool stdio needs --input-format stream-json: the answers come on standard input"
            )
    if args.agents is not None:
        args.agents = agent_definitions(args.agents)
    if args.json_schema is not None:
        from .core.tools.structured_output import SchemaError, checked_schema

        try:
            args.json_schema = checked_schema(read_json_option(args.json_schema, "--json-schema"))
        except SchemaError as exc:
            raise UsageError(f"--json-schema: {exc}") from None


def agent_definitions(value: str) -> dict[str, Any]:
    """--agents: agent types by name, checked now, so a bad one is a usage error before anything starts."""
    from .core.engine.agents import AgentFileError, agent_from_definition

    data = read_json_option(value, "--agents")
    if not isinstance(data, dict):
        raise UsageError(
            "--agents must hold a JSON object of agents by name, such as "
            '{"reviewer": {"description": "Reviews code", "prompt": "You review code."}}'
        )
    notes: list[str] = []
    try:
        types = {name: agent_from_definition(name, spec, source="--agents", notes=notes) for name, spec in data.items()}
    except AgentFileError as exc:
        raise UsageError(f"--agents: {exc}") from None
    return {"types": types, "notes": notes}


def read_json_option(value: str, flag: str) -> Any:
    """A flag's value that is a JSON string or the path of a JSON file."""
    text = value
    if not value.lstrip().startswith(("{", "[")):
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{flag}: cannot read {value} ({exc.strerror or exc})") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{flag}: not valid JSON ({exc})") from None
    except RecursionError:
        raise UsageError(f"{flag}: the JSON nests too deep to read") from None


def split_rules(values: list[str]) -> list[str]:
    """``Bash(git diff:*) Read,Edit`` as rules: split at commas and spaces outside parentheses."""
    rules: list[str] = []
    for value in values:
        current, depth = "", 0
        for char in value:
            depth += {"(": 1, ")": -1}.get(char, 0)
            if char in ", \t\n" and depth == 0:
                if current:
                    rules.append(current)
                current = ""
            else:
                current += char
        if current:
            rules.append(current)
    return rules


def checked_rules(values: list[str], flag: str) -> list[str]:
    """The rules as given (Claude Code's tool names are rules' names too); a rule for a tool agentcli
    does not have is a usage error."""
    if not values:  # the usual case: the tools (the engine's biggest import) load with the session instead
        return []
    from .core.engine import task_tool  # noqa: F401  (declares task's names, Task and Agent)
    from .core.engine.tool_catalogue import catalogue
    from .core.policy.rules import Rule, RuleError

    claude = {name.lower() for facts in catalogue() for name in (facts.claude_name, *facts.claude_aliases) if name}
    known = {facts.name for facts in catalogue()} | claude  # every built-in tool, by its names
    out = []
    for text in split_rules(values):
        name = text.partition("(")[0]
        try:
            rule = Rule.parse(text)
        except RuleError as exc:
            raise UsageError(f"{flag}: {exc}") from None
        if not (set(rule.tools) & known) and not name.startswith("mcp__"):
            raise UsageError(f"{flag}: agentcli has no tool {name!r}")
        out.append(text)
    return out


def script_settings(args: argparse.Namespace) -> list[tuple[dict[str, Any], str]]:
    """Settings the command line gives in Claude Code's forms: --settings, then the tool rule flags."""
    from .config import from_claude_settings

    found: list[tuple[dict[str, Any], str]] = []
    if args.settings is not None:
        data = read_json_option(args.settings, "--settings")
        if not isinstance(data, dict):
            raise UsageError('--settings must hold a JSON object, such as {"permissions": {"allow": ["Read"]}}')
        unknown = sorted(set(data) - SETTINGS_KEYS)
        if unknown:
            raise UsageError(
                f"--settings: agentcli does not understand {', '.join(map(repr, unknown))} "
                f"(it reads {', '.join(sorted(SETTINGS_KEYS - {'$schema'}))})"
            )
        values = from_claude_settings(data)
        if "model" in data:
            values["model"] = data["model"]
        found.append((values, "--settings"))
    rules = {
        "allow": checked_rules(args.allowed_tools, "--allowedTools"),
        "deny": checked_rules(args.disallowed_tools, "--disallowedTools"),
    }
    rules = {kind: listed for kind, listed in rules.items() if listed}
    if rules:
        found.append(({"permissions": rules}, "--allowedTools/--disallowedTools"))
    return found


def tool_names(value: str) -> list[str] | None:
    """--tools as agentcli tool names; None for 'default' (every tool)."""
    from .core.engine.tool_catalogue import catalogue

    if value.strip() == "default":
        return None
    from .core.engine import task_tool  # noqa: F401  (declares task's names, Task and Agent)

    own = {facts.name for facts in catalogue()}  # every built-in tool
    # Claude Code's tool names, and the agentcli tools each stands for (bash brings its shells).
    claude_tools = {
        name: (facts.name, *facts.companions)
        for facts in catalogue()
        for name in (facts.claude_name, *facts.claude_aliases)
        if name
    }
    names: list[str] = []
    for name in split_rules([value]):
        if name in claude_tools:
            names += claude_tools[name]
        elif name in own:
            names.append(name)
        else:
            raise UsageError(
                f"--tools: agentcli has no tool {name!r} (it has {', '.join(sorted(claude_tools))}, or its own names)"
            )
    return names


@dataclass
class SessionOptions:
    """What the command line's flags give a headless session beside the settings: its workspace."""

    workspace: Workspace


def session_options(args: argparse.Namespace, root: Path, model: str) -> SessionOptions:
    from .core.model.catalogue import price_for, resolve_model
    from .core.storage.store import project_dir
    from .core.system.workspace import Workspace

    if args.fallback_model is not None and resolve_model(args.fallback_model) == model:
        raise UsageError(f"--fallback-model must name another model than the one in use ({model})")
    if args.max_budget_usd is not None and price_for(model) is None:
        raise UsageError(
            f"--max-budget-usd needs a model whose price agentcli knows; {model} "
            "has none, so its cost cannot be counted"
        )
    if args.session_id is not None and (project_dir(root.resolve()) / f"{args.session_id}.jsonl").exists():
        raise UsageError(f"--session-id {args.session_id} is in use already; resume it with --resume")
    extra = tuple(Path(d).expanduser().resolve() for d in args.add_dir)
    return SessionOptions(Workspace.at(root, extra_dirs=extra))


def flag_settings(args: argparse.Namespace, settings: Settings) -> None:
    """What a headless run's flags set of its settings, so that its session opens with them: the prompt, the
    tools, the model's options, the budget, raw stream events, and who answers approvals."""
    from .core.model.catalogue import resolve_model

    settings.system_prompt, settings.append_system_prompt = args.system_prompt or "", args.append_system_prompt or ""
    settings.only_tools = tool_names(args.tools) if args.tools is not None else None
    settings.fallback_model = resolve_model(args.fallback_model) if args.fallback_model else ""
    settings.effort, settings.partial_messages = args.effort or "", args.include_partial_messages
    settings.host_answers_approvals = args.permission_prompt_tool == "stdio" and not args.dont_ask
    if args.max_budget_usd is not None:  # it replaces the setting's
        settings.max_budget_usd = args.max_budget_usd


def prepare_session(session: SessionSurface, args: argparse.Namespace, output: HeadlessOutput | None = None) -> None:
    """Add what the flags add to an open session beside its settings (``flag_settings``): the structured answer's
    tool, the agent types of --agents, and hook events (written to ``output``)."""
    if args.json_schema is not None:
        answer_in_form(session, args.json_schema)
    if args.include_hook_events and output is not None:
        session.watch_hooks(output.hook_ran)
    if args.agents:
        from .core.events import Notice

        session.add_agent_types(args.agents["types"])
        for note in args.agents["notes"]:
            session.emit(Notice(level="warning", text=note))


def answer_in_form(session: SessionSurface, schema: dict[str, Any]) -> None:
    """--json-schema: the main agent answers through the structured_output tool (subagents are never offered
    it), and a Stop hook sends it back while no answer fits (``core/tools/structured_output.py``)."""
    from .core.door import Hook
    from .core.tools.structured_output import NAME, StructuredOutput

    tool = StructuredOutput(schema)
    session.add_tool(tool)
    session.add_hooks([Hook("Stop", "(the structured output check)", callback=tool.enforce)])
    session.change_system(
        lambda system: (
            f"{system}\n\nThis run wants its answer as structured data: when the "
            f"work is done, call the {NAME} tool once with the final answer as its "
            "input, matching its schema."
        )
    )
