"""``structured_output``: the final answer as JSON that fits a schema (``--json-schema``, the Agent SDK's
``output_format``), as Claude Code's ``StructuredOutput`` tool gives it.

The schema is the tool's input schema, so the model answers by calling it. Each call is checked against
the schema with ``jsonschema``; one that does not fit gets the validation error back as the tool's
error, so the model can try again. A Stop hook (``enforce``) sends the model back when it ends a turn
without a valid call. Both count as attempts: after ``MAX_ATTEMPTS`` the turn ends without structured
output, and the front end reports Claude Code's ``error_max_structured_output_retries``.

The schema is the user's, but what it meets is not: the answer comes from a model that may have read a
hostile page. So no schema reference is ever fetched (a ``$ref`` outside the schema is refused when it is
read, and the validator's registry retrieves nothing: jsonschema would otherwise fetch it from agentcli's
own process, with no sandbox and no address check), a schema nested deeper than ``MAX_DEPTH`` is refused
in one sentence, and an answer is checked in a process of its own (``system.worker``) that is stopped
after ``CHECK_SECONDS``: a ``pattern`` such as ``^(a+)+$`` can take Python's ``re`` years on a long
answer, and an answer not checked in time is not taken.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urljoin

from ..errors import ToolError
from ..system.worker import WorkerError, WorkerTimeout, run_in_worker
from .base import Tool, ToolContext

NAME = "structured_output"
MAX_ATTEMPTS = 5  # invalid calls and answers without a call, per prompt
MAX_DEPTH = 64  # levels of nesting of a schema
CHECK_SECONDS = 10.0  # for checking one answer against the schema
REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
REMINDER = (
    f"You MUST call the {NAME} tool to complete this request: your final answer is its input, "
    "which must match the requested JSON schema. Call it now."
)


class SchemaError(ValueError):
    """The schema itself cannot be used; the message says why in one sentence."""


def checked_schema(schema: Any) -> dict[str, Any]:
    """The schema, if a tool can take it: a valid JSON Schema for an object. SchemaError otherwise."""
    from jsonschema import SchemaError as InvalidSchema
    from jsonschema import validators

    if not isinstance(schema, dict):
        raise SchemaError('the schema must be a JSON object, such as {"type": "object", "properties": …}')
    if schema.get("type") != "object":
        raise SchemaError('the schema must describe an object ("type": "object"): the answer is a tool\'s input')
    references = walk(schema)
    try:
        validators.validator_for(schema).check_schema(schema)
    except InvalidSchema as exc:
        raise SchemaError(f"not a valid JSON Schema: {exc.message}") from None
    outside = outside_references(schema, references)
    if outside:
        raise SchemaError(
            f"the $ref {outside!r} points outside the schema, and agentcli fetches no schema "
            'reference; put what it names under "$defs" and refer to it with "#/$defs/…"'
        )
    return schema


def walk(schema: Any) -> list[str]:
    """The references the schema makes; SchemaError when it nests deeper than ``MAX_DEPTH`` (without
    recursion: a schema thousands of levels deep is refused, not a traceback)."""
    references: list[str] = []
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise SchemaError(f"the schema nests more than {MAX_DEPTH} levels deep, more than agentcli takes")
        if isinstance(value, dict):
            references += [ref for key in REFERENCES if isinstance(ref := value.get(key), str)]
            stack += [(item, depth + 1) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, depth + 1) for item in value]
    return references


def outside_references(schema: dict[str, Any], references: list[str]) -> str:
    """The first reference that names no part of the schema itself (nor a meta-schema jsonschema carries),
    which a validator would fetch; "" when there is none. Read strictly: a reference relative to an inner
    ``$id`` counts as outside unless it also resolves from the top."""
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]  # the meta-schemas jsonschema carries

    given = schema.get("$id")
    base = given if isinstance(given, str) else ""
    inside = {urljoin(base, value).rstrip("#") for value in _ids(schema)} | {base.rstrip("#")}
    for ref in references:
        target = urljoin(base, ref.split("#", 1)[0]) if ref.split("#", 1)[0] else base
        if target.rstrip("#") in inside or target in REGISTRY:
            continue
        return ref
    return ""


def _ids(value: Any) -> list[str]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found += [item["$id"]] if isinstance(item.get("$id"), str) else []
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return found


def answer_errors(given: dict[str, Any]) -> list[str]:
    """Why ``given["answer"]`` does not fit ``given["schema"]``, at most five reasons ([] when it fits). Run
    in a worker process (``StructuredOutput.run``); its registry refuses to retrieve any reference."""
    from jsonschema import validators
    from jsonschema_specifications import REGISTRY
    from referencing import Registry
    from referencing.exceptions import NoSuchResource

    def retrieve(uri: str) -> Any:
        raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # never fetched (attrs' keyword, unseen by mypy)

    schema = given["schema"]
    registry: Any = Registry(retrieve=retrieve).combine(REGISTRY)  # type: ignore[call-arg]  # the meta-schemas only
    validator = validators.validator_for(schema)(schema, registry=registry)
    errors = sorted(validator.iter_errors(given["answer"]), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"at {'/'.join(map(str, e.absolute_path)) or 'the top level'}: {e.message}" for e in errors[:5]]


class StructuredOutput(Tool):
    name = NAME
    claude_name = "StructuredOutput"  # --json-schema's answer
    on_demand = False  # the answer a --json-schema run must call
    description = (
        "Return your final answer in the requested structured format: call this tool exactly once, "
        "at the end, with the answer as its input. It must match the schema; if it does not, the "
        "error says what to fix, and you call it again."
    )
    kind = "read"  # changes nothing: never asks
    main_only = True  # the main agent's answer: a subagent is never offered it
    workspace_paths = False  # a 'path' in the answer is data, not a file to confine

    def __init__(self, schema: dict[str, Any]) -> None:
        self.answer_schema = schema
        # What agentcli's own input check reads: any object. jsonschema checks the answer instead (``run``),
        # with the whole of JSON Schema, and each answer that does not fit counts as an attempt.
        self.input_schema = {"type": "object", "additionalProperties": True}  # type: ignore[misc]
        self.value: dict[str, Any] | None = None
        self.attempts = 0

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.answer_schema}

    def begin(self) -> None:
        """A new prompt: it needs its own answer."""
        self.value, self.attempts = None, 0

    @property
    def gave_up(self) -> bool:
        return self.value is None and self.attempts >= MAX_ATTEMPTS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        try:
            errors = await run_in_worker(
                f"{__name__}:answer_errors", {"schema": self.answer_schema, "answer": args}, CHECK_SECONDS
            )
        except (WorkerError, ValueError, RecursionError) as exc:  # ValueError, RecursionError: not JSON to send
            self.attempts += 1
            why = (
                "a pattern in the schema may take too long on it"
                if isinstance(exc, WorkerTimeout)
                else str(exc) or type(exc).__name__
            )
            raise ToolError(
                f"The output could not be checked against the schema ({why}), so it is not taken. Call "
                f"{NAME} again with a shorter, simpler output that matches the schema."
            ) from None
        if errors:
            self.attempts += 1
            raise ToolError(
                f"The output does not match the schema ({'; '.join(errors)}). Call {NAME} again with "
                "output that matches it."
            )
        self.value = json.loads(json.dumps(args))  # a copy the history cannot change
        return "Structured output provided successfully."

    async def enforce(self, fields: dict[str, Any]) -> dict[str, Any]:
        """The Stop hook: while no valid answer came and attempts are left, the turn goes on."""
        if self.value is not None or self.gave_up:
            return {}
        self.attempts += 1
        if self.gave_up:
            return {}
        return {"decision": "block", "reason": REMINDER}
