"""Tests of the stand-in Anthropic server, driven through the real anthropic SDK."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2 as httpx  # the SDK's HTTP client (anthropic 2.x, which pyproject.toml pins)
import pytest
from anthropic.types import (
    CacheControlEphemeralParam,
    MessageParam,
    TextBlock,
    ToolParam,
    ToolResultBlockParam,
    ToolSearchToolSearchResultBlock,
    ToolUseBlock,
)

from tests.fakes.anthropic_server import (
    NO_REPLY_MESSAGE,
    FakeAnthropic,
    error,
    first_user_text,
    reply,
    sse_events,
    stream_error,
    text,
    text_block,
    tool_use,
    tool_use_block,
    validate_request,
)
from tests.fakes.scenarios import demo_responder, extract_terms, parse_grep_hits
from tests.narrow import of

ROOT = Path(__file__).resolve().parents[2]
MODEL = "claude-test"


def schema(**props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}}


TOOLS: list[ToolParam] = [
    {"name": "grep", "description": "search", "input_schema": schema(pattern="string", path="string")},
    {"name": "read_file", "description": "read", "input_schema": schema(path="string")},
    {"name": "write_file", "description": "write", "input_schema": schema(path="string", content="string")},
]
MAIN_TOOLS: list[ToolParam] = TOOLS + [
    {"name": "task", "description": "delegate", "input_schema": schema(description="string", prompt="string")}
]


def user(content: Any) -> MessageParam:
    return {"role": "user", "content": content}


def assistant(*blocks: Any) -> MessageParam:
    return {"role": "assistant", "content": list(blocks)}


def result(tool_use_id: str, content: str, is_error: bool = False) -> ToolResultBlockParam:
    block: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def refusal(request: Any) -> str:
    """What validate_request says is wrong with a request it must refuse."""
    problem = validate_request(request)
    assert problem is not None, "the request was accepted"
    return problem


def body(messages: list[MessageParam], tools: list[ToolParam] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": MODEL, "max_tokens": 1024, "messages": messages, **extra}
    if tools is not None:
        out["tools"] = tools
    return out


@pytest.fixture
def server():
    with FakeAnthropic() as s:
        yield s


@pytest.fixture
def async_client(closing: Callable[[Any], Any]) -> Callable[..., anthropic.AsyncAnthropic]:
    """The real SDK's async client for a server, closed when the test ends (``closing``, tests/model_clients.py)."""
    return lambda server, **kw: closing(anthropic.AsyncAnthropic(base_url=server.base_url, api_key="test-key", **kw))


def sync_client(server: FakeAnthropic, **kw: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base_url, api_key="test-key", **kw)


# --------------------------------------------------------------------------
# Streaming through the real SDK
# --------------------------------------------------------------------------


async def test_text_stream(server, async_client):
    server.script(text("Hello from the fake server, streamed in several chunks."))
    client = async_client(server)
    async with client.messages.stream(model=MODEL, max_tokens=100, messages=[user("hi")]) as stream:
        deltas = [d async for d in stream.text_stream]
        final = await stream.get_final_message()
    assert len(deltas) > 1
    assert "".join(deltas) == "Hello from the fake server, streamed in several chunks."
    assert of(TextBlock, final.content[0]).text == "".join(deltas)
    assert final.stop_reason == "end_turn"
    assert final.model == MODEL
    assert final.id.startswith("msg_")
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0
    assert final.usage.cache_read_input_tokens == 0
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    headers = server.request_headers[0]
    assert "test-key" in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))
    assert server.rejections == []


async def test_get_final_text_and_usage_overrides(server, async_client):
    server.script(
        text(
            "Short answer.",
            usage={
                "input_tokens": 1234,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 7,
                "output_tokens": 42,
            },
        )
    )
    async with async_client(server).messages.stream(model=MODEL, max_tokens=100, messages=[user("q")]) as stream:
        assert await stream.get_final_text() == "Short answer."
        usage = (await stream.get_final_message()).usage
    assert (usage.input_tokens, usage.output_tokens) == (1234, 42)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (1000, 7)


