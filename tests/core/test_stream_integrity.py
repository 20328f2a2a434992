"""A reply counts only when it is complete: cut, malformed and odd replies against the stand-in server."""

from __future__ import annotations

import json

import pytest

from agentcli.core.engine.loop import REFUSED
from agentcli.core.events import AssistantMessage, Compacted, Notice, TextDelta, TextReset, ToolCallStarted
from agentcli.core.model.llm import LLM, LLMError, redact
from tests.core.test_compaction import is_summarizer
from tests.fakes.anthropic_server import (
    error,
    raw,
    reply,
    sse_events,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)


def event_index(r, name, nth=1):
    """The position of the nth event called ``name`` in how the fake streams reply ``r``."""
    names = [n for n, _ in sse_events(r, {"model": "m", "messages": []})]
    return [i for i, n in enumerate(names) if n == name][nth - 1]


def streamed_after_last_reset(events):
    resets = events.of(TextReset)
    start = events.events.index(resets[-1]) if resets else 0
    return "".join(e.text for e in events.events[start:] if isinstance(e, TextDelta))


def stored_texts(session):
    return [b.get("text", "") for m in session.main.messages if m["role"] == "assistant" for b in m["content"]]


ONE_BLOCK = text("I'll look at the login flow first and then explain it.")
# Each fault cuts the one-block reply before its text block completed.
NO_BLOCK_COMPLETED_FAULTS = {
    "clean close after partial text": ONE_BLOCK.with_options(end_after_events=4),
    "SSE data line that is not JSON": ONE_BLOCK.with_options(garbage_after_events=4),
    "HTML page with 200": raw("<html>\n<body>\n<h1>502 Bad Gateway</h1>\n</body>\n</html>"),
    "JSON error page with 200": raw(json.dumps({"error": "upstream\n\n  timed out"}), "application/json"),
}


@pytest.mark.parametrize("fault", NO_BLOCK_COMPLETED_FAULTS)
async def test_a_reply_cut_before_any_block_completed_is_asked_for_again(server, make_session, fault):
    server.script(
        error(529, "overloaded_error", "Overloaded"),
        error(500, "api_error", "Internal server error"),
        NO_BLOCK_COMPLETED_FAULTS[fault],
        text("The whole answer."),
    )
    session, events = make_session()
    result = await session.send("Explain the login flow")
    assert (result.status, result.text) == ("done", "The whole answer.")
    notes = events.warnings()
    assert len(notes) == 3 and all("Retrying in" in n and "\n" not in n for n in notes), notes
    assert events.numbered_in_order(8)  # the cut took the third try's number (one more after a reset under load)
    assert streamed_after_last_reset(events) == "The whole answer."
    assert stored_texts(session) == ["The whole answer."]  # the partial text was never stored
    bodies = [r["messages"] for r in server.requests]
    assert len(bodies) == 4 and all(b == bodies[0] for b in bodies)  # the same request each time
    server.assert_no_rejections()


@pytest.mark.parametrize("fault", ["clean close", "no stop reason", "garbage line"])
async def test_a_reply_of_text_cut_after_a_completed_block_is_asked_for_again_whole(server, make_session, fault):
    """The draft once stayed in the history, and the model was told to go on from it: a model that wrote its
    answer again left the caller both, the draft and the answer (issue 37)."""
    base = reply("First, the overview of the flow.", "Then a detail that never arrives whole")
    options = {
        "clean close": {"end_after_events": event_index(base, "content_block_stop") + 3},
        "no stop reason": {"omit_stop_reason": True},
        "garbage line": {"garbage_after_events": event_index(base, "content_block_stop") + 3},
    }[fault]
    server.script(base.with_options(**options), text("The overview and the detail, whole."))
    session, events = make_session()
    result = await session.send("Explain")
    assert result.text == "The overview and the detail, whole."
    assert len(events.warnings()) == 1
    assert server.requests[1]["messages"] == server.requests[0]["messages"]  # the same question, no draft
    assert stored_texts(session) == ["The overview and the detail, whole."]
    assert streamed_after_last_reset(events) == "The overview and the detail, whole."
    assert [e.content for e in events.of(AssistantMessage)] == [[{"type": "text", "text": result.text}]]


@pytest.mark.parametrize("torn_json", ['{"command": "echo torn >> torn.txt"', '{"command": echo torn}'])
async def test_torn_tool_input_keeps_the_completed_call_and_never_runs_the_torn_one(
    server, make_session, repo, torn_json
):
    read = tool_use_block("read_file", {"path": "README.md"})
    torn = tool_use_block("bash", {"command": "echo torn >> torn.txt"})
    server.script(reply(read, torn, torn_json=torn_json), text("The README says it is a demo app."))
    session, events = make_session(permission_mode="bypassPermissions")
    result = await session.send("What is in the README?")
    assert result.text == "The README says it is a demo app."
    assert [e.name for e in events.of(ToolCallStarted)] == ["read_file"]
    assert not (repo / "torn.txt").exists()
    [note] = events.warnings()
    assert "not valid JSON" in note or "malformed reply" in note
    assert len(server.requests) == 2  # read_file was not asked for again
    [result_block] = tool_results(server.requests[1])
    assert result_block["tool_use_id"] == read["id"] and "Demo app" in tool_result_text(result_block)
    server.assert_no_rejections()


