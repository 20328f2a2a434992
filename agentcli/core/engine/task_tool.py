"""The task tool, which hands an errand to a subagent with a brief, and message_subagent, which steers a running one."""

from __future__ import annotations

from typing import Any

from ..content import quoted
from ..errors import ToolError
from ..model.catalogue import EFFORT_ORDER
from ..tools import Tool
from ..tools.base import ToolContext
from . import attempts
from .agents import AgentType

# Best-of-N (attempts.py): its own parameters, kept apart from the rest of the schema.
ATTEMPTS_SCHEMA: dict[str, Any] = {
    "attempts": {
        "type": "integer",
        "minimum": attempts.MIN,
        "maximum": attempts.MAX,
        "description": (
            "Best-of-N edits: N subagents on this brief, each in its own worktree, compared for you; the user merges "
            "one."
        ),
    },
    "check": {"type": "string", "description": "With attempts: a test command run in each worktree."},
    "attempt_models": {"type": "array", "items": {"type": "string"}, "description": "With attempts: models, in turn."},
}

BRIEF_PARTS = (
    ("known", "What is already known"),
    ("files", "Files to start from"),
    ("constraints", "Constraints"),
    ("deliverable", "What to deliver"),
)


def brief(args: dict[str, Any]) -> tuple[str, list[str]]:
    """The child's first message: ``prompt``, then each structured part of the brief given as a section;
    and the files the brief names. (The registry has checked each part's type against the schema.)"""
    files = [f.strip() for f in args.get("files") or [] if f.strip()]
    sections = [str(args["prompt"])]
    for name, title in BRIEF_PARTS:
        value = "\n".join(f"- {f}" for f in files) if name == "files" else str(args.get(name) or "")
        if value.strip():
            sections.append(f"# {title}\n{value.strip()}")
    return "\n\n".join(sections), files


TYPE_LINE = 200  # characters of an agent type's description in the listing: its prompt comes only to its children


def one_line(description: str) -> str:
    """An agent type's description as the task tool lists it: one line, cut at ``TYPE_LINE``."""
    line = " ".join(description.split())
    return line if len(line) <= TYPE_LINE else line[: TYPE_LINE - 1].rstrip() + "…"


