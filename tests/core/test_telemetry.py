"""OpenTelemetry traces from the event stream: one trace per prompt, one span per model call, tool call and
subagent run in it, with the session id, agent ids, parent ids, tokens, cost and status; and off, loading
nothing, unless OTEL_* asks for it."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentcli.core.engine import telemetry
from tests.fakes.anthropic_server import offers_tool, text, tool_use


def is_main(body):
    return offers_tool(body, "task")


async def test_a_turn_with_a_tool_call_and_a_subagent_gives_spans_with_agent_and_parent_ids(server, make_session, repo):
    server.when(
        is_main,
        tool_use("glob", {"pattern": "**/*.py"}),
        tool_use("task", {"description": "Find the handler", "prompt": "Find handle_payment."}),
        text("Done."),
    )
    server.when(lambda body: not is_main(body), tool_use("grep", {"pattern": "def handle_payment"}), text("Not found."))
    session, _ = make_session()
    exporter = InMemorySpanExporter()
    session.subscribe(telemetry.Telemetry(SimpleSpanProcessor(exporter), session.id))
    await session.send("Look around, then delegate")
    spans = exporter.get_finished_spans()
    by_name: dict[str, list[Any]] = {}  # the exporter's spans, whose attributes mypy takes as maybe None
    for span in spans:
        by_name.setdefault(span.name.split(" ")[0], []).append(span)
    main_chats = [s for s in by_name["chat"] if s.attributes["agentcli.agent_id"] == "main"]
    child_chats = [s for s in by_name["chat"] if s.attributes["agentcli.agent_id"] == "sa-1"]
    assert len(main_chats) == 3 and len(child_chats) == 2
    # One trace for the prompt, under its root span, and the session's id on every span (a prompt made three
    # traces, and no span said which session it was of).
    [prompt] = [s for s in by_name["invoke_agent"] if s.name == "invoke_agent agentcli"]
    assert prompt.parent is None and prompt.attributes["agentcli.status"] == "end_turn"
    assert {s.context.trace_id for s in spans} == {prompt.context.trace_id}
    assert all(
        s.attributes and s.attributes["session.id"] == s.attributes["gen_ai.conversation.id"] == session.id
        for s in spans
    )
    assert all(s.parent.span_id == prompt.context.span_id for s in [*main_chats, tools_of(spans)["glob"]])
    # A model call: its model, tokens, how it ended; the main agent has no parent agent.
    first = main_chats[0]
    assert first.attributes["gen_ai.request.model"] and first.name == f"chat {first.attributes['gen_ai.request.model']}"
    assert first.attributes["gen_ai.usage.input_tokens"] > 0 and first.attributes["gen_ai.usage.output_tokens"] > 0
    assert first.attributes["agentcli.status"] == "tool_use" and first.status.status_code == StatusCode.OK
    assert "agentcli.parent_agent_id" not in first.attributes
    assert "agentcli.cost_usd" in first.attributes
    # The tool calls, each its own span with the call's id.
    tools = {s.attributes["gen_ai.tool.name"]: s for s in by_name["execute_tool"]}
    assert set(tools) == {"glob", "task", "grep"}
    assert (
        tools["glob"].attributes["agentcli.agent_id"] == "main" and tools["glob"].attributes["agentcli.status"] == "ok"
    )
    # The subagent's run is a child of the task call; its calls are children of its run and name their parent agent.
    [run] = [s for s in by_name["invoke_agent"] if s is not prompt]
    assert run.parent.span_id == tools["task"].context.span_id
    assert run.attributes["agentcli.agent_id"] == "sa-1" and run.attributes["agentcli.parent_agent_id"] == "main"
    assert run.attributes["agentcli.status"] == "done" and run.attributes["agentcli.turns"] == 2
    assert run.attributes["gen_ai.usage.input_tokens"] == sum(
        s.attributes["gen_ai.usage.input_tokens"] for s in child_chats
    )
    for span in [*child_chats, tools["grep"]]:
        assert span.attributes["agentcli.parent_agent_id"] == "main"
        assert span.parent.span_id == run.context.span_id
        assert span.context.trace_id == tools["task"].context.trace_id
    assert tools["grep"].attributes["agentcli.agent_id"] == "sa-1"
    server.assert_no_rejections()


def tools_of(spans) -> dict[str, Any]:
    return {s.attributes["gen_ai.tool.name"]: s for s in spans if s.name.startswith("execute_tool ")}


async def test_a_failed_tool_call_is_an_error_span_and_the_next_prompt_a_trace_of_its_own(server, make_session):
    server.when(lambda body: True, tool_use("read_file", {"path": "no/such/file.py"}), text("ok"), text("again"))
    session, _ = make_session()
    exporter = InMemorySpanExporter()
    session.subscribe(telemetry.Telemetry(SimpleSpanProcessor(exporter), session.id))
    await session.send("Read it")
    [read] = [s for s in exporter.get_finished_spans() if s.name == "execute_tool read_file"]
    assert read.status.status_code == StatusCode.ERROR
    assert read.attributes and read.attributes["agentcli.status"] == "error"
    await session.send("Once more")
    spans = exporter.get_finished_spans()
    prompts = [s for s in spans if s.name == "invoke_agent agentcli"]
    assert len(prompts) == 2 and len({s.context.trace_id for s in spans}) == 2
    [second] = [s for s in spans if s.context.trace_id == prompts[1].context.trace_id and s is not prompts[1]]
    assert second.name.startswith("chat") and second.parent and second.parent.span_id == prompts[1].context.span_id


def test_the_variables_that_turn_it_on():
    assert not telemetry.wanted({})
    assert not telemetry.wanted({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"})
    assert not telemetry.wanted({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"})
    assert telemetry.wanted({"OTEL_TRACES_EXPORTER": "otlp"})
    assert telemetry.wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    warnings: list[str] = []
    assert (
        telemetry.start({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, warnings.append, "S1")
        is None
    )
    assert warnings == [
        "agentcli sends OTLP traces over http/protobuf only, not grpc: set OTEL_EXPORTER_OTLP_PROTOCOL="
        "http/protobuf and point the endpoint at the collector's HTTP port (4318)."
    ]


STARTS = (
    "import sys; from agentcli.core.engine import telemetry; import agentcli.core.session; "
    "t = telemetry.start(__import__('os').environ, print, 'S1'); "
    "print(type(t).__name__, any(m.split('.')[0] == 'opentelemetry' for m in sys.modules))"
)


def test_without_otel_variables_a_session_loads_no_opentelemetry(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", STARTS], capture_output=True, text=True, timeout=60, check=True, env=env
    )
    assert out.stdout.split() == ["NoneType", "False"]
    asked = subprocess.run(
        [sys.executable, "-c", STARTS],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**env, "OTEL_TRACES_EXPORTER": "console"},
    )
    assert asked.stdout.split() == ["Telemetry", "True"]
