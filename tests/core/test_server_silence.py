"""A server that accepts and then says nothing, or says it a byte at a time, meets the stall timeout
before its first byte as it does mid-stream; a refused connection fails after one quick retry.

Each case runs the real SDK (and the early request, core/model/early_request.py) against a real socket on
loopback that misbehaves on purpose. No timing is asserted: the attempts are counted, and the
pytest timeout is the guard against a hang.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Callable

import pytest

from agentcli.core.model import early_request
from agentcli.core.events import Retrying
from agentcli.core.model.llm import LLM, Credentials, LLMError
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


async def ask(url: str, seen: list[Retrying], **options: Any) -> None:
    llm = LLM(credentials=Credentials(api_key="sk-ant-silence-0000", base_url=url), retry_base_delay=0.01,
              retry_max_delay=0.01, **options)
    try:
        await llm.stream(system="Be brief.", messages=[{"role": "user", "content": "hi"}], tools=[],
                         on_text=lambda text: None, on_retry=seen.append)
    finally:
        await llm.aclose()


@pytest.mark.parametrize("behaviour", [silent, slowloris_headers, status_only, headers_only_json],
                         ids=lambda b: b.__name__)
async def test_a_server_silent_before_its_first_event_meets_the_stall_timeout(path, behaviour):
    server = MisbehavingServer(behaviour)
    retries: list[Retrying] = []
    try:
        with pytest.raises(LLMError) as failed:
            await ask(server.url, retries, stall_timeout=0.5, retries=1)
        # On a loaded machine a try can meet the stall timeout before its connection is made, so the
        # server sees at least one try and never more than two; the client's own count is exact.
        wait_until(lambda: server.connections >= 1, "the server seeing the first try")
    finally:
        server.close()  # only now: a try still in the listener's backlog is counted
    assert server.connections <= 2
    assert len(retries) == 1
    assert failed.value.retryable
    message = str(failed.value)
    if behaviour in (silent, slowloris_headers, status_only):
        assert message == f"The model API at {server.url} sent no reply for 0.5 s (stall_timeout)."
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


async def test_timeouts_keep_their_backoff_and_count():
    """Only a refusal is cut short: a silent server is tried as many times as api_retries says."""
    server = MisbehavingServer(silent)
    retries: list[Retrying] = []
    try:
        with pytest.raises(LLMError):
            await ask(server.url, retries, stall_timeout=0.2, retries=3)
        wait_until(lambda: server.connections >= 1, "the server seeing a try")  # see the test above
    finally:
        server.close()
    assert server.connections <= 4
    assert [r.attempt for r in retries] == [1, 2, 3] and {r.retries for r in retries} == {3}

