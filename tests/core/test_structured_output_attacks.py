"""--json-schema attacked (issue 37): a schema's remote ``$ref`` would have made agentcli fetch it from its own
process, a schema thousands of levels deep ended in a traceback, and a pattern such as ``^(a+)+$`` against a
long answer held the event loop for as long as Python's ``re`` took. No reference is fetched, a deep schema is
one sentence, and an answer is checked in a process stopped when its time is up."""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.tools import structured_output
from agentcli.core.tools.structured_output import SchemaError, StructuredOutput, checked_schema
from tests.core.test_web_fetch_attacks import workers
from tests.e2e.test_headless import agentcli
from tests.loopback import http_site
from tests.waiting import until


class Schemas(BaseHTTPRequestHandler):
    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        Schemas.asked.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def schemas():
    Schemas.asked = []
    with http_site(Schemas) as url:
        yield url


def remote(base: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"name": {"$ref": f"{base}/name.json"}}, "required": ["name"]}


def test_a_remote_ref_is_refused_when_the_schema_is_read(schemas, repo):
    with pytest.raises(SchemaError, match="points outside the schema, and agentcli fetches no schema reference"):
        checked_schema(remote(schemas))
    for relative in ({"$ref": "name.json"}, {"$id": f"{schemas}/root.json", "$ref": "name.json"}):
        with pytest.raises(SchemaError, match="points outside the schema"):
            checked_schema({"type": "object", "properties": {"name": relative}})
    done = agentcli("-p", "who?", "--json-schema", json.dumps(remote(schemas)), cwd=repo)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "fetches no schema reference" in done.stderr
    local = {"type": "object", "$defs": {"name": {"type": "string"}}, "properties": {"name": {"$ref": "#/$defs/name"}}}
    assert checked_schema(local) == local
    assert Schemas.asked == []


async def test_a_remote_ref_that_reaches_the_tool_is_not_fetched_either(schemas, tmp_path):
    tool = StructuredOutput(remote(schemas))  # as the Agent SDK's output_format would give it, unread
    with pytest.raises(ToolError, match="could not be checked against the schema .*Unresolvable"):
        await tool.run({"name": "Ada"}, None)  # type: ignore[arg-type]  # the tool reads no context
    assert Schemas.asked == [] and tool.value is None and tool.attempts == 1


def test_a_schema_thousands_of_levels_deep_is_one_sentence(repo, tmp_path):
    deep: dict[str, Any] = {}
    for _ in range(3000):
        deep = {"items": deep}
    schema = tmp_path / "deep.json"
    schema.write_text('{"type": "object", "properties": {"a": ' + '{"items": ' * 3000 + "{}" + "}" * 3000 + "}}")
    done = agentcli("-p", "hi", "--json-schema", str(schema), cwd=repo)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--json-schema: the JSON nests too deep to read" in done.stderr
    with pytest.raises(SchemaError, match="nests more than 64 levels deep"):
        checked_schema({"type": "object", "properties": {"a": deep}})


async def test_a_pattern_that_takes_forever_is_stopped_and_the_answer_not_taken(monkeypatch):
    schema = checked_schema({"type": "object", "properties": {"word": {"type": "string", "pattern": "^(a+)+$"}}})
    tool = StructuredOutput(schema)
    assert await tool.run({"word": "aaa"}, None) == "Structured output provided successfully."  # type: ignore[arg-type]
    tool.begin()
    monkeypatch.setattr(structured_output, "CHECK_SECONDS", 1.0)
    # Another task of the loop sees the checking process while it works: the loop ran on meanwhile (a check on
    # the loop would have let this task run only after the check, when the process is gone).
    watching = asyncio.ensure_future(until(lambda: bool(workers()), "a checking process, seen while it works"))
    try:
        with pytest.raises(ToolError, match="could not be checked against the schema .*a pattern in the schema"):
            await tool.run({"word": "a" * 60 + "!"}, None)  # type: ignore[arg-type]
    finally:
        seen = watching.done() and watching.exception() is None
        watching.cancel()
    assert seen  # the event loop ran on while the answer was checked
    assert tool.value is None and tool.attempts == 1
    await until(lambda: not workers(), "the checking process to be gone", detail=lambda: str(workers()))
