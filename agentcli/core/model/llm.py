"""One streamed assistant message through the official SDK, turned into this project's terms.

``anthropic`` is imported lazily: it costs about a second, and the TUI draws first.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ..content import Message, has_tool_use
from ..events import Retrying
from ..system import secret_env
from . import early_request
from .accumulator import RAW_EVENT_TYPES, Accumulator, _usage, block_to_dict, raw_event

# What a model call needs and ends with (credentials.py, api_errors.py), where the rest of agentcli finds it: beside
# the client.
from .api_errors import LLMError as LLMError
from .api_errors import ModelReply as ModelReply
from .api_errors import describe_api_error, error_message_of, sdk_error
from .api_errors import one_line as one_line
from .api_errors import redact as redact
from .catalogue import (
    DEFAULT_MODEL,
    DEFAULT_THINKING_BUDGET,
    EFFORT_BUDGETS,
    FALLBACK_AFTER,
    MIN_THINKING_BUDGET,
    effort_level,
    supports_adaptive_thinking,
)
from .catalogue import context_window as context_window
from .credentials import MISSING_KEY_MESSAGE as MISSING_KEY_MESSAGE
from .credentials import PLACEHOLDER_KEY as PLACEHOLDER_KEY
from .credentials import Credentials as Credentials
from .credentials import MissingCredentials as MissingCredentials
from .credentials import base_url
from .credentials import resolve_credentials as resolve_credentials
from .request_body import RequestBodies, with_cache_breakpoint_on_last
from .sdk_import import import_frozen as import_frozen  # where front ends find them
from .sdk_import import import_sdk as import_sdk
from .sdk_import import request_going_out, sdk_module, sdk_platform
from .sdk_import import start_sdk_import as start_sdk_import

if TYPE_CHECKING:
    import httpx2
    from anthropic import AsyncAnthropic

THINKING_REFUSED = (
    "The model server does not accept extended thinking ({error}); agentcli goes on without it for this session."
)


@dataclass
class LLM:
    """A model endpoint. One instance is shared by the main agent and its subagents.

    The SDK does not retry on its own here: ``stream`` retries overloads, server errors,
    broken and stalled streams itself, so that each retry can be shown as a notice.
    """

    model: str = DEFAULT_MODEL
    max_tokens: int = 16_000
    credentials: Credentials | None = None
    max_retries: int = 0  # the SDK's own retries; ours are ``retries``
    retries: int = 8
    retry_base_delay: float = 1.0  # seconds; doubles each attempt, capped at retry_max_delay
    retry_max_delay: float = 30.0
    stall_timeout: float = 60.0  # seconds without a stream event before the stream counts as dead
    # Seconds a server that has not answered this process yet gets to begin its reply (its status and headers);
    # it is tried once more, then given up on, as a refused connection is. One that answered before, and a
    # reply that has begun, get stall_timeout.
    first_reply_timeout: float = 10.0
    timeout: float = 600.0
    thinking: str = "off"  # one of THINKING_MODES; sessions pass the setting ("auto" by default)
    thinking_budget: int = 0  # tokens for thinking "on"; 0: DEFAULT_THINKING_BUDGET
    thinking_refused: bool = False  # the server rejected thinking once: not sent again this session
    fallback_model: str = ""  # --fallback-model: taken, for good, when a model is overloaded or not found
    effort: str = ""  # --effort (model_params)
    fallen_back: dict[str, str] = field(default_factory=dict)  # model -> its fallback, once taken
    tool_search: str = "off"  # the route to tools on demand at this endpoint (tools/on_demand.py): api, agentcli, off
    tool_search_fallback: bool = False  # "auto" chose the API's: a refusal of it goes on with agentcli's, once
    web_search_off: str = ""  # why requests do not offer the API's web search ("" when they do: tools/web_search.py)
    raw_events: bool = False  # hand each API stream event to ``on_event`` (stream-json's partial messages)
    api_seconds: float = 0.0  # time spent waiting on the API, over all calls
    bodies: RequestBodies = field(default_factory=RequestBodies, repr=False)
    _client: AsyncAnthropic | None = field(default=None, repr=False)
    _http: httpx2.AsyncClient | None = field(default=None, repr=False)  # the early request's (early_request)
    _can_count_tokens: bool = field(default=True, repr=False)
    _heard: bool = field(default=False, repr=False)  # a reply has begun in this process: the server is there

    def client(self) -> AsyncAnthropic:
        """The SDK's client, made on first use (on the early request's connections, if one went out)."""
        if self._client is None:
            from anthropic import AsyncAnthropic

            creds = self.credentials or resolve_credentials()
            self._client = AsyncAnthropic(
                api_key=creds.api_key,
                auth_token=creds.auth_token,
                base_url=creds.base_url,
                max_retries=self.max_retries,
                timeout=self.timeout,
                http_client=self._http,
            )
            self._client._platform = sdk_platform()
        return self._client

    def use_tool_search(self, setting: str) -> None:
        """Take the ``tool_search`` setting (tools/on_demand.py): ``auto`` is the API's own tool search at
        Anthropic's API (no base URL, or api.anthropic.com), agentcli's elsewhere; a refusal of the API's
        goes on with agentcli's (loop.py)."""
        self.tool_search_fallback = setting == "auto"
        self.tool_search = (
            ("api" if self.host() == "api.anthropic.com" else "agentcli") if setting == "auto" else setting
        )

    def host(self) -> str:
        """The host requests go to: Anthropic's API's without a base URL."""
        given = self.credentials.base_url if self.credentials else secret_env.environ().get("ANTHROPIC_BASE_URL")
        return (urlparse(given).hostname or given) if given else "api.anthropic.com"

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
        elif self._http is not None:
            await self._http.aclose()
        self._client = self._http = None

    async def stream(
        self,
        *,
        system: str,
        messages: list[Message],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        on_retry: Callable[[Retrying], None] = lambda retrying: None,
        on_thinking: Callable[[str], None] = lambda text: None,
        on_notice: Callable[[str], None] = lambda text: None,
        model: str | None = None,
        tool_choice: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        on_reply: Callable[[], None] = lambda: None,
        effort: str | None = None,
    ) -> ModelReply:
        """Stream one assistant message; text deltas go to ``on_text`` as they arrive, thinking to
        ``on_thinking``. A server that refuses thinking is asked again without it (``on_notice`` says so).
        ``on_reply`` is called when a try's reply begins (its status and headers came). ``model`` and
        ``effort`` (one of EFFORT_ORDER): this agent's own, where it is not the session's (a subagent's).

        Failures, broken streams and malformed replies are retried with backoff (``on_retry``
        gets a ``Retrying`` each time). When a stream dies after a tool call completed, the blocks
        that completed come back after the notice and the pause, with stop_reason ``"incomplete"``,
        so the model goes on from them and no call is asked twice; a reply without one is asked
        for again whole.
        """
        model = self.fallen_back.get(model or self.model, model or self.model)
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens or self.max_tokens,
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "messages": messages,  # the body marks the last one (RequestBodies)
        }
        if tools:
            params["tools"] = with_cache_breakpoint_on_last(tools)
        if tool_choice:
            params["tool_choice"] = tool_choice
        self.model_params(params, model, effort)
        attempt = overloaded = 0
        while True:
            started = time.monotonic()
            try:
                return await self._stream_once(params, model, on_text, on_thinking, on_event, on_reply)
            except LLMError as exc:
                if "thinking" in params and exc.status == 400 and "thinking" in str(exc).lower():
                    self.thinking_refused = True
                    del params["thinking"]
                    on_notice(THINKING_REFUSED.format(error=one_line(exc, 160).rstrip(".")))
                    continue
                attempt += 1
                retries = self.retries if exc.retry_limit is None else min(self.retries, exc.retry_limit)
                overloaded = overloaded + 1 if exc.status == 529 or "overloaded" in str(exc).lower() else 0
                if (
                    self.fallback_model
                    and model != self.fallback_model
                    and exc.partial is None
                    and (exc.status == 404 or overloaded >= min(FALLBACK_AFTER, retries + 1))
                ):
                    why = "was not found" if exc.status == 404 else f"is overloaded ({one_line(exc, 160)})"
                    on_notice(f"The model {model} {why}; going on with {self.fallback_model} (--fallback-model).")
                    self.fallen_back[model] = model = self.fallback_model
                    self.model_params(params, model, effort)
                    attempt = overloaded = 0
                    continue
                if not exc.retryable or attempt > retries:
                    raise
                delay = self.backoff(attempt, exc.retry_after)
                on_retry(Retrying(attempt=attempt, retries=retries, delay=delay, error=str(exc)))
                await asyncio.sleep(delay)
                if exc.partial is not None:  # the model goes on from the blocks that completed
                    return exc.partial
            finally:
                self.api_seconds += time.monotonic() - started

    def model_params(self, params: dict[str, Any], model: str, effort: str | None = None) -> None:
        """A request's model, thinking and effort (the API's where ``model`` has it, else a thinking budget);
        ``effort``: instead of the session's (--effort)."""
        effort = self.effort if effort is None else effort
        params["model"], level = model, effort_level(model, effort)
        params.pop("thinking", None), params.pop("output_config", None)
        if level:
            params["output_config"] = {"effort": level}
        budget = EFFORT_BUDGETS.get(effort) if not level and self.thinking == "auto" else None
        if (thinking := self.thinking_param(model, params["max_tokens"], budget)) is not None:
            params["thinking"] = thinking

    def thinking_param(self, model: str, max_tokens: int, budget: int | None = None) -> dict[str, Any] | None:
        """The request's ``thinking`` field for ``model``, or None for none; ``budget``: instead of the setting."""
        mode = self.thinking if budget is None else ("on" if budget else "off")
        if mode == "auto":
            mode = "adaptive" if supports_adaptive_thinking(model) else "off"
        if self.thinking_refused or mode == "off":
            return None
        if mode == "adaptive":
            return {"type": "adaptive"}
        budget = min(budget or self.thinking_budget or DEFAULT_THINKING_BUDGET, max_tokens - 1)  # below max_tokens
        return {"type": "enabled", "budget_tokens": budget} if budget >= MIN_THINKING_BUDGET else None

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:  # what the server asked for, within reason
            return max(0.0, min(retry_after, self.retry_max_delay * 2))
        delay = min(self.retry_base_delay * 2.0 ** (attempt - 1), self.retry_max_delay)
        return delay * random.uniform(0.75, 1.25)

    def reply_wait(self) -> float:
        """How long a request waits for its reply to begin: ``first_reply_timeout`` until the server has answered
        this process once, then ``stall_timeout``."""
        return self.stall_timeout if self._heard else min(self.first_reply_timeout, self.stall_timeout)

    async def _stream_once(
        self,
        params: dict[str, Any],
        model: str,
        on_text: Callable[[str], None],
        on_thinking: Callable[[str], None],
        on_event: Callable[[dict[str, Any]], None] | None = None,
        on_reply: Callable[[], None] = lambda: None,
    ) -> ModelReply:
        """One request. A reply counts only when complete: a stream that ends without
        ``message_stop`` or a stop reason, or that carries malformed data, raises a retryable
        LLMError whose ``partial`` holds the blocks that completed before it (if any).

        The body goes out as prepared bytes (``RequestBodies``) through the client's ``post``; the
        SDK parses the server-sent events into typed events, and the message is put together here
        from them (``Accumulator``), as the SDK's ``MessageStream`` would at about twice the cost."""
        reply = Accumulator(on_text, on_thinking)
        stream = None
        loop = asyncio.get_running_loop()
        try:
            # One deadline, from the connection on and pushed forward on each event: a server silent for
            # stall_timeout is dead, whether it has not yet connected, answered, finished its headers
            # (one byte at a time) or sent the next event; one that has never answered this process gets
            # first_reply_timeout to begin (reply_wait). (asyncio.wait_for per event would create a
            # task for every token.)
            async with asyncio.timeout(self.reply_wait()) as stall:
                stream = await self._open_stream(self.bodies.build(params), stall)
                self._heard = True
                stall.reschedule(loop.time() + self.stall_timeout)
                on_reply()
                content_type = stream.response.headers.get("content-type", "")
                if content_type and "event-stream" not in content_type:
                    return await self._plain_reply(stream.response, content_type, model, on_text)
                async for event in stream:
                    stall.reschedule(loop.time() + self.stall_timeout)
                    if on_event is not None and event.type in RAW_EVENT_TYPES:
                        on_event(raw_event(event))
                    reply.add(event)
        except Exception as exc:
            error = await self._as_llm_error(exc, answered=stream is not None)
            raise _with_partial(reply, error, model) from None
        finally:
            if stream is not None:
                await stream.close()
        final = reply.message if reply.stopped else None
        if final is None or final.stop_reason is None:
            what = "ended before the reply was complete" if final is None else "ended without a stop reason"
            raise _with_partial(reply, LLMError(f"The response stream {what}.", retryable=True), model)
        if reply.torn and final.stop_reason != "max_tokens":  # a cut at max_tokens is the loop's to handle
            raise _with_partial(
                reply, LLMError("The reply held a tool call whose input is not valid JSON.", retryable=True), model
            )
        content = [block_to_dict(b) for b in final.content]
        return ModelReply(
            content=[b for b in content if b is not None],
            stop_reason=final.stop_reason,
            usage=_usage(model, final),
            model=model,
        )

    async def _as_llm_error(self, exc: Exception, answered: bool = True) -> LLMError:
        """What went wrong with one request, as one sentence; anything else is raised again.
        ``answered``: the server had sent its status and headers."""
        if isinstance(exc, LLMError):
            return exc
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) and not answered:
            url = base_url(self.credentials or resolve_credentials())
            if not self._heard:  # nothing there answers: no use waiting through every retry
                return LLMError(
                    f"The model API at {url} sent no reply in {self.reply_wait():g} s "
                    "(first_reply_timeout); check that a model server runs there, or raise "
                    "first_reply_timeout for a slow one.",
                    retryable=True,
                    retry_limit=1,
                )
            return LLMError(
                f"The model API at {url} sent no reply for {self.stall_timeout:g} s (stall_timeout).", retryable=True
            )
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
            return LLMError(f"The response stream stalled (no data for {self.stall_timeout:g} s).", retryable=True)
        anthropic = await self._sdk()
        import httpx2

        if isinstance(exc, anthropic.APIError):
            return describe_api_error(exc, self.client().base_url)
        if isinstance(exc, (httpx2.HTTPError, httpx2.StreamError)):
            return LLMError(f"The response stream broke off ({type(exc).__name__}).", retryable=True)
        if isinstance(exc, (ValueError, RuntimeError)):  # data that is not JSON, events out of order
            return LLMError(f"The server sent a malformed reply ({one_line(exc, 120)}).", retryable=True)
        raise exc

    @staticmethod
    async def _sdk() -> Any:
        """The ``anthropic`` module; while another thread still imports it, waited for off the event loop."""
        if not early_request.sdk_ready():
            await asyncio.to_thread(sdk_module)  # never beside the import thread's own (sdk_import.IMPORTING)
        import anthropic

        return anthropic

    async def _sdk_unhurried(self, deadline: asyncio.Timeout) -> Any:
        """``_sdk()`` with the stall deadline held while the import finishes: an import is no silent server."""
        if early_request.sdk_ready():
            return await self._sdk()
        deadline.reschedule(None)
        try:
            return await self._sdk()
        finally:
            deadline.reschedule(asyncio.get_running_loop().time() + self.reply_wait())

    async def _open_stream(self, body: bytes, deadline: asyncio.Timeout) -> Any:
        """Send one request body; the SDK's stream of typed events (a status error raised as the SDK's).
        The first call while the SDK still imports sends without it (``early_request``). ``deadline``:
        the stall timeout the caller runs this under."""
        if self._client is None and not early_request.sdk_ready():
            creds = self.credentials or resolve_credentials()
            if early_request.applies(creds):
                return await self._open_early(creds, body, deadline)
        request_going_out()  # an SDK import held for the first request goes on (sdk_import.py)
        from anthropic import AsyncStream
        from anthropic.types import Message, RawMessageStreamEvent

        return await self.client().post(
            "/v1/messages", cast_to=Message, content=body, stream=True, stream_cls=AsyncStream[RawMessageStreamEvent]
        )

    async def _open_early(self, creds: Credentials, body: bytes, deadline: asyncio.Timeout) -> Any:
        """Send with httpx2 now. A reply streams as ``EarlyStream`` at once; a status error or a plain
        body waits for the SDK (imported in a thread: the event loop goes on) and is then what its
        ``post`` makes of it, and a failure to send becomes its APITimeoutError or APIConnectionError."""
        import httpx2

        if self._http is None:
            self._http = early_request.http_client(self.timeout)  # the SDK's client takes it over
            start_sdk_import()  # the next calls are the SDK's
        # Sent without an import beside it: an SDK import held for the first request goes on once the request
        # is out, or failed (sdk_import.py).
        request = early_request.request(self._http, creds, body, self.timeout, sent=request_going_out)
        response: httpx2.Response | None = None
        try:
            try:
                response = await self._http.send(request, stream=True)
                failure: Exception | None = None
            except Exception as exc:  # noqa: BLE001 - mapped below, once the SDK is there
                failure = exc
            request_going_out()
            if (
                response is not None
                and response.is_success
                and "event-stream" in response.headers.get("content-type", "event-stream")
            ):
                return early_request.EarlyStream(response, self._replayed_error)
            anthropic = await self._sdk_unhurried(deadline)
            from anthropic.types import RawMessageStreamEvent

            if failure is not None or response is None:
                timed_out = isinstance(failure, httpx2.TimeoutException)
                raise (anthropic.APITimeoutError if timed_out else anthropic.APIConnectionError)(
                    request=request
                ) from failure
            if not response.is_success:
                await response.aread()
                raise await self._replayed_error(response.status_code, response.headers, response.content) from None
            return anthropic.AsyncStream(cast_to=RawMessageStreamEvent, response=response, client=self.client())
        except BaseException:
            if response is not None:
                await response.aclose()
            raise

    async def _replayed_error(self, status: int, headers: httpx2.Headers, content: bytes) -> BaseException:
        """The SDK's own error for a reply it did not fetch (the early request's: ``early_request.SdkError``),
        once the SDK is imported (in a thread: the event loop goes on)."""
        await self._sdk()
        return await sdk_error(self.client(), status, headers, content)

    async def _plain_reply(
        self, response: Any, content_type: str, model: str, on_text: Callable[[str], None]
    ) -> ModelReply:
        """A streaming request answered with a whole body (LiteLLM's proxy does this): a complete
        Message is the reply, shown as if it had streamed; anything else is a retryable failure."""
        from anthropic.types import Message

        body = (await response.aread()).decode("utf-8", "replace")
        try:
            data = json.loads(body) if "json" in content_type else None
            message = Message.model_validate(data) if isinstance(data, dict) and data.get("type") == "message" else None
        except ValueError:
            data = message = None
        if message is None or message.stop_reason is None:
            detail = error_message_of(data) or body
            raise LLMError(
                f"The server answered with {content_type.split(';')[0]} instead of a reply: {one_line(detail, 160)}",
                retryable=True,
            )
        content = [b for b in (block_to_dict(b) for b in message.content) if b is not None]
        for block in content:
            if block["type"] == "text":
                on_text(block["text"])
        return ModelReply(content, message.stop_reason, _usage(model, message), model)

    async def count_tokens(
        self, *, system: str, messages: list[Message], tools: list[dict[str, Any]], model: str | None = None
    ) -> int | None:
        """The server's token count for a prompt, or None where the server does not offer one."""
        if not self._can_count_tokens:
            return None
        try:
            params: dict[str, Any] = {"model": model or self.model, "system": system, "messages": messages}
            if tools:
                params["tools"] = tools
            result = await self.client().messages.count_tokens(**params)
            return int(result.input_tokens)
        except Exception:  # Ollama and others: no such endpoint; estimate instead
            self._can_count_tokens = False
            return None


def _with_partial(reply: Accumulator, error: LLMError, model: str) -> LLMError:
    """``error``, holding the blocks that completed when it is retryable and they hold a tool call: a call is
    never asked for twice. A reply of text (and thinking) alone is asked for again whole, so that its draft,
    streamed and withdrawn (``TextReset``), never stands beside the answer that completed."""
    if error.retryable and has_tool_use(reply.completed):
        error.partial = ModelReply(reply.completed, "incomplete", _usage(model, reply.message), model)
    return error


def estimate_tokens(*parts: Any) -> int:
    """A rough token count (about four characters a token) for servers that report none."""
    return sum(len(p) if isinstance(p, str) else len(json.dumps(p, default=str)) for p in parts) // 4