async def test_tool_use_stream_parses_input(server, async_client):
    call = tool_use("grep", {"pattern": "def authenticate", "path": "src"})
    server.script(call)
    json_events = 0
    async with async_client(server).messages.stream(
        model=MODEL, max_tokens=100, messages=[user("find auth")], tools=TOOLS
    ) as stream:
        async for event in stream:
            if event.type == "input_json":
                json_events += 1
        final = await stream.get_final_message()
    assert json_events >= 3  # partial_json really arrives in pieces
    block = final.content[0]
    assert block.type == "tool_use"
    assert block.id == call.tool_use_ids[0] and block.id.startswith("toolu_01")
    assert block.name == "grep"
    assert block.input == {"pattern": "def authenticate", "path": "src"}
    assert final.stop_reason == "tool_use"


async def test_text_and_parallel_tool_calls_in_one_reply(server, async_client):
    server.script(
        reply(
            text_block("Looking in two places."),
            tool_use_block("grep", {"pattern": "a"}),
            tool_use_block("read_file", {"path": "b.py"}),
        )
    )
    async with async_client(server).messages.stream(
        model=MODEL, max_tokens=100, messages=[user("go")], tools=TOOLS
    ) as stream:
        final = await stream.get_final_message()
    assert [b.type for b in final.content] == ["text", "tool_use", "tool_use"]
    assert of(ToolUseBlock, final.content[2]).input == {"path": "b.py"}
    assert of(ToolUseBlock, final.content[1]).id != of(ToolUseBlock, final.content[2]).id
    assert final.stop_reason == "tool_use"


async def test_max_tokens_truncates_tool_json(server, async_client):
    server.script(reply(tool_use_block("write_file", {"path": "a.py", "content": "x" * 200}), stop_reason="max_tokens"))
    async with async_client(server).messages.stream(
        model=MODEL, max_tokens=100, messages=[user("write")], tools=TOOLS
    ) as stream:
        final = await stream.get_final_message()
    assert final.stop_reason == "max_tokens"
    call = of(ToolUseBlock, final.content[0])
    assert "content" not in call.input or len(str(call.input["content"])) < 200


def test_sse_events_shape():
    r = reply(text_block("one two three four five six seven"), tool_use_block("grep", {"pattern": "x" * 40}))
    events = sse_events(r, body([user("hi")], TOOLS))
    names = [n for n, _ in events]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert start["content"] == [] and start["role"] == "assistant" and start["stop_reason"] is None
    assert set(start["usage"]) >= {
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    }
    text_deltas = [d["delta"]["text"] for n, d in events if n == "content_block_delta" and d["index"] == 0]
    assert len(text_deltas) >= 2 and "".join(text_deltas) == "one two three four five six seven"
    partial = [d["delta"]["partial_json"] for n, d in events if n == "content_block_delta" and d["index"] == 1]
    assert len([p for p in partial if p]) >= 3
    assert json.loads("".join(partial)) == {"pattern": "x" * 40}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_non_streaming_and_count_tokens(server):
    server.script(tool_use("read_file", {"path": "README.md"}))
    client = sync_client(server)
    message = client.messages.create(model=MODEL, max_tokens=50, messages=[user("read it")], tools=TOOLS)
    assert of(ToolUseBlock, message.content[0]).input == {"path": "README.md"}
    assert message.stop_reason == "tool_use"
    counted = client.messages.count_tokens(model=MODEL, messages=[user("x" * 400)])
    assert counted.input_tokens >= 100
    assert len(server.requests) == 1 and len(server.count_tokens_requests) == 1


# --------------------------------------------------------------------------
# Errors and failure injection
# --------------------------------------------------------------------------


async def test_error_with_retry_after(server, async_client):
    server.script(error(500, "api_error", "Internal trouble", headers={"retry-after": "7"}))
    with pytest.raises(anthropic.InternalServerError) as info:
        async with async_client(server, max_retries=0).messages.stream(
            model=MODEL, max_tokens=10, messages=[user("hi")]
        ) as stream:
            await stream.get_final_message()
    assert info.value.status_code == 500
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.body == {"type": "error", "error": {"type": "api_error", "message": "Internal trouble"}}


