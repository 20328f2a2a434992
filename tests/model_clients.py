"""Every model client a test opens is closed by its end, on the test's own loop.

A model client (``LLM``: the SDK's ``AsyncAnthropic`` and the early request's connections under it) left open is
closed by the collector whenever it runs: during a later test, whose loop then runs the closing (the SDK schedules
``aclose()`` on the running loop) or finds its own closed ('Event loop is closed'). So:

- ``closing`` (a fixture, in tests/conftest.py) is the one way a test closes what it opened beside ``make_session``:
  ``closing(session)``, ``closing(llm)`` or ``closing(client)`` returns its argument and closes it when the test
  ends, as ``make_session`` closes its own;
- ``model_clients_closed`` (autouse) notes every ``LLM`` made during a test, through ``LLM.__init__`` (the product's
  own construction point, in the core, the front ends and the tests alike), and every SDK ``AsyncAnthropic`` a test
  makes on its own thread (the stand-in server's tests make them bare), and fails that test when one of them is
  still open at its end, so a test that forgets fails itself instead of a later one. (Fourteen bare SDK clients once
  went unnoticed: the collector's close of one failed as an error nobody handled while a line-mode question was up.)

This was once thought to explain a rare "could not connect" retry under load (issue 43); with every client closed
it still happens, and what it is was measured since (tests/retries.py): not this.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import pytest
from anthropic import AsyncAnthropic

from agentcli.core.model.llm import LLM
from agentcli.core.session import Session

T = TypeVar("T")


def is_open(llm: LLM) -> bool:
    client, http = llm._client, llm._http
    if client is not None:
        return not client.is_closed()
    return http is not None and not http.is_closed


async def close(thing: object) -> None:
    """A session's files, sandbox and model client (as make_session closes its own), an LLM, or an SDK client."""
    if isinstance(thing, Session):
        thing.close()
        await thing.llm.aclose()
    elif isinstance(thing, LLM):
        await thing.aclose()
    else:
        await thing.close()  # type: ignore[attr-defined]  # anthropic.AsyncAnthropic


@pytest.fixture
async def closing() -> AsyncIterator[Callable[[T], T]]:
    """``closing(x)`` returns x and closes it when the test ends, last opened first."""
    held: list[Any] = []

    def hold(thing: T) -> T:
        held.append(thing)
        return thing

    yield hold
    for thing in reversed(held):
        await close(thing)


@pytest.fixture(autouse=True)
def model_clients_closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fails the test that leaves a model client open (autouse: torn down after the fixtures that close them).
    The LLMs are held until then, so that none is collected, and closed out of sight, before it is looked at."""
    made: list[LLM] = []
    bare: list[AsyncAnthropic] = []
    init, sdk_init = LLM.__init__, AsyncAnthropic.__init__
    test_thread = threading.current_thread()

    def noted(self: LLM, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(self)

    def noted_sdk(self: AsyncAnthropic, *args: Any, **kwargs: Any) -> None:
        sdk_init(self, *args, **kwargs)
        if threading.current_thread() is test_thread:  # not -p's warming thread, which closes its own
            bare.append(self)

    monkeypatch.setattr(LLM, "__init__", noted)
    monkeypatch.setattr(AsyncAnthropic, "__init__", noted_sdk)
    yield
    owned = {id(llm._client) for llm in made}  # an LLM's own SDK client is counted as the LLM
    left = sum(1 for llm in made if is_open(llm)) + sum(
        1 for client in bare if id(client) not in owned and not client.is_closed()
    )
    bare.clear()
    made.clear()
    if left:
        pytest.fail(
            f"{left} model client(s) made during this test are still open at its end: close each on the "
            "test's own loop (the closing fixture, tests/model_clients.py), or a later test's loop will"
        )
