"""The SDK client's first request made as cheap as a later one (``warm_first_post``), while the first reply is awaited.

The first request of a ``-p`` run goes out without the SDK (``early_request``); the next, often a tool's result a
moment after the reply asking for it, is the SDK client's first. That first ``post`` cost about 1.5 times a later one
in the main thread (1.1 against 0.75 ms of CPU between the tool's result and the request's first byte): what the SDK,
httpx2, ``typing`` and ``abc`` fill in on first use (a generic alias, a URL parsed, ABC subclass checks, the
platform's headers). -p's import thread has the first reply's wait to spare: there, a throwaway client posts once to
a transport that answers in memory (nothing is sent anywhere), so that the run's own client finds them filled.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

# A whole streamed reply, as small as the API sends one: the in-memory answer to the throwaway post.
_REPLY = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],'
    b'"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}\n\n'
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
    b'"usage":{"output_tokens":0}}\n\n'
    b"event: message_stop\n"
    b'data: {"type":"message_stop"}\n\n'
)


def warm_first_post(base_url: str, platform: Any) -> bool:
    """Post once through a throwaway ``AsyncAnthropic`` for ``base_url`` to an in-memory transport and read its reply
    whole; whether that went through. Blocking, for a thread without an event loop (-p's import thread); a failure
    costs nothing but the head start. ``platform``: what the run's client is given (``sdk_import.sdk_platform``).
    Not with the SDK's log on (ANTHROPIC_LOG), which would show a request never made."""
    if os.environ.get("ANTHROPIC_LOG"):
        return False
    try:
        return asyncio.run(_post(base_url, platform))
    except Exception:  # noqa: BLE001 - only a head start: the run's own request says what is wrong, if anything is
        return False


async def _post(base_url: str, platform: Any) -> bool:
    import httpx2
    from anthropic import AsyncAnthropic, AsyncStream
    from anthropic.types import Message, RawMessageStreamEvent

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=_REPLY)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    # No spans (open_telemetry=False): a tracer provider the user set up must not export one for this post.
    async with AsyncAnthropic(
        api_key="warm-up", base_url=base_url, max_retries=0, http_client=http, open_telemetry=False
    ) as client:
        client._platform = platform
        stream = await client.post(
            "/v1/messages", cast_to=Message, content=b"{}", stream=True, stream_cls=AsyncStream[RawMessageStreamEvent]
        )
        kinds = [event.type async for event in stream]
    return kinds == ["message_start", "message_delta", "message_stop"]