async def test_overloaded_then_success_is_retried_by_sdk(server, async_client):
    server.script(error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0.01"}), text("recovered"))
    async with async_client(server, max_retries=2).messages.stream(
        model=MODEL, max_tokens=10, messages=[user("hi")]
    ) as stream:
        assert await stream.get_final_text() == "recovered"
    assert len(server.requests) == 2
    assert server.request_headers[1]["x-stainless-retry-count"] == "1"


async def test_no_reply_left_fails_clearly_without_retries(server, async_client):
    with pytest.raises(anthropic.InternalServerError) as info:
        async with async_client(server).messages.stream(model=MODEL, max_tokens=10, messages=[user("hi")]) as s:
            await s.get_final_message()
    assert NO_REPLY_MESSAGE in str(info.value)
    assert len(server.requests) == 1  # x-should-retry: false stops the SDK's retries
    assert server.rejections[0][1] == NO_REPLY_MESSAGE


async def test_cut_after_events_breaks_the_stream(server, async_client):
    server.script(text("this reply dies halfway through its stream", cut_after_events=4))
    with pytest.raises((httpx.TransportError, anthropic.APIError)):
        async with async_client(server, max_retries=0).messages.stream(
            model=MODEL, max_tokens=10, messages=[user("hi")]
        ) as stream:
            async for _ in stream:
                pass
    assert len(server.timeline) == 1


async def test_stream_error_event(server, async_client):
    server.script(stream_error("overloaded_error", "Overloaded", after_events=3))
    with pytest.raises(anthropic.APIStatusError) as info:
        async with async_client(server, max_retries=0).messages.stream(
            model=MODEL, max_tokens=10, messages=[user("hi")]
        ) as stream:
            await stream.get_final_message()
    assert "overloaded_error" in str(info.value)


async def test_stall_then_resume(server, async_client):
    # Long enough that the check below runs well inside the stall even on a loaded machine.
    server.script(text("slow but complete", stall_after_events=2, stall_seconds=3))
    async with async_client(server).messages.stream(model=MODEL, max_tokens=10, messages=[user("hi")]) as stream:
        first = await stream.__anext__()
        assert first.type == "message_start"
        assert server.timeline == []  # the server is still mid-response, stalled
        assert await stream.get_final_text() == "slow but complete"
    assert len(server.timeline) == 1


async def test_concurrent_requests_overlap(server, async_client):
    gate = threading.Event()  # opened once all three are in: they are in flight together, however slow
    server.script(*(text(f"answer {i}", gate=gate, gate_timeout=120) for i in range(3)))
    client = async_client(server)

    async def one(i: int) -> str:
        async with client.messages.stream(model=MODEL, max_tokens=10, messages=[user(f"q{i}")]) as stream:
            return await stream.get_final_text()

    async def open_when_all_arrived() -> None:
        await asyncio.to_thread(server.wait_for_requests, 3, 60)
        gate.set()

    *answers, _ = await asyncio.gather(*(one(i) for i in range(3)), open_when_all_arrived())
    assert sorted(map(str, answers)) == ["answer 0", "answer 1", "answer 2"]
    spans = {i: (start, end) for i, start, end in server.timeline}
    assert len(spans) == 3
    assert all(spans[a][0] < spans[b][1] for a in spans for b in spans)
    assert server.overlapped(0, 1, 2)


async def test_barrier_gate_proves_concurrency(server, async_client):
    barrier = threading.Barrier(3)
    server.script(*(text("ok", gate=barrier, gate_timeout=120) for _ in range(3)))
    client = async_client(server)

    async def one() -> str:
        async with client.messages.stream(model=MODEL, max_tokens=10, messages=[user("q")]) as stream:
            return await stream.get_final_text()

    assert list(await asyncio.gather(one(), one(), one())) == ["ok", "ok", "ok"]
    assert server.overlapped()


def test_require_api_key():
    with FakeAnthropic(require_api_key="right") as server:
        server.script(text("welcome"))
        with pytest.raises(anthropic.AuthenticationError):
            anthropic.Anthropic(base_url=server.base_url, api_key="wrong").messages.create(
                model=MODEL, max_tokens=10, messages=[user("q")]
            )
        message = anthropic.Anthropic(base_url=server.base_url, api_key="right").messages.create(
            model=MODEL, max_tokens=10, messages=[user("q")]
        )
        assert of(TextBlock, message.content[0]).text == "welcome"


def test_closed_gate_fails_clearly(server):
    server.script(text("never", gate=threading.Event(), gate_timeout=0.05))
    with pytest.raises(anthropic.InternalServerError, match="gate not released"):
        sync_client(server).messages.create(model=MODEL, max_tokens=10, messages=[user("q")])


# --------------------------------------------------------------------------
# Routing
# --------------------------------------------------------------------------


def test_when_routes_before_default_queue_and_responder(server):
    server.script(text("default 1"), text("default 2"))
    server.when(lambda b: "subagent" in first_user_text(b), text("routed"))
    server.responder = lambda b: text("from responder")
    client = sync_client(server)

    def ask(prompt: str) -> str:
        answer = client.messages.create(model=MODEL, max_tokens=10, messages=[user(prompt)]).content[0]
        return of(TextBlock, answer).text

    assert ask("hello") == "default 1"
    assert ask("I am a subagent") == "routed"
    assert ask("I am a subagent again") == "default 2"  # route used up
    assert ask("anyone?") == "from responder"
    assert server.pending() == 0


def test_queue_accepts_functions_of_the_body(server):
    server.script(lambda b: text(f"you said {first_user_text(b)}"))
    message = sync_client(server).messages.create(model=MODEL, max_tokens=10, messages=[user("ping")])
    assert of(TextBlock, message.content[0]).text == "you said ping"


def test_wait_for_requests(server):
    server.script(text("ok"))
    threading.Thread(
        target=lambda: sync_client(server).messages.create(model=MODEL, max_tokens=10, messages=[user("x")]),
        daemon=True,
    ).start()
    assert server.wait_for_requests(1, timeout=60)[0]["messages"][0]["content"] == "x"


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


def test_dangling_tool_use_rejected_through_sdk(server):
    server.script(text("unreachable"))
    call = tool_use_block("grep", {"pattern": "x"}, id="toolu_01dangling")
    with pytest.raises(anthropic.BadRequestError) as info:
        sync_client(server).messages.create(
            model=MODEL, max_tokens=10, tools=TOOLS, messages=[user("hi"), assistant(call), user("and then?")]
        )
    assert info.value.status_code == 400
    assert "tool_use` ids were found without `tool_result` blocks immediately after: toolu_01dangling" in str(
        info.value
    )
    assert len(server.rejections) == 1
    assert server.pending() == 1  # a rejected request consumes no reply


def test_validate_accepts_a_proper_tool_conversation():
    call = tool_use_block("grep", {"pattern": "x"})
    messages = [
        user("hi"),
        assistant(text_block("searching"), call),
        user([result(call["id"], "a.py:1:x"), {"type": "text", "text": "carry on"}]),
    ]
    assert validate_request(body(messages, TOOLS)) is None


@pytest.mark.parametrize(
    ("messages", "tools", "extra", "expected"),
    [
        (
            [user("hi"), assistant(tool_use_block("grep", {}, id="toolu_01a"))] + [user("no result")],
            TOOLS,
            {},
            "without `tool_result` blocks immediately after: toolu_01a",
        ),
        ([user([result("toolu_01orphan", "x")])], TOOLS, {}, "unexpected `tool_use_id`"),
        (
            [user("hi"), assistant(tool_use_block("grep", {}, id="toolu_01b")), user([result("toolu_01b", "x")])],
            None,
            {},
            "must define tools",
        ),
        (
            [user([{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}] * 5)],
            None,
            {},
            "A maximum of 4 blocks with cache_control",
        ),
        ([assistant(text_block("hi"))], None, {}, 'first message must use the "user" role'),
        ([user("a"), user("b")], None, {}, "roles must alternate"),
        ([user([{"type": "text", "text": ""}])], None, {}, "text content blocks must be non-empty"),
        ([user("")], None, {}, "non-empty content"),
        ([], None, {}, "at least one message"),
        (
            [
                user("hi"),
                assistant(tool_use_block("grep", {}, id="toolu_01c")),
                user([{"type": "text", "text": "first"}, result("toolu_01c", "x")]),
            ],
            TOOLS,
            {},
            "must come first",
        ),
        (
            [
                user("hi"),
                assistant(tool_use_block("grep", {}, id="toolu_01d")),
                user([result("toolu_01d", "x")]),
                assistant(tool_use_block("grep", {}, id="toolu_01d")),
                user([result("toolu_01d", "x")]),
            ],
            TOOLS,
            {},
            "ids must be unique",
        ),
        ([user("hi")], [{"name": "grep"}], {}, "input_schema"),
        ([user("hi")], [{"input_schema": {"type": "object"}}], {}, "name"),
    ],
)
def test_validation_rejections(messages, tools, extra, expected):
    problem = validate_request(body(messages, tools, **extra))
    assert problem is not None and expected in problem


def test_validation_counts_cache_control_across_tools_system_messages():
    cc: CacheControlEphemeralParam = {"type": "ephemeral"}
    tools: list[ToolParam] = [{**TOOLS[0], "cache_control": cc}, {**TOOLS[1], "cache_control": cc}]
    system = [{"type": "text", "text": "sys", "cache_control": cc}]
    four = body([user([{"type": "text", "text": "x", "cache_control": cc}])], tools, system=system)
    assert validate_request(four) is None
    five = body(
        [
            user([{"type": "text", "text": "x", "cache_control": cc}]),
            assistant(text_block("y")),
            user([{"type": "text", "text": "z", "cache_control": cc}]),
        ],
        tools,
        system=system,
    )
    assert "Found 5" in refusal(five)


def test_validation_missing_fields():
    assert "model" in refusal({"max_tokens": 1, "messages": [user("x")]})
    assert "max_tokens" in refusal({"model": "m", "messages": [user("x")]})
    assert "messages" in refusal({"model": "m", "max_tokens": 1})


def test_tool_use_reply_to_tool_choice_none_is_a_test_bug(server):
    server.script(tool_use("grep", {"pattern": "x"}))
    with pytest.raises(anthropic.InternalServerError, match="test bug"):
        sync_client(server).messages.create(
            model=MODEL, max_tokens=10, messages=[user("sum up")], tools=TOOLS, tool_choice={"type": "none"}
        )
    assert len(server.requests) == 1
    assert "tool_choice none" in server.rejections[0][1]


# --------------------------------------------------------------------------
# The demo scenario
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "first"),
    [
        ("Use a subagent to find where auth is handled", "auth"),
        ("find where the login flow is handled?", "login"),
        ("Where is `SessionStore` defined?", "SessionStore"),
        ('please search for "retry budget"', "retry budget"),
        ("grep for parse_config please", "parse_config"),
        ("where is billing done", "billing"),
    ],
)
def test_extract_terms(message, first):
    assert extract_terms(message)[0] == first


