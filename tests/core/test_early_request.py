"""The first request while the SDK still imports goes out with httpx2 (core/model/early_request.py). Each
scenario runs twice against the stand-in server, once that way and once the normal way (the SDK's
``post``), and both must give the same reply, the same error, the same retries and the same headers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from agentcli.core.model import early_request
from agentcli.core.model.llm import LLM, Credentials, LLMError, ModelReply
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    error,
    reply,
    sse_events,
    stream_error,
    text,
    text_block,
    thinking_block,
    tool_use_block,
)
from tests.retries import counted

KEY = "sk-ant-early-0000"
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
# Headers only the SDK's own client sends (its platform details): a request without them went out early.
PLATFORM_HEADER = "x-stainless-os"


@pytest.fixture(params=["early", "normal"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "early":  # the SDK counts as still importing: the first call goes out with httpx2
        monkeypatch.setattr(early_request, "sdk_ready", lambda: False)
    return str(request.param)


def llm_for(server: FakeAnthropic, **overrides: Any) -> LLM:
    options: dict[str, Any] = {
        "credentials": Credentials(api_key=KEY, base_url=server.base_url),
        "retry_base_delay": 0.0,
        "retry_max_delay": 0.0,
        **overrides,
    }
    return LLM(**options)


async def ask(
    llm: LLM, texts: list[str] | None = None, retries: list[Any] | None = None, thinking: list[str] | None = None
) -> ModelReply:
    try:
        return await llm.stream(
            system="Be brief.",
            messages=[{"role": "user", "content": "hi"}],
            tools=TOOLS,
            on_text=(texts if texts is not None else []).append,
            # a loopback reset under load is a try of its own, not counted (tests/retries.py)
            on_retry=lambda r: (retries if retries is not None and counted(r.error) else []).append(r),
            on_thinking=(thinking if thinking is not None else []).append,
        )
    finally:
        await llm.aclose()


def went_out_early(server: FakeAnthropic) -> bool:
    return PLATFORM_HEADER not in server.request_headers[0]


def test_the_installed_sdk_is_the_one_the_early_request_mirrors() -> None:
    """pyproject.toml pins anthropic; if it moves, this says which version the early request mirrors
    (and the request comparison below says what changed)."""
    import anthropic

    assert anthropic.__version__ == early_request.SDK_VERSION


# What only the SDK's own client sends: the platform it runs on, which the early request leaves out.
PLATFORM_HEADERS = ("x-stainless-os", "x-stainless-arch", "x-stainless-runtime", "x-stainless-runtime-version")


@pytest.mark.parametrize(
    "creds", [{"api_key": KEY}, {"api_key": None, "auth_token": "bearer-early-token"}], ids=["api key", "bearer token"]
)
def test_the_early_request_is_the_sdks_request(
    server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, creds: dict[str, Any]
) -> None:
    """The same URL, the same headers in the same order with the same values, and the same body bytes,
    as the stand-in server receives them: an SDK version that changes any of them fails here."""
    server.script(text("Normal."), text("Early."))
    credentials = Credentials(base_url=server.base_url, **creds)
    asyncio.run(ask(LLM(credentials=credentials)))
    monkeypatch.setattr(early_request, "sdk_ready", lambda: False)
    asyncio.run(ask(LLM(credentials=credentials)))
    (normal_url, normal_body), (early_url, early_body) = server.request_wire
    assert early_url == normal_url == "/v1/messages"
    assert early_body == normal_body
    normal, early = server.request_headers
    assert all(name in normal for name in PLATFORM_HEADERS)
    assert list(early.items()) == [(name, value) for name, value in normal.items() if name not in PLATFORM_HEADERS]


def test_a_reply_arrives_the_same_either_way(server: FakeAnthropic, path: str) -> None:
    server.script(
        reply(
            thinking_block("Mull it over."),
            text_block("Here it is."),
            tool_use_block("read_file", {"path": "notes.md"}, id="toolu_early1"),
        )
    )
    texts: list[str] = []
    thinking: list[str] = []
    got = asyncio.run(ask(llm_for(server, thinking="on"), texts, thinking=thinking))
    assert went_out_early(server) == (path == "early")
    assert got.stop_reason == "tool_use"
    assert [b["type"] for b in got.content] == ["thinking", "text", "tool_use"]
    assert got.content[0]["thinking"] == "Mull it over." and got.content[0]["signature"]
    assert got.content[2] == {
        "type": "tool_use",
        "id": "toolu_early1",
        "name": "read_file",
        "input": {"path": "notes.md"},
    }
    assert type(got.content[2]["input"]) is dict
    assert "".join(texts) == "Here it is." and "".join(thinking) == "Mull it over."
    assert got.usage.input_tokens > 0 and got.usage.output_tokens > 0
    server.assert_no_rejections()


def test_the_sdk_takes_over_the_early_connection(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    importing = [True]
    monkeypatch.setattr(early_request, "sdk_ready", lambda: not importing[0])
    server.script(text("One."), text("Two."))
    llm = llm_for(server)

    async def twice() -> list[Any]:
        first = await llm.stream(
            system="s", messages=[{"role": "user", "content": "1"}], tools=[], on_text=lambda t: None
        )
        early_http = llm._http
        importing[0] = False  # the import is done: the SDK's client sends from now on
        second = await llm.stream(
            system="s", messages=[{"role": "user", "content": "2"}], tools=[], on_text=lambda t: None
        )
        sdk_http = llm.client()._client  # the SDK's httpx2 client
        await llm.aclose()
        return [first, second, early_http, sdk_http]

    first, second, early_http, sdk_http = asyncio.run(twice())
    assert [first.content, second.content] == [[{"type": "text", "text": "One."}], [{"type": "text", "text": "Two."}]]
    assert [PLATFORM_HEADER in h for h in server.request_headers] == [False, True]
    assert early_http is not None and sdk_http is early_http


def test_the_sdks_first_request_waits_on_no_thread_for_the_platform(server: FakeAnthropic) -> None:
    """The SDK's client knows the platform before its first request (``sdk_platform``), so that request hands
    nothing to the event loop's pool (a thread started, a hop there and back, on a tool result's way out), and
    its platform header is the one the SDK finds itself."""
    from anthropic._base_client import get_platform

    handed: list[object] = []

    class Watched(ThreadPoolExecutor):
        def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
            handed.append(fn)
            return super().submit(fn, *args, **kwargs)

    async def first_request() -> ModelReply:
        asyncio.get_running_loop().set_default_executor(Watched(max_workers=1))
        return await ask(llm_for(server))

    server.script(text("One."))
    assert asyncio.run(first_request()).content == [{"type": "text", "text": "One."}]
    assert handed == []
    assert server.request_headers[0][PLATFORM_HEADER] == str(get_platform())


@pytest.mark.parametrize(
    "status, kind, retryable", [(400, "invalid_request_error", False), (401, "authentication_error", False)]
)
def test_a_refused_first_request_is_the_same_error(
    server: FakeAnthropic, status: int, kind: str, retryable: bool, path: str
) -> None:
    server.script(error(status, kind, "No, not like that."))
    with pytest.raises(LLMError) as raised:
        asyncio.run(ask(llm_for(server)))
    assert went_out_early(server) == (path == "early")
    assert (raised.value.status, raised.value.retryable) == (status, retryable)
    assert "No, not like that" in str(raised.value)


def test_an_overloaded_first_request_is_retried(server: FakeAnthropic, path: str) -> None:
    server.script(
        error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"}),
        error(500, "api_error", "Internal"),
        text("At last."),
    )
    retries: list[Any] = []
    got = asyncio.run(ask(llm_for(server), retries=retries))
    assert went_out_early(server) == (path == "early")
    assert got.content == [{"type": "text", "text": "At last."}]
    assert len(retries) == 2 and "overloaded" in retries[0].error and "(500)" in retries[1].error


def test_an_error_event_mid_reply_keeps_a_completed_tool_call(server: FakeAnthropic, path: str) -> None:
    call = tool_use_block("read_file", {"path": "README.md"})
    base = reply(text_block("Done part."), call, text_block("Never finished, this one."))
    names = [name for name, _ in sse_events(base, {"model": "m", "messages": []})]
    server.script(
        stream_error(
            "overloaded_error",
            "Overloaded mid-way",
            base=base,
            after_events=names.index("content_block_stop", names.index("content_block_stop") + 1) + 3,
        )
    )
    retries: list[Any] = []
    got = asyncio.run(ask(llm_for(server, retries=2), retries=retries))
    assert went_out_early(server) == (path == "early")
    assert "failed mid-response (overloaded_error)" in retries[0].error
    assert (got.stop_reason, got.content) == ("incomplete", [{"type": "text", "text": "Done part."}, call])


def test_an_error_event_mid_reply_of_text_asks_for_it_again_whole(server: FakeAnthropic, path: str) -> None:
    server.script(
        stream_error(
            "overloaded_error",
            "Overloaded mid-way",
            after_events=6,
            base=reply(text_block("Done part."), text_block("Never finished, this one.")),
        ),
        text("The whole reply."),
    )
    retries: list[Any] = []
    got = asyncio.run(ask(llm_for(server, retries=2), retries=retries))
    assert went_out_early(server) == (path == "early")
    assert "failed mid-response (overloaded_error)" in retries[0].error
    assert (got.stop_reason, got.content) == ("end_turn", [{"type": "text", "text": "The whole reply."}])
    assert server.requests[1]["messages"] == server.requests[0]["messages"]


def test_a_broken_first_stream_is_retried(server: FakeAnthropic, path: str) -> None:
    server.script(text("Cut off here, sadly.", cut_after_events=3), text("Whole."))
    retries: list[Any] = []
    got = asyncio.run(ask(llm_for(server), retries=retries))
    assert went_out_early(server) == (path == "early")
    assert len(retries) == 1 and got.content == [{"type": "text", "text": "Whole."}]


def test_no_server_is_the_same_error(path: str) -> None:
    with FakeAnthropic() as gone:
        url = gone.base_url
    llm = LLM(credentials=Credentials(api_key=KEY, base_url=url), retries=0)
    with pytest.raises(LLMError) as raised:
        asyncio.run(ask(llm))
    assert str(raised.value) == (
        f"Nothing is listening at {url} (connection refused); start the model server "
        "there, or point ANTHROPIC_BASE_URL at one that runs."
    )


@pytest.mark.parametrize(
    "creds", [{"api_key": KEY}, {"api_key": None, "auth_token": "bearer-early-token"}], ids=["api key", "bearer token"]
)
def test_the_early_request_sends_the_sdk_headers(
    server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, creds: dict[str, Any]
) -> None:
    server.script(text("Normal."), text("Early."))
    credentials = Credentials(base_url=server.base_url, **creds)
    asyncio.run(ask(LLM(credentials=credentials)))
    monkeypatch.setattr(early_request, "sdk_ready", lambda: False)
    asyncio.run(ask(LLM(credentials=credentials)))
    normal, early = server.request_headers
    assert PLATFORM_HEADER in normal and PLATFORM_HEADER not in early
    assert early["authorization"] == f"Bearer {creds.get('auth_token') or KEY}"
    for name in (
        "authorization",
        "anthropic-version",
        "content-type",
        "user-agent",
        "accept",
        "x-stainless-retry-count",
        "x-stainless-read-timeout",
        "x-stainless-async",
    ):
        assert early.get(name) == normal.get(name), name
    assert server.requests[0] == server.requests[1] | {"messages": server.requests[0]["messages"]}


def test_a_base_url_with_a_path_is_joined_as_the_sdk_joins_it(
    server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.script(text("unused"))
    said = []
    for early in (False, True):
        if early:
            monkeypatch.setattr(early_request, "sdk_ready", lambda: False)
        llm = LLM(credentials=Credentials(api_key=KEY, base_url=server.base_url + "/proxy/anthropic"))
        with pytest.raises(LLMError) as raised:
            asyncio.run(ask(llm))
        said.append(str(raised.value))
    assert said[0] == said[1]
    assert "/proxy/anthropic/v1/messages" in said[0] and "(404)" in said[0]


def test_a_proxy_setting_sends_the_normal_way(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(early_request, "sdk_ready", lambda: False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    server.script(text("Normal."))
    asyncio.run(ask(llm_for(server)))
    assert not went_out_early(server)


SCRIPT = """
import asyncio, importlib, sys
from agentcli.core.model.llm import LLM, Credentials

async def main():
    llm = LLM(credentials=Credentials(api_key=sys.argv[2], base_url=sys.argv[1]))
    for prompt in ("one", "two"):
        reply = await llm.stream(system="s", messages=[{"role": "user", "content": prompt}], tools=[],
                                 on_text=lambda t: None)
        print(reply.content[0]["text"], flush=True)
        # the first call started the import in a thread; this waits for it (the import lock) and no more
        await asyncio.to_thread(importlib.import_module, "anthropic")
    await llm.aclose()

asyncio.run(main())
"""


def test_a_process_without_the_sdk_sends_early_then_imports_it(server: FakeAnthropic) -> None:
    import os
    import subprocess
    import sys

    server.script(text("One."), text("Two."))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, server.base_url, KEY], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["One.", "Two."]
    assert [PLATFORM_HEADER in h for h in server.request_headers] == [False, True], "the SDK never took over"
