"""What one model call ends with: a ``ModelReply``, or an ``LLMError`` that says in one sentence what went wrong,
made from the SDK's exceptions (``describe_api_error``), or from a reply the SDK did not fetch itself
(``sdk_error``: the first request's, sent before the SDK was imported, early_request.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..events import Usage
from ..system import secret_env

if TYPE_CHECKING:
    import httpx2
    from anthropic import AsyncAnthropic


@dataclass
class ModelReply:
    """One finished assistant message: plain-dict blocks, why it stopped, and what it cost."""

    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Usage
    model: str = ""


class LLMError(Exception):
    """A failed model call, described in one sentence a user can act on."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        overflow: bool = False,
        partial: ModelReply | None = None,
        retry_limit: int | None = None,
    ) -> None:
        super().__init__(redact(message))
        self.status = status
        self.retryable = retryable
        self.retry_limit = retry_limit  # at most this many retries for this failure, whatever ``LLM.retries`` says
        self.retry_after = retry_after
        self.overflow = overflow  # the prompt no longer fits the context window
        self.partial = partial  # the blocks that completed before a stream broke: kept, never asked twice


redact = secret_env.redact  # one redaction for every message: the key, held secrets, URL passwords


def one_line(text: object, limit: int = 300) -> str:
    """Server text as one trimmed line: white space runs (blank lines too) become one space."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def describe_api_error(exc: Exception, base_url: object = "") -> LLMError:
    """Turn an SDK exception into an LLMError with one clear sentence (never the API key)."""
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError) and refused(exc):
        # Nothing to wait for (a local server that is not running): one quick retry, then say so.
        return LLMError(
            f"Nothing is listening at {str(base_url).rstrip('/')} (connection refused); start the "
            "model server there, or point ANTHROPIC_BASE_URL at one that runs.",
            retryable=True,
            retry_limit=1,
        )
    if isinstance(exc, anthropic.APIConnectionError):
        reason = "timed out" if isinstance(exc, anthropic.APITimeoutError) else "could not connect"
        return LLMError(
            f"The model API at {base_url} {reason}; check your network or ANTHROPIC_BASE_URL.", retryable=True
        )
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        message = _error_message(exc)
        if _error_type(exc) in ("overloaded_error", "api_error", "rate_limit_error") and status < 400:
            # An error event in the middle of a stream that began as 200.
            return LLMError(f"The API failed mid-response ({_error_type(exc)}): {message}.", retryable=True)
        retry_after = _retry_after(exc)
        if status == 401:
            return LLMError(f"The API key was rejected (401): {message}. Check ANTHROPIC_API_KEY.", status=status)
        if status == 403:
            return LLMError(f"Permission denied by the API (403): {message}.", status=status)
        if status == 404:
            return LLMError(f"Not found (404): {message}. Check --model and ANTHROPIC_BASE_URL.", status=status)
        if status == 429:
            return LLMError(f"Rate limited (429): {message}.", status=status, retryable=True, retry_after=retry_after)
        if status == 529 or status >= 500:
            return LLMError(
                f"The API is overloaded or failing ({status}): {message}.",
                status=status,
                retryable=True,
                retry_after=retry_after,
            )
        overflow = "prompt is too long" in message.lower() or "context window" in message.lower()
        return LLMError(f"The API refused the request ({status}): {message}.", status=status, overflow=overflow)
    # A stream that died mid-way surfaces as a plain APIError.
    return LLMError(f"The response stream failed: {one_line(exc)}.", retryable=True)


def refused(exc: BaseException) -> bool:
    """Whether a failed connection was refused (ECONNREFUSED somewhere in its chain of causes)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, ConnectionRefusedError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def _error_message(exc: Any) -> str:
    found = error_message_of(getattr(exc, "body", None))
    return one_line(found or getattr(exc, "message", exc)).rstrip(".")


def error_message_of(body: Any) -> str:
    """The message of an API-shaped error body (``{"error": {"message": …}}``), or ''."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return one_line(err["message"])
    return one_line(err) if isinstance(err, str) else ""


def _error_type(exc: Any) -> str:
    body = getattr(exc, "body", None)
    err = body.get("error") if isinstance(body, dict) else None
    return str(err.get("type", "")) if isinstance(err, dict) else ""


def _retry_after(exc: Any) -> float | None:
    try:
        value = float(exc.response.headers.get("retry-after"))
    except (AttributeError, TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


async def sdk_error(client: AsyncAnthropic, status: int, headers: httpx2.Headers, content: bytes) -> BaseException:
    """What the SDK's ``post`` raises for a reply it did not fetch itself (the early request's, already
    read): a copy of its client gets the reply from its transport (the public ``http_client`` option),
    so the SDK's own mapping to its error classes decides, through no private part of it."""
    import anthropic
    import httpx2
    from anthropic import AsyncStream
    from anthropic.types import Message, RawMessageStreamEvent

    kept = [
        (name, value)
        for name, value in headers.multi_items()  # content is already decoded
        if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    replay = httpx2.AsyncClient(
        transport=httpx2.MockTransport(
            lambda request: httpx2.Response(status, headers=kept, content=content, request=request)
        )
    )
    try:
        stream = await client.with_options(http_client=replay, max_retries=0).post(
            "/v1/messages", cast_to=Message, content=b"", stream=True, stream_cls=AsyncStream[RawMessageStreamEvent]
        )
        async for _ in stream:
            pass
    except anthropic.APIStatusError as exc:
        return exc
    finally:
        await replay.aclose()
    return LLMError(f"The server refused the request ({status}).", retryable=status >= 500)