def test_extract_several_terms():
    assert extract_terms("Use subagents to find where auth, billing and logging are handled") == [
        "auth",
        "billing",
        "logging",
    ]


def test_parse_grep_hits():
    out = "src/auth.py:12:def login(user):\nnoise line\nsrc/app.py:3:import auth\n"
    assert parse_grep_hits(out) == [("src/auth.py", 12, "def login(user):"), ("src/app.py", 3, "import auth")]


def test_demo_main_delegates_find_where():
    r = demo_responder(body([user("Find where auth is handled")], MAIN_TOOLS))
    tasks = [b for b in r.blocks if b["type"] == "tool_use"]
    assert len(tasks) == 1 and tasks[0]["name"] == "task"
    assert tasks[0]["input"]["description"] == "Find where auth is handled"
    assert "auth" in tasks[0]["input"]["prompt"]
    assert tasks[0]["input"]["subagent_type"] == "general-purpose"
    assert extract_terms(tasks[0]["input"]["prompt"])[0] == "auth"


def test_demo_main_delegates_several_in_parallel():
    r = demo_responder(body([user("Use subagents to find where auth, billing and logging are handled")], MAIN_TOOLS))
    assert [b["input"]["description"] for b in r.blocks if b["type"] == "tool_use"] == [
        "Find where auth is handled",
        "Find where billing is handled",
        "Find where logging is handled",
    ]


