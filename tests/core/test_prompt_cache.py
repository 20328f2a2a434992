"""Consecutive requests share their prefix (issue 38 §2): what changes in a session (the permission mode, the
plan, a background result, a steer, an interrupt's note) goes at the end of the next request, so the API's
prompt cache serves the rest; only a compaction rewrites the conversation, and then the prompt and tools stay."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from itertools import pairwise

from agentcli.core.content import NOTE_TAG
from agentcli.core.engine.mode_note import MODE_NOTE
from agentcli.core.events import UserMessage
from tests.fakes.anthropic_server import offers_tool, text, tool_use
from tests.waiting import until, within

PLAN = {
    "todos": [
        {"content": "Read the code", "status": "in_progress", "activeForm": "Reading the code"},
        {"content": "Fix it", "status": "pending", "activeForm": "Fixing it"},
    ]
}


def is_main(body) -> bool:
    return offers_tool(body, "task")


def unmarked(value):
    """``value`` without its cache breakpoints: where they go is no part of the prefix the cache matches."""
    if isinstance(value, dict):
        return {key: unmarked(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value


def blocks(body) -> list[str]:
    """The conversation as the cache reads it: each message's blocks in order, with the role they are in."""
    out = []
    for message in unmarked(body["messages"]):
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            out.append(message["role"] + json.dumps(block, sort_keys=True))
    return out


def assert_prefix_kept(before, after, conversation_kept: bool = True) -> None:
    assert json.dumps(unmarked(after["tools"])) == json.dumps(unmarked(before["tools"]))
    assert json.dumps(unmarked(after["system"])) == json.dumps(unmarked(before["system"]))
    if conversation_kept:
        old, new = blocks(before), blocks(after)
        assert new[: len(old)] == old and len(new) > len(old)


def notes_in(body) -> str:
    return json.dumps(body["messages"][-1]["content"])


async def test_a_mode_change_a_plan_a_background_result_a_steer_and_an_interrupt_keep_the_prefix(server, make_session):
    session, events = make_session(interactive=True)
    # 1 a plan (todo_write) · 2 a mode change · 3 plan mode on · 4 off again, with a background child ·
    # 5 its result · 6 a steer · 7 an interrupt's note · 8 the turn after it
    server.when(lambda body: not is_main(body), text("There are 0 test files."))
    hold, cut = threading.Event(), threading.Event()
    server.when(
        is_main,
        tool_use("todo_write", PLAN),
        text("Planned."),
        text("Edits go through now."),
        text("Only reading, then."),
        tool_use("task", {"description": "Count tests", "prompt": "Count the test files.", "run_in_background": True}),
        text("Started it."),
        text("The child counted 0."),
        tool_use("glob", {"pattern": "*"}, gate=hold),
        text("Reading README.md then."),
        text("Never sent.", gate=cut, gate_timeout=120),
        text("Going on."),
    )
    await session.send("plan the fix")
    session.permissions.set_mode("acceptEdits")  # shift+tab, or /permissions acceptEdits
    await session.send("make the edits")
    session.permissions.set_mode("plan")
    await session.send("only look")
    session.permissions.set_mode("default")
    await session.send("count the tests in the background")
    await until(lambda: session.subagents.pending, "the child's result to wait")
    assert (await within(session.read_results(), "the turn on the result")) is not None
    run = asyncio.create_task(session.send("list the files"))
    await until(lambda: len([b for b in server.requests if is_main(b)]) == 8, "the glob call")
    assert session.steering.add("Read README.md instead.") == ""
    hold.set()
    await within(run, "the steered turn")
    run = asyncio.create_task(session.send("wait"))
    await until(lambda: len([b for b in server.requests if is_main(b)]) == 10, "the call to interrupt")
    run.cancel()
    await until(run.done, "the interrupted turn to end")
    cut.set()
    await session.send("go on")

    requests = [body for body in server.requests if is_main(body)]
    assert len(requests) == 11
    for before, after in pairwise(requests):
        assert_prefix_kept(before, after)
    system = requests[0]["system"][0]["text"]
    assert "Permission mode: default" in system  # the prompt keeps the mode it began with; notes say the rest
    assert MODE_NOTE.split("{")[0] + "acceptEdits" in notes_in(requests[2])
    assert MODE_NOTE.split("{")[0] + "plan" in notes_in(requests[3])
    assert MODE_NOTE.split("{")[0] + "default" in notes_in(requests[4])
    assert f"<{NOTE_TAG}>" in notes_in(requests[3]) and "edits and commands are refused" in notes_in(requests[3])
    assert "There are 0 test files." in notes_in(requests[6])
    assert "Read README.md instead." in notes_in(requests[8])
    assert "The user interrupted your turn here" in notes_in(requests[10])
    said = [e for e in events.of(UserMessage) if "permission mode is now" in str(e.content)]
    assert [e.origin for e in said] == ["state"] * 3  # not the user's words; the front ends show the mode their own way
    server.assert_no_rejections()


async def test_the_mode_goes_unsaid_until_it_changes_and_a_change_before_the_first_reply_is_in_the_prompt(
    server, make_session
):
    server.script(text("One."), text("Two."), text("Three."))
    session, _ = make_session(interactive=True)
    session.permissions.set_mode("acceptEdits")  # before anything was sent: nothing cached to keep
    await session.send("first")
    session.permissions.set_mode("plan")
    session.permissions.set_mode("acceptEdits")  # there and back between two requests: nothing to say
    await session.send("second")
    await session.send("third")
    first, second, third = server.requests
    assert "Permission mode: acceptEdits" in first["system"][0]["text"]
    assert "permission mode is now" not in json.dumps(second["messages"] + third["messages"])
    assert_prefix_kept(first, second)
    assert_prefix_kept(second, third)
    server.assert_no_rejections()


async def test_after_a_compaction_the_prompt_and_tools_stay_and_the_mode_is_said_again(server, make_session):
    server.script(text("One."), text("Two."), text("Three."), text("Four."), text("Summary of it all."), text("Five."))
    session, _ = make_session(interactive=True)
    for prompt in ("a", "b", "c"):
        await session.send(prompt)
    session.permissions.set_mode("acceptEdits")
    await session.send("d")
    assert await session.compact()  # the summary replaces the older turns, the note among them
    await session.send("e")
    requests = [body for body in server.requests if is_main(body)]
    assert_prefix_kept(requests[-2], requests[-1], conversation_kept=False)
    said = re.findall(r"The permission mode is now (\w+)", json.dumps(requests[-1]["messages"]))
    assert said[-1:] == ["acceptEdits"]  # kept among the recent turns, or said again once summarized away
    server.assert_no_rejections()