class TaskTool(Tool):
    name = "task"
    role = "delegate"  # it starts subagents, which never start their own
    preview = "delegate"  # the child it starts tells its story
    claude_name = "Task"
    claude_aliases = ("Agent",)
    on_demand = False  # the main agent's delegation
    brings_up = ("message_subagent",)  # a background child can be messaged
    main_only = True
    kind = "task"
    quotes_own_output = True  # the child's answer is quoted where its report is written (SubagentReport.for_parent)
    key_arg = "description"
    description = ""
    input_schema: dict[str, Any] = {}  # type: ignore[misc]  # each TaskTool lists its own agent types (below)

    def __init__(self, agent_types: dict[str, AgentType] | None = None) -> None:
        from .agents import REVIEWER_PREFIX, built_in

        self.agent_types = {
            name: t for name, t in (agent_types or built_in()).items() if not name.startswith(REVIEWER_PREFIX)
        }  # /review's own: never in a request
        listing = "\n".join(f"- {t.name}: {one_line(t.description)}" for t in self.agent_types.values())
        self.description = (  # type: ignore[misc]  # likewise
            "Hand a self-contained errand to a subagent, which works in a fresh context with its own tools and "
            "returns its answer, a receipt of its calls and a status line. It knows nothing of this conversation: "
            "`prompt` is the complete brief (goal, what you know, where to look, what to report). Task calls in "
            "one message run in parallel.\n\nAgent types (subagent_type):\n" + listing
        )
        self.input_schema = {
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "3-5 words shown to the user."},
                "prompt": {"type": "string"},
                "subagent_type": {
                    "type": "string",
                    "enum": list(self.agent_types),
                    "description": "Default general-purpose.",
                },
                "isolation": {
                    "type": "string",
                    "enum": ["worktree"],
                    "description": ("It edits in its own git worktree; the user merges or discards its diff."),
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": (
                        "Return its id at once; its result arrives as a later message (work on, or end your turn)."
                    ),
                },
                "resume": {
                    "type": "string",
                    "description": (
                        "A finished subagent's id (sa-3): it goes on, history kept, with `prompt` as its next message."
                    ),
                },
                # Optional parts of the brief, each a section of the child's prompt.
                "known": {"type": "string", "description": "What you already found."},
                "files": {"type": "array", "items": {"type": "string"}, "description": "Paths to start from."},
                "constraints": {"type": "string", "description": "What it must not do or touch."},
                "deliverable": {"type": "string", "description": "What its answer must hold."},
                "token_budget": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Tokens after which it is asked to wrap up and answer.",
                },
                "cost_budget": {"type": "number", "exclusiveMinimum": 0, "description": "Likewise in USD."},
                "model": {"type": "string", "description": "haiku, sonnet, opus or an id."},
                "effort": {"type": "string", "enum": list(EFFORT_ORDER)},
                **ATTEMPTS_SCHEMA,
            },
            "required": ["description", "prompt"],
            "additionalProperties": False,
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        # Only the main agent gets here: the registry refuses task below it (the one no-recursion guard).
        assert ctx.subagents is not None, "a subagent's context has no subagents of its own"
        type_name = args.get("subagent_type")
        if type_name and type_name not in ctx.subagents.agent_types:
            raise ToolError(f"No agent type '{type_name}'; choose one of {', '.join(ctx.subagents.agent_types)}.")
        prompt, files = brief(args)
        if args.get("attempts") is not None:  # best-of-N: N isolated children, compared (attempts.py)
            from .subagents import Subagents

            assert isinstance(ctx.subagents, Subagents), "the session's subagents run the attempts"
            return await attempts.run(ctx.subagents, args, prompt, files, ctx)
        try:
            text, failed = await ctx.subagents.run(
                args["description"],
                prompt,
                type_name,
                ctx,
                background=bool(args.get("run_in_background")),
                resume=args.get("resume") or None,
                isolation=args.get("isolation"),
                files=files,
                token_budget=args.get("token_budget"),
                cost_budget=args.get("cost_budget"),
                model=args.get("model"),
                effort=args.get("effort"),
            )
        except ToolError as exc:  # why it could not start (git's words, for a worktree): quoted as other tools' are
            raise ToolError(quoted(str(exc))) from None
        if failed:
            raise ToolError(text)
        return text


class MessageSubagent(Tool):
    """The main agent's word to a running child: a follow-up it reads at its next turn boundary, or a
    request to wrap up now and answer with what it has."""

    name = "message_subagent"
    brief = "message a running subagent"  # its line in the index of tools on demand (on_demand.py)
    main_only = True
    kind = "task"
    key_arg = "subagent_id"
    description = (
        "Send a running subagent (one started with run_in_background, or running alongside) a message it "
        "reads before its next model call, marked as from you: a correction, a narrower goal, a fact it "
        "needs. wrap_up: true asks it to stop working now and answer with what it has, in one more turn "
        "without tools; its result then arrives as usual. A finished subagent takes no messages: continue "
        "it with task resume instead."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "subagent_id": {"type": "string", "description": "The running subagent's id, e.g. sa-3."},
            "message": {"type": "string", "description": "What it should know or do differently."},
            "wrap_up": {"type": "boolean", "description": "Ask it to finish now with what it has."},
        },
        "required": ["subagent_id"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        if ctx.subagents is None:  # a child is never offered this tool; refused if it calls it anyway
            raise ToolError("Only the main agent can message subagents.")
        ident, message = args["subagent_id"], str(args.get("message") or "")
        if not message.strip() and not args.get("wrap_up"):
            raise ToolError("Give a message, or wrap_up: true, or both.")
        why = ctx.subagents.steer(ident, message, source="main agent") if message.strip() else ""
        why = why or (ctx.subagents.wrap_up(ident, source="main agent") if args.get("wrap_up") else "")
        if why:
            raise ToolError(why)
        said = "It reads your message" if message.strip() else "It was asked to wrap up"
        if message.strip() and args.get("wrap_up"):
            said = "It reads your message and wraps up"
        return f"{said} before its next model call; its result arrives as usual."