def test_demo_main_answers_plain_chat_in_markdown():
    r = demo_responder(body([user("hello there")], MAIN_TOOLS))
    assert not r.has_tool_use
    assert "##" in r.blocks[0]["text"] and "`" in r.blocks[0]["text"]


def test_demo_main_greps_itself_without_delegation():
    r = demo_responder(body([user("grep for `TODO`")], MAIN_TOOLS))
    assert [b["input"] for b in r.blocks if b["type"] == "tool_use"] == [{"pattern": "TODO", "case_insensitive": True}]


def test_demo_main_quotes_subagent_result():
    call = tool_use_block("task", {"description": "Find where auth is handled", "prompt": "..."})
    messages = [
        user("find where auth is handled"),
        assistant(call),
        user([result(call["id"], "auth is handled in src/auth.py:12.\n\n[sa-1 · done · 3 turns]")]),
    ]
    r = demo_responder(body(messages, MAIN_TOOLS))
    assert not r.has_tool_use
    assert "> auth is handled in src/auth.py:12." in r.blocks[0]["text"]


def test_demo_subagent_flow():
    brief = "Find where `auth` is handled in this repository. Report paths and lines."
    first = demo_responder(body([user(brief)], TOOLS))
    grep = next(b for b in first.blocks if b["type"] == "tool_use")
    assert (grep["name"], grep["input"]) == ("grep", {"pattern": "auth", "case_insensitive": True})

    messages = [
        user(brief),
        assistant(*first.blocks),
        user([result(grep["id"], "src/app.py:40:    auth(req)\nsrc/auth.py:12:def auth(request):")]),
    ]
    second = demo_responder(body(messages, TOOLS))
    read = next(b for b in second.blocks if b["type"] == "tool_use")
    assert (read["name"], read["input"]) == ("read_file", {"path": "src/auth.py"})

    messages += [assistant(*second.blocks), user([result(read["id"], "    12\tdef auth(request):")])]
    third = demo_responder(body(messages, TOOLS))
    assert not third.has_tool_use
    answer = third.blocks[0]["text"]
    assert "auth is handled in src/auth.py:12" in answer
    assert "`src/app.py:40`" in answer


