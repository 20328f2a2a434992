"""A server that accepts and then says nothing, or says it a byte at a time, is given up on: one that has not
answered this process yet after first_reply_timeout and one more try, as a refused connection is; one that
answered before, or whose reply has begun, after stall_timeout and every retry.

Each case runs the real SDK (and the early request, core/model/early_request.py) against a real socket on
loopback that misbehaves on purpose. No timing is asserted: the attempts are counted, and the
pytest timeout is the guard against a hang.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest

from agentcli.core.events import Retrying
from agentcli.core.model import early_request
from agentcli.core.model.llm import LLM, Credentials, LLMError
from tests.fakes.anthropic_server import sse_events, text
from tests.waiting import wait_until

Behaviour = Callable[[socket.socket, threading.Event], None]


def silent(conn: socket.socket, stop: threading.Event) -> None:
    """Read the request, answer nothing."""
    stop.wait()


def slowloris_headers(conn: socket.socket, stop: threading.Event) -> None:
    """The status line, then headers one byte at a time, never finishing them."""
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    header = b"content-type: text/event-stream\r\nx-padding: " + b"a" * 100_000
    for byte in header:
        if stop.wait(0.1):
            return
        conn.sendall(bytes([byte]))


def status_only(conn: socket.socket, stop: threading.Event) -> None:
    """The status line and nothing after it."""
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    stop.wait()


def answers_once() -> Behaviour:
    """A whole streamed reply on the first connection; silence on every later one."""
    served: list[int] = []

    def behaviour(conn: socket.socket, stop: threading.Event) -> None:
        if served:
            stop.wait()
            return
        served.append(1)
        body = "".join(
            f"event: {name}\ndata: {json.dumps(data)}\n\n"
            for name, data in sse_events(text("Hi."), {"model": "m", "messages": []})
        ).encode()
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(body), body)
        )

    return behaviour


def headers_only_json(conn: socket.socket, stop: threading.Event) -> None:
    """Whole headers of a JSON reply, and never its body."""
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n")
    stop.wait()


class MisbehavingServer:
    """A TCP listener on loopback whose every connection gets ``behaviour``; it counts the connections."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        self.connections = 0
        self.threads: list[threading.Thread] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(target=self.handle, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                self.behaviour(conn, self.stop)
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest.fixture(params=["early", "normal"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "early":  # the SDK counts as still importing: the first call goes out with httpx2
        monkeypatch.setattr(early_request, "sdk_ready", lambda: False)
    return str(request.param)


async def ask(url: str, seen: list[Retrying], then: dict[str, Any] | None = None, **options: Any) -> None:
    """One model call; with ``then``, a second one of the same client with those options changed."""
    llm = LLM(
        credentials=Credentials(api_key="sk-ant-silence-0000", base_url=url),
        retry_base_delay=0.01,
        retry_max_delay=0.01,
        **options,
    )
    try:
        for changes in [{}, *([then] if then is not None else [])]:
            for name, value in changes.items():
                setattr(llm, name, value)
            await llm.stream(
                system="Be brief.",
                messages=[{"role": "user", "content": "hi"}],
                tools=[],
                on_text=lambda text: None,
                on_retry=seen.append,
            )
    finally:
        await llm.aclose()


@pytest.mark.parametrize(
    "behaviour", [silent, slowloris_headers, status_only, headers_only_json], ids=lambda b: b.__name__
)
async def test_a_server_that_never_answered_is_given_up_on_after_one_more_try(path, behaviour):
    server = MisbehavingServer(behaviour)
    retries: list[Retrying] = []
    try:
        with pytest.raises(LLMError) as failed:
            # whole headers are a reply that began: stall_timeout holds for the rest, and api_retries
            began = behaviour is headers_only_json
            options: dict[str, Any] = (
                {"stall_timeout": 0.5, "retries": 1} if began else {"first_reply_timeout": 0.5, "retries": 8}
            )  # the default count
            await ask(server.url, retries, **options)
        # On a loaded machine a try can meet the stall timeout before its connection is made, so the
        # server sees at least one try and never more than two; the client's own count is exact.
        wait_until(lambda: server.connections >= 1, "the server seeing the first try")
    finally:
        server.close()  # only now: a try still in the listener's backlog is counted
    assert server.connections <= 2
    assert len(retries) == 1 and retries[0].retries == 1
    assert failed.value.retryable
    message = str(failed.value)
    if behaviour in (silent, slowloris_headers, status_only):
        assert message == (
            f"The model API at {server.url} sent no reply in 0.5 s (first_reply_timeout); check that "
            "a model server runs there, or raise first_reply_timeout for a slow one."
        )
    else:
        assert "0.5 s" in message


async def test_a_refused_connection_fails_after_one_quick_retry_naming_the_url(path):
    with socket.create_server(("127.0.0.1", 0)) as taken:  # a port that was free a moment ago, now closed
        url = f"http://127.0.0.1:{taken.getsockname()[1]}"
    retries: list[Retrying] = []
    with pytest.raises(LLMError) as failed:
        await ask(url, retries, retries=8)  # the default: timeouts and 5xx keep theirs
    assert len(retries) == 1 and retries[0].retries == 1
    message = str(failed.value)
    assert message.startswith(f"Nothing is listening at {url}") and "connection refused" in message
    assert message.endswith(".") and ". " not in message  # one sentence


async def test_a_server_that_answered_before_keeps_the_stall_timeout_and_every_retry(path):
    """Only a server that never answered is cut short: one that answered once and then goes silent is tried as
    many times as api_retries says, each try waiting stall_timeout."""
    server = MisbehavingServer(answers_once())
    retries: list[Retrying] = []
    try:
        with pytest.raises(LLMError) as failed:
            await ask(server.url, retries, then={"stall_timeout": 0.2}, retries=3)
        wait_until(lambda: server.connections >= 2, "the server seeing a try after its answer")  # see above
    finally:
        server.close()
    assert server.connections <= 5
    assert [r.attempt for r in retries] == [1, 2, 3], [r.error for r in retries]
    assert [r.attempt for r in retries] == [1, 2, 3] and {r.retries for r in retries} == {3}
    assert str(failed.value) == f"The model API at {server.url} sent no reply for 0.2 s (stall_timeout)."