async def test_a_torn_tool_call_alone_is_asked_for_again(server, make_session):
    server.script(
        tool_use("grep", {"pattern": "login"}, torn_json='{"pattern": "log'), text("Found nothing to worry about.")
    )
    session, events = make_session()
    result = await session.send("q")
    assert result.text == "Found nothing to worry about."
    assert not events.of(ToolCallStarted) and len(server.requests) == 2
    assert server.requests[1]["messages"] == server.requests[0]["messages"]


async def test_a_plain_json_message_answers_a_streaming_request(server, make_session):
    server.script(text("A whole answer in one body.", plain_json=True))
    session, events = make_session()
    result = await session.send("q")
    assert result.text == "A whole answer in one body."
    assert "".join(e.text for e in events.of(TextDelta)) == "A whole answer in one body."  # shown as streamed
    assert not events.warnings() and len(server.requests) == 1 and server.requests[0]["stream"] is True


async def test_a_plain_json_tool_call_is_run(server, make_session):
    server.script(tool_use("read_file", {"path": "README.md"}, plain_json=True), text("Done.", plain_json=True))
    session, events = make_session()
    assert (await session.send("q")).text == "Done."
    assert [e.name for e in events.of(ToolCallStarted)] == ["read_file"]


async def test_server_error_text_is_one_trimmed_line(server, make_session):
    server.script(
        error(502, "api_error", "  Upstream failed.\n\n\n  Details:\n\n   connection reset  \n\n"), text("ok")
    )
    session, events = make_session()
    await session.send("q")
    [note] = events.warnings()
    assert "\n" not in note and "Upstream failed. Details: connection reset." in note


@pytest.mark.parametrize("retry_after", ["-5", "1e12", "nan", "soon"])
async def test_retry_after_is_clamped(server, make_session, retry_after):
    server.script(error(529, "overloaded_error", "Overloaded", headers={"retry-after": retry_after}), text("ok"))
    session, events = make_session()
    assert (await session.send("q")).text == "ok"
    # Only the 529's note counts: a loopback connection reset before any reply (seen under load, while
    # earlier tests' unclosed model clients were being collected) adds a retry note of its own, which
    # is not what this test is about.
    [note] = [n for n in events.warnings() if "(529)" in n]
    assert "Retrying in 0 s" in note  # the test LLM's longest delay is 0.05 s


def test_backoff_stays_between_zero_and_twice_the_longest_delay():
    llm = LLM(retry_max_delay=30.0)
    assert llm.backoff(1, -5.0) == 0.0 and llm.backoff(1, 1e12) == 60.0 and llm.backoff(1, 7.0) == 7.0


async def test_pause_turn_continues_the_turn(server, make_session):
    server.script(text("Searching the web for that.", stop_reason="pause_turn"), text("Here is what I found."))
    session, events = make_session()
    result = await session.send("q")
    assert (result.status, result.text) == ("done", "Here is what I found.")
    resumed = server.requests[1]["messages"]
    assert resumed[-1]["role"] == "assistant" and resumed[-1]["content"][0]["text"] == "Searching the web for that."
    server.assert_no_rejections()


async def test_a_refusal_is_shown_as_one_and_is_not_success(server, make_session):
    server.script(text("I can't help with", stop_reason="refusal"))
    session, events = make_session()
    result = await session.send("q")
    assert (result.status, result.text) == ("refused", REFUSED)
    assert [e.text for e in events.of(Notice) if e.level == "error"] == [REFUSED]
    assert events.of(AssistantMessage)[-1].stop_reason == "refusal"


async def test_context_window_exceeded_compacts_and_goes_on(server, make_session):
    for n in range(4):
        server.script(tool_use("grep", {"pattern": f"def (login|index) # step {n}"}))
    server.script(
        text("A long answer that filled the", stop_reason="model_context_window_exceeded"),
        text("Finished after compaction."),
    )
    server.when(is_summarizer, text("## Summary\nThe user wants the login flow; grep found auth.py."))
    session, events = make_session()
    result = await session.send("Trace the login flow")
    assert result.text == "Finished after compaction."
    [compacted] = events.of(Compacted)
    assert "filled the context window" in compacted.reason
    assert "filled the" not in json.dumps(session.main.messages)  # the cut reply was dropped
    assert streamed_after_last_reset(events) == "Finished after compaction."
    server.assert_no_rejections()


async def test_a_stream_broken_on_every_try_fails_with_one_sentence(server, make_session):
    server.script(*[ONE_BLOCK.with_options(end_after_events=4)] * 3)
    session, events = make_session(api_retries=2)
    with pytest.raises(LLMError, match="ended before the reply was complete"):
        await session.send("q")
    assert len(server.requests) + events.unreached_tries() == 3 and stored_texts(session) == []


def test_passwords_in_urls_are_redacted(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://me:hunter22@proxy.example:4000")
    assert (
        redact("at http://me:hunter22@proxy.example:4000/v1 or 'hunter22'")
        == "at http://me:***@proxy.example:4000/v1 or '***'"
    )
    assert str(LLMError("see https://u:p%40ss@h/x")) == "see https://u:***@h/x"