def test_demo_subagent_reports_nothing_found():
    brief = "Find where `frobnicate` is handled."
    first = demo_responder(body([user(brief)], TOOLS))
    grep = next(b for b in first.blocks if b["type"] == "tool_use")
    messages = [user(brief), assistant(*first.blocks), user([result(grep["id"], "No matches found.")])]
    r = demo_responder(body(messages, TOOLS))
    assert not r.has_tool_use
    assert "no matches" in r.blocks[0]["text"].lower() and "`frobnicate`" in r.blocks[0]["text"]


def test_demo_answers_in_text_when_no_tools_offered():
    r = demo_responder(body([user("Summarize what you found about `auth`.")], TOOLS, tool_choice={"type": "none"}))
    assert not r.has_tool_use and r.blocks[0]["text"]
    r = demo_responder(body([user("Summarize.")]))
    assert not r.has_tool_use


async def test_demo_end_to_end_through_sdk(async_client):
    """Main agent → task → subagent grep/read/answer → main quotes it; every request valid."""
    files = {"src/auth.py": "def auth(request):\n    return check(request)\n"}

    def run_tool(name: str, args: dict[str, Any]) -> str:
        if name == "grep":
            return "\n".join(
                f"{p}:{n}:{line}"
                for p, text_ in files.items()
                for n, line in enumerate(text_.splitlines(), 1)
                if args["pattern"] in line
            )
        if name == "read_file":
            return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(files[args["path"]].splitlines(), 1))
        raise AssertionError(name)

    with FakeAnthropic(responder=demo_responder) as server:
        client = async_client(server)

        async def run(messages: list[MessageParam], tools: list[ToolParam], turns: int = 6) -> str:
            for _ in range(turns):
                async with client.messages.stream(
                    model=MODEL, max_tokens=1000, messages=messages, tools=tools
                ) as stream:
                    final = await stream.get_final_message()
                content = [
                    b.model_dump(exclude_none=True, include={"type", "text", "id", "name", "input"})
                    for b in final.content
                ]
                messages.append(assistant(*content))
                if final.stop_reason != "tool_use":
                    return of(TextBlock, final.content[-1]).text
                results: list[ToolResultBlockParam] = []
                for b in final.content:
                    if b.type != "tool_use":
                        continue
                    if b.name == "task":
                        out = await run([user(b.input["prompt"])], TOOLS)
                    else:
                        out = run_tool(b.name, b.input)
                    results.append(result(b.id, out))
                messages.append(user(results))
            raise AssertionError("too many turns")

        answer = await run([user("Use a subagent to find where auth is handled")], MAIN_TOOLS)
        server.assert_no_rejections()
    assert "auth is handled in src/auth.py:1" in answer
    assert len(server.requests) == 5  # main, sub grep, sub read, sub answer, main answer


