"""A reply whose tool calls the API would refuse to see again (an empty name, a repeated id, an input that
is no object, …) is kept in a form the API takes, each bad call refused with its own result, and the
turn goes on. The stand-in validates every request as the API does (unique ids in its format, every
tool_use answered right after), so a history that would be refused fails these tests."""

from __future__ import annotations

import json
from typing import Any

from agentcli.core.events import ToolCallFinished
from agentcli.core.tools import NO_NAME
from tests.fakes.anthropic_server import reply, text, tool_result_text, tool_results, tool_use_block, validate_request


def call(name: Any, args: Any = None, id: Any = None) -> dict[str, Any]:
    block = tool_use_block("read_file", {}, id)
    block["name"], block["input"] = name, {"path": "README.md"} if args is None else args
    return block


def sent_calls(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]


def results_by_id(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["tool_use_id"]: r for r in tool_results(body)}


async def test_each_kind_of_malformed_call_gets_its_own_refusal_and_the_turn_goes_on(server, make_session):
    good = call("read_file")
    twin = call("grep", {"pattern": "Demo"}, id=good["id"])
    server.script(
        reply(
            "Reading.",
            good,
            twin,
            call(""),
            call("read_file", [1, 2]),
            call("read_file", "README.md"),
            call("no_such_tool"),
            call("read file"),
            call("x" * 300),
            call("read_file", id="bad id!"),
        ),
        text("Done."),
    )
    session, events = make_session()
    result = await session.send("Read the README")
    assert result.text == "Done."
    server.assert_no_rejections()  # the next request was one the API takes
    sent = server.requests[1]
    calls = sent_calls(sent)
    assert len(calls) == 9 and len({c["id"] for c in calls}) == 9
    results = results_by_id(sent)
    assert set(results) == {c["id"] for c in calls}  # each call, its own result
    said = [tool_result_text(results[c["id"]]) for c in calls]
    assert calls[0]["id"] == good["id"] and not results[good["id"]].get("is_error")
    assert "Demo app" in said[0]
    assert [bool(results[c["id"]].get("is_error")) for c in calls[1:]] == [True] * 8
    assert "repeated the id" in said[1] and calls[1]["id"] != good["id"] and calls[1]["name"] == "grep"
    assert said[2].startswith('This call\'s tool name "" is not the name of a tool') and calls[2]["name"] == NO_NAME
    assert "was a list, not an object" in said[3] and calls[3]["input"] == {}
    assert "was a string, not an object" in said[4]
    assert said[5].startswith("There is no tool named 'no_such_tool'")  # a name in the format, not offered
    assert '"read file" is not the name of a tool' in said[6] and "read_file" in said[6]
    assert "…" in said[7] and len(said[7]) < 400
    assert "had no valid id" in said[8]
    # the session's own history (what a resume and the next turn send) is the same valid one
    assert (
        validate_request(
            {
                "model": "m",
                "max_tokens": 1,
                "messages": session.main.messages,
                "tools": [{"name": "read_file", "input_schema": {"type": "object"}}],
            }
        )
        is None
    )
    finished = events.of(ToolCallFinished)
    assert len(finished) == 9 and sum(e.is_error for e in finished) == 8


async def test_forty_five_malformed_calls_in_one_reply(server, make_session):
    shapes = [
        lambda n: call(""),
        lambda n: call(f"bad name {n}"),
        lambda n: call("read_file", n),
        lambda n: call("read_file", None, id=f"id {n}"),
        lambda n: call("read_file", id="toolu_same"),
    ]
    bad = [shapes[n % len(shapes)](n) for n in range(45)]
    server.script(reply(*bad), text("I will stop making bad calls."))
    session, _ = make_session()
    result = await session.send("go")
    assert result.text == "I will stop making bad calls."
    server.assert_no_rejections()
    sent = server.requests[1]
    calls = sent_calls(sent)
    results = results_by_id(sent)
    assert len(calls) == 45 == len(results) and set(results) == {c["id"] for c in calls}
    same = [results[c["id"]] for c, b in zip(calls, bad, strict=True) if b["id"] == "toolu_same"]
    assert not same[0].get("is_error") and all(r["is_error"] for r in same[1:])  # the first keeps its id
    assert sum(bool(r.get("is_error")) for r in results.values()) == 45 - 1


async def test_an_id_the_history_used_before_is_refused(server, make_session):
    first = call("read_file")
    again = call("read_file", id=first["id"])
    server.script(reply(first), reply(again), text("ok"))
    session, _ = make_session()
    assert (await session.send("twice")).text == "ok"
    server.assert_no_rejections()
    [result] = tool_results(server.requests[2])
    assert result["is_error"] and "repeated the id" in tool_result_text(result)


async def test_three_hundred_calls_in_one_reply_are_all_answered(server, make_session, repo):
    calls = [tool_use_block("read_file", {"path": "README.md"}) for _ in range(150)]
    calls += [tool_use_block("glob", {"pattern": f"*.md{n}"}) for n in range(150)]
    server.script(reply(*calls), text("Read it 300 times."))
    session, _ = make_session()
    assert (await session.send("read it a lot")).text == "Read it 300 times."
    server.assert_no_rejections()
    results = results_by_id(server.requests[1])
    assert list(results) == [c["id"] for c in calls]
    assert all("Demo app" in tool_result_text(results[c["id"]]) for c in calls[:150])
    assert not any(r.get("is_error") for r in results.values()), json.dumps(
        [tool_result_text(r) for r in results.values() if r.get("is_error")][:3]
    )
