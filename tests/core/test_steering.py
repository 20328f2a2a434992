"""Steering the main agent: what the user sends into its running turn reaches the model at the next tool-result
boundary, marked as the user's; when the turn ends first, nothing of it is lost. Against the stand-in server."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from agentcli.core.content import NOTE_TAG
from agentcli.core.events import SteerDelivered, UserMessage
from tests.fakes.anthropic_server import text, tool_use
from tests.waiting import until, within

STEER = "Stop listing; read README.md instead."


def last_user(body) -> list[dict[str, Any]]:
    return body["messages"][-1]["content"]


async def test_a_steered_message_reaches_the_running_turn_after_the_tool_results(server, make_session):
    hold = threading.Event()
    server.script(tool_use("glob", {"pattern": "*"}, gate=hold), text("Reading README.md then."))
    session, events = make_session()
    run = asyncio.create_task(session.send("list the files"))
    try:
        await until(lambda: server.requests, "the first model call")
        assert session.steering.add(STEER) == ""
        hold.set()
        result = await within(run, "the turn")
    finally:
        hold.set()
    first, second = server.requests
    assert STEER not in str(first["messages"])
    *results, steered = last_user(second)  # one user message: the tool results, then the user's words
    assert [block["type"] for block in results] == ["tool_result"]
    assert steered["type"] == "text" and STEER in steered["text"]
    # the same words a child reads (tests/core/test_subagent_steering.py), said to be the user's, not agentcli's, in
    # agentcli's markup, which no tool result can write (content.quoted)
    assert (
        steered["text"]
        == (
            f"<{NOTE_TAG}>\nA message from the user while you work (not a tool result; take it into "
            f"account):\n\n{STEER}\n</{NOTE_TAG}>"
        )
        and "From agentcli" not in steered["text"]
    )
    assert result.text == "Reading README.md then."
    [delivered] = events.of(SteerDelivered)
    assert delivered.texts == (STEER,) and delivered.agent_id == "main"
    assert [m.origin for m in events.of(UserMessage)] == ["user", "tool_results", "steered"]
    assert session.steering.take() == []  # read: nothing is given back


async def test_a_steer_the_turn_ends_before_reading_is_given_back(server, make_session):
    hold = threading.Event()
    server.script(text("All done.", gate=hold))
    session, events = make_session()
    run = asyncio.create_task(session.send("hi"))
    try:
        await until(lambda: server.requests, "the model call")
        session.steering.add("one more thing")
        hold.set()
        await within(run, "the turn")
    finally:
        hold.set()
    assert "one more thing" not in str(server.requests[0]["messages"])
    assert not events.of(SteerDelivered)
    assert session.steering.take() == ["one more thing"]  # the front end sends it as the next prompt


async def test_an_interrupted_turn_keeps_its_steers_and_an_empty_one_is_refused(server, make_session):
    hold = threading.Event()
    server.script(tool_use("glob", {"pattern": "*"}, gate=hold), text("never"))
    session, _ = make_session()
    run = asyncio.create_task(session.send("go"))
    try:
        await until(lambda: server.requests, "the first model call")
        assert "empty" in session.steering.add("   ")
        session.steering.add("first")
        session.steering.add("second")
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)
    finally:
        hold.set()
    assert session.steering.take() == ["first", "second"]  # back to the input, in order