def test_command_line_serves_demo_scenario():
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.anthropic_server", "--scenario", "demo"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("ANTHROPIC_BASE_URL=http://127.0.0.1:")
        base_url = line.split("=", 1)[1]
        client = anthropic.Anthropic(base_url=base_url, api_key="k", max_retries=0)
        message = client.messages.create(model=MODEL, max_tokens=100, messages=[user("hello")], tools=MAIN_TOOLS)
        assert message.content[0].type == "text"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_tool_search_is_checked_as_the_api_documents_it():
    from tests.fakes.anthropic_server import tool_search_blocks, validate_request

    plain = {"name": "read_file", "input_schema": {"type": "object"}}
    deferred = {"name": "git_log", "input_schema": {"type": "object"}, "defer_loading": True}
    search = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
    base = {"model": "m", "max_tokens": 10}
    ask = {"role": "user", "content": "log?"}
    assert "require a tool search tool" in refusal({**base, "messages": [ask], "tools": [plain, deferred]})
    every = [deferred, {**search, "defer_loading": True}]
    assert "must not have defer_loading" in refusal({**base, "messages": [ask], "tools": every})
    found = {"role": "assistant", "content": tool_search_blocks("git", ["git_log"])}
    assert validate_request({**base, "messages": [ask, found], "tools": [plain, deferred, search]}) is None
    unknown = {"role": "assistant", "content": tool_search_blocks("x", ["teleport"])}
    assert "Tool reference 'teleport' not found" in refusal(
        {**base, "messages": [ask, unknown], "tools": [plain, deferred, search]}
    )


def test_a_server_tool_use_streams_its_input_and_the_sdk_reads_the_search_result(server):
    from tests.fakes.anthropic_server import tool_search_blocks

    server.script(reply(*tool_search_blocks("git_l.*", ["git_log"]), stop_reason="end_turn"))
    client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
    tools = [
        {"name": "read_file", "input_schema": {"type": "object"}},
        {"name": "git_log", "input_schema": {"type": "object"}, "defer_loading": True},
        {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
    ]
    with client.messages.stream(
        model="m",
        max_tokens=10,
        messages=[{"role": "user", "content": "log?"}],
        tools=tools,  # type: ignore[arg-type]
    ) as stream:
        message = stream.get_final_message()
    used, result = message.content
    assert used.type == "server_tool_use" and used.input == {"query": "git_l.*"}
    assert result.type == "tool_search_tool_result"
    assert of(ToolSearchToolSearchResultBlock, result.content).tool_references[0].tool_name == "git_log"
