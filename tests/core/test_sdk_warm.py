"""-p's import thread warms the SDK client's first request (core/model/sdk_warm.py) without sending anything."""

from __future__ import annotations

import threading

import pytest

from agentcli.core.model.sdk_import import sdk_platform
from agentcli.core.model.sdk_warm import warm_first_post
from tests.fakes.anthropic_server import FakeAnthropic


def warmed_in_a_thread(base_url: str) -> list[bool]:
    """``warm_first_post`` where -p runs it: in a thread of its own, beside no event loop."""
    went: list[bool] = []
    thread = threading.Thread(target=lambda: went.append(warm_first_post(base_url, sdk_platform())))
    thread.start()
    thread.join()
    return went


def test_the_warm_up_posts_through_the_sdk_and_sends_nothing(server: FakeAnthropic) -> None:
    assert warmed_in_a_thread(server.base_url) == [True]  # the post went through the SDK and its reply was read
    assert server.requests == []  # to the in-memory transport: the server the run talks to heard nothing


def test_with_the_sdks_log_on_there_is_no_warm_up(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    """ANTHROPIC_LOG=debug logs every request the SDK makes: a warm-up would show one that was never made."""
    monkeypatch.setenv("ANTHROPIC_LOG", "debug")
    assert warmed_in_a_thread(server.base_url) == [False]
    assert server.requests == []
