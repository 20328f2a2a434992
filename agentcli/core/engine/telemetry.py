"""Optional OpenTelemetry traces, fed from the session's event stream (docs/README.md, "Telemetry").

Off unless the standard ``OTEL_*`` variables ask for it (``wanted``). This module imports nothing of
OpenTelemetry at import time: only ``start`` does, so a session without those variables never loads it.

One trace per prompt: its root span (``invoke_agent agentcli``) runs from the user's message to the main
agent's answer (TurnFinished); a turn of the main agent that no message started (background results read,
a Stop hook's objection after the answer) is a root of its own. In it: one span per model call (``chat``,
from TurnStarted or the call's UsageUpdated to its AssistantMessage or TurnFinished), one per tool call
(``execute_tool NAME``) and one per subagent run (``invoke_agent TYPE``), a child of the task call that
started it; a subagent's own spans are children of its run. Each carries the session's id (``session.id``
and ``gen_ai.conversation.id``), ``agentcli.agent_id`` and, for a subagent's, ``agentcli.parent_agent_id``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..events import (
    MAIN,
    AssistantMessage,
    Event,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageUpdated,
    UserMessage,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.trace import Span

INSTALL = "pip install 'agentcli[otel]'"


def wanted(env: Mapping[str, str]) -> bool:
    """Whether the OTEL_* variables ask for traces: an exporter other than ``none``, or an OTLP endpoint."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return exporters != "none"
    return bool(env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def start(env: Mapping[str, str], warn: Callable[[str], None], session_id: str) -> Telemetry | None:
    """The session's telemetry sink when OTEL_* asks for one, else None; what cannot be done is one warning."""
    if not wanted(env):
        return None
    try:
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
    except ImportError:
        warn(f"OTEL_* variables ask for telemetry, but OpenTelemetry is not installed ({INSTALL}): no spans are sent.")
        return None
    exporters: list[SpanExporter] = []
    for name in [n.strip() for n in env.get("OTEL_TRACES_EXPORTER", "otlp").lower().split(",") if n.strip()]:
        if name == "console":
            exporters.append(ConsoleSpanExporter(out=sys.stderr))
        elif name == "otlp":
            protocol = (
                env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf"
            )
            if protocol != "http/protobuf":
                warn(
                    f"agentcli sends OTLP traces over http/protobuf only, not {protocol}: set "
                    "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and point the endpoint at the collector's HTTP port (4318)."
                )
                continue
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ImportError:
                warn(f"OTEL_TRACES_EXPORTER=otlp needs the OTLP exporter ({INSTALL}): no spans are sent over OTLP.")
                continue
            # It reads the other OTEL_EXPORTER_OTLP_* itself; the headers (the collector's credentials) are
            # secrets, held in memory rather than in os.environ (secret_env), so they are handed to it.
            exporters.append(OTLPSpanExporter(headers=_headers(env)))
        elif name != "none":
            warn(f"OTEL_TRACES_EXPORTER={name} is not one agentcli knows (otlp, console, none): it is ignored.")
    if not exporters:
        return None
    telemetry = Telemetry(BatchSpanProcessor(exporters[0]), session_id)
    for more in exporters[1:]:
        telemetry.provider.add_span_processor(BatchSpanProcessor(more))
    return telemetry


def _headers(env: Mapping[str, str]) -> dict[str, str] | None:
    """The headers OTEL_EXPORTER_OTLP_TRACES_HEADERS (else OTEL_EXPORTER_OTLP_HEADERS) asks for; None if neither."""
    from opentelemetry.util.re import parse_env_headers

    text = env.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or env.get("OTEL_EXPORTER_OTLP_HEADERS")
    return dict(parse_env_headers(text, liberal=True)) if text else None


class Telemetry:
    """A session sink that turns events into spans, sent through ``processor``."""

    def __init__(self, processor: SpanProcessor, session_id: str) -> None:
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider

        from ... import __version__

        resource = Resource.create()  # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, as the SDK reads them
        if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
            resource = resource.merge(Resource({SERVICE_NAME: "agentcli", "service.version": __version__}))
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(processor)
        self.tracer = self.provider.get_tracer("agentcli", __version__)
        self.session = {"session.id": session_id, "gen_ai.conversation.id": session_id}  # on every span
        self.prompt: Span | None = None  # the main agent's prompt in flight: its trace's root
        self.models: dict[str, Span] = {}  # agent id → its model call in flight
        self.tools: dict[str, Span] = {}  # tool_use id → the call's span, until it finishes
        self.callers: dict[str, str] = {}  # tool_use id → the agent that made the call
        self.agents: dict[str, Span] = {}  # subagent id → its run's span
        self.parents: dict[str, str] = {}  # subagent id → the agent that started it

    def __call__(self, event: Event) -> None:
        match event:
            case UserMessage() if event.agent_id == MAIN and event.origin == "user":
                self._end_prompt("unfinished")
                self.prompt = self._start(
                    "invoke_agent agentcli",
                    MAIN,
                    {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "agentcli"},
                )
            case TurnStarted():
                if event.agent_id == MAIN and self.prompt is None:  # a turn no message started
                    self.prompt = self._start(
                        "invoke_agent agentcli",
                        MAIN,
                        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "agentcli"},
                    )
                self._end_model(event.agent_id, None)
                self.models[event.agent_id] = self._start(
                    "chat", event.agent_id, {"gen_ai.operation.name": "chat", "agentcli.turn": event.turn}
                )
            case UsageUpdated():
                span = self.models.get(event.agent_id)
                if span is None:  # a call that is not a turn (a cut-off subagent's summary)
                    span = self.models[event.agent_id] = self._start(
                        "chat", event.agent_id, {"gen_ai.operation.name": "chat"}
                    )
                if event.model:
                    span.set_attribute("gen_ai.request.model", event.model)
                    span.update_name(f"chat {event.model}")
                span.set_attributes(_usage(event.usage))
            case AssistantMessage():
                self._end_model(event.agent_id, event.stop_reason or "end_turn")
            case TurnFinished():
                if event.stop_reason in ("error", "cancelled"):
                    self._end_model(event.agent_id, event.stop_reason)
                if event.agent_id == MAIN and event.stop_reason != "tool_use":  # not a step: the answer, or a stop
                    self._end_prompt(event.stop_reason or "end_turn")
            case ToolCallStarted():
                self.callers[event.id] = event.agent_id
                self.tools[event.id] = self._start(
                    f"execute_tool {event.name}",
                    event.agent_id,
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": event.name,
                        "gen_ai.tool.call.id": event.id,
                        "agentcli.tool.kind": event.kind,
                    },
                )
            case ToolCallFinished():
                if (span := self.tools.pop(event.id, None)) is not None:
                    status = "denied" if event.denied else "error" if event.is_error else "ok"
                    self._finish(span, status, error=event.is_error)
            case SubagentStarted():
                parent = self.callers.get(event.parent_tool_use_id or "", MAIN)
                self.parents[event.id] = parent
                self.agents[event.id] = self._start(
                    f"invoke_agent {event.subagent_type}",
                    event.id,
                    {
                        "gen_ai.operation.name": "invoke_agent",
                        "gen_ai.agent.name": event.subagent_type,
                        "agentcli.subagent.description": event.description,
                        "agentcli.subagent.segment": event.segment,
                        "agentcli.subagent.background": event.background,
                    },
                    within=self.tools.get(event.parent_tool_use_id or "") or self.agents.get(parent),
                )
            case SubagentFinished():
                self._end_model(event.id, None)
                if (span := self.agents.pop(event.id, None)) is not None:
                    span.set_attributes({**_usage(event.usage), "agentcli.turns": event.turns})
                    self._finish(span, event.status, error=event.status != "done")

    def _start(self, name: str, agent_id: str, attributes: dict[str, Any], within: Span | None = None) -> Span:
        from opentelemetry import trace

        if within is None:  # a subagent's calls sit inside its run, the main agent's inside its prompt
            within = self.agents.get(agent_id) if agent_id != MAIN else self.prompt
        context = trace.set_span_in_context(within) if within is not None else None
        ids = {**self.session, "agentcli.agent_id": agent_id, "gen_ai.agent.id": agent_id}
        if agent_id != MAIN:
            ids["agentcli.parent_agent_id"] = self.parents.get(agent_id, MAIN)
        return self.tracer.start_span(name, context=context, attributes={**ids, **attributes})

    def _end_model(self, agent_id: str, status: str | None) -> None:
        """End the agent's model call in flight; ``status`` None: it was left open (an error nobody reported)."""
        if (span := self.models.pop(agent_id, None)) is not None:
            self._finish(span, status or "unfinished", error=status in (None, "error", "cancelled"))

    def _end_prompt(self, status: str) -> None:
        """End the prompt in flight (the main agent's model call in it first)."""
        self._end_model(MAIN, None)
        if (span := self.prompt) is not None:
            self.prompt = None
            self._finish(span, status, error=status in ("unfinished", "error", "cancelled"))

    @staticmethod
    def _finish(span: Span, status: str, *, error: bool) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("agentcli.status", status)
        span.set_status(Status(StatusCode.ERROR, status) if error else Status(StatusCode.OK))
        span.end()

    def close(self) -> None:
        """End what is still open and send what is queued (the session is closing)."""
        for agent_id in list(self.models):
            self._end_model(agent_id, "cancelled")
        for spans in (self.tools, self.agents):
            for span in spans.values():
                self._finish(span, "interrupted", error=True)
            spans.clear()
        self._end_prompt("cancelled")
        self.provider.shutdown()


def _usage(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "agentcli.usage.cache_read_tokens": usage.cache_read_tokens,
        "agentcli.usage.cache_write_tokens": usage.cache_write_tokens,
    }
    if usage.cost is not None:
        out["agentcli.cost_usd"] = usage.cost
    return out
