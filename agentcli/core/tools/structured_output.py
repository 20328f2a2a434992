"""``structured_output``: the final answer as JSON that fits a schema (``--json-schema``, the Agent SDK's
``output_format``), as Claude Code's ``StructuredOutput`` tool gives it.

The schema is the tool's input schema, so the model answers by calling it. Each call is checked against
the schema with ``jsonschema``; one that does not fit gets the validation error back as the tool's
error, so the model can try again. A Stop hook (``enforce``) sends the model back when it ends a turn
without a valid call. Both count as attempts: after ``MAX_ATTEMPTS`` the turn ends without structured
output, and the front end reports Claude Code's ``error_max_structured_output_retries``.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ToolError
from .base import Tool, ToolContext

NAME = "structured_output"
MAX_ATTEMPTS = 5  # invalid calls and answers without a call, per prompt
REMINDER = (f"You MUST call the {NAME} tool to complete this request: your final answer is its input, "
            "which must match the requested JSON schema. Call it now.")


class SchemaError(ValueError):
    """The schema itself cannot be used; the message says why in one sentence."""


def checked_schema(schema: Any) -> dict[str, Any]:
    """The schema, if a tool can take it: a valid JSON Schema for an object. SchemaError otherwise."""
    from jsonschema import SchemaError as InvalidSchema, validators

    if not isinstance(schema, dict):
        raise SchemaError("the schema must be a JSON object, such as {\"type\": \"object\", \"properties\": …}")
    if schema.get("type") != "object":
        raise SchemaError("the schema must describe an object (\"type\": \"object\"): the answer is a tool's input")
    try:
        validators.validator_for(schema).check_schema(schema)
    except InvalidSchema as exc:
        raise SchemaError(f"not a valid JSON Schema: {exc.message}") from None
    return schema


class StructuredOutput(Tool):
    name = NAME
    description = ("Return your final answer in the requested structured format: call this tool exactly once, "
                   "at the end, with the answer as its input. It must match the schema; if it does not, the "
                   "error says what to fix, and you call it again.")
    kind = "read"  # changes nothing: never asks
    main_only = True  # the main agent's answer: a subagent is never offered it
    workspace_paths = False  # a 'path' in the answer is data, not a file to confine

    def __init__(self, schema: dict[str, Any]) -> None:
        from jsonschema import validators

        self.answer_schema = schema
        self.validator: Any = validators.validator_for(schema)(schema)
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
        errors = sorted(self.validator.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path])
        if errors:
            self.attempts += 1
            listed = "; ".join(f"at {'/'.join(map(str, e.absolute_path)) or 'the top level'}: {e.message}"
                               for e in errors[:5])
            raise ToolError(f"The output does not match the schema ({listed}). Call {NAME} again with output "
                            "that matches it.")
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
