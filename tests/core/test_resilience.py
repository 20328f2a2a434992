"""API faults and a filling context: retries, broken streams, stalls, compaction, huge outputs."""

from __future__ import annotations

import pytest

from agentcli.core.content import readable
from agentcli.core.engine.compaction import SUMMARY_HEADER
from agentcli.core.events import Compacted, Notice, TextDelta, TextReset, ToolCallFinished
from agentcli.core.model.llm import LLMError
from tests.core.test_compaction import is_summarizer
from tests.fakes.anthropic_server import (
    error,
    reply,
    sse_events,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)


async def test_overload_then_server_error_then_cut_stream_then_success(server, make_session):
    server.script(
        error(529, "overloaded_error", "Overloaded"),
        error(500, "api_error", "Internal server error", headers={"retry-after": "0"}),
        text("A partial answer that will be cut off halfway through", cut_after_events=5),
        text("The whole answer."),
    )
    session, events = make_session()
    result = await session.send("question")
    assert result.text == "The whole answer."
    notes = events.warnings()
    assert len(notes) == 3
    assert "overloaded" in notes[0] and "broke off" in notes[2]
    assert events.numbered_in_order(8)  # one budget of tries (a loopback reset under load takes a number too)
    assert events.of(TextReset)  # the partial text was withdrawn before the retry
    after_reset = events.events[events.events.index(events.of(TextReset)[0]) :]
    assert "".join(e.text for e in after_reset if isinstance(e, TextDelta)) == "The whole answer."
    assert [m["role"] for m in session.main.messages] == ["user", "assistant"]


async def test_stream_cut_after_a_complete_tool_call_runs_it_once(server, make_session, repo):
    call = reply(tool_use_block("bash", {"command": "echo ran >> runs.txt"}), "and then more text")
    names = [name for name, _ in sse_events(call, {"model": "m", "messages": []})]
    call = call.with_options(cut_after_events=names.index("content_block_stop") + 3)  # cut inside the text
    server.script(call, text("Done."))
    session, events = make_session(permission_mode="bypassPermissions")
    result = await session.send("run it")
    assert result.text == "Done."
    assert (repo / "runs.txt").read_text() == "ran\n"
    assert len(server.requests) == 2  # kept the completed block; did not ask again
    assert len(events.of(ToolCallFinished)) == 1
    server.assert_no_rejections()


async def test_a_stalled_stream_is_retried(server, make_session):
    server.script(text("stalling answer here", stall_after_events=3, stall_seconds=600))  # silent until the end
    server.responder = lambda body: text("Fresh answer.")  # a retry that a busy machine slows past 1 s is retried too
    session, events = make_session(stall_timeout=1)
    result = await session.send("q")
    assert result.text == "Fresh answer."
    assert any("stalled" in n for n in events.warnings())


async def test_authentication_errors_are_not_retried(server, make_session):
    server.script(error(401, "authentication_error", "invalid x-api-key"))
    session, events = make_session()
    with pytest.raises(LLMError, match="API key was rejected"):
        await session.send("q")
    assert len(server.requests) == 1 and not events.warnings()


async def test_retries_stop_after_the_configured_count(server, make_session):
    server.script(*[error(529, "overloaded_error", "Overloaded") for _ in range(3)])
    session, events = make_session(api_retries=2)
    with pytest.raises(LLMError, match="overloaded"):
        await session.send("q")
    assert len(server.requests) + events.unreached_tries() == 3


def long_conversation(server, turns):
    """Scripts `turns` grep round trips and a final answer for the main agent."""
    for n in range(turns):
        server.script(tool_use("grep", {"pattern": f"def (login|index) # step {n}"}))


async def test_prompt_too_long_compacts_and_the_task_finishes(server, make_session):
    long_conversation(server, 4)
    server.script(
        error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        text("Finished after compaction."),
    )
    server.when(is_summarizer, text("## Summary\nThe user wants the login flow; grep found auth.py."))
    session, events = make_session()
    result = await session.send("Trace the login flow")
    assert result.text == "Finished after compaction."
    [compacted] = events.of(Compacted)
    assert compacted.messages_summarized >= 2
    final = server.requests[-1]["messages"]
    first_texts = [b["text"] for b in final[0]["content"]]
    assert first_texts[0] == "Trace the login flow" and readable(first_texts[1]).startswith(SUMMARY_HEADER)
    assert "grep found auth.py" in first_texts[1]
    assert len(final) < 2 * 4 + 1  # older turns are gone
    assert final[1]["role"] == "assistant"
    summarizer = [b for b in server.requests if is_summarizer(b)][0]
    assert "tools" not in summarizer and "TOOL CALL grep" in summarizer["messages"][0]["content"][0]["text"]
    server.assert_no_rejections()


async def test_nearly_full_context_compacts_before_the_next_call(server, make_session):
    long_conversation(server, 3)
    server.script(tool_use("glob", {"pattern": "*.md"}, usage={"input_tokens": 180_000}), text("ok"))
    server.when(is_summarizer, text("Summary of the work."))
    session, events = make_session()
    await session.send("work")
    assert len(events.of(Compacted)) == 1
    server.assert_no_rejections()


async def test_compaction_thrash_stops_with_a_clear_message(server, make_session):
    huge = {"input_tokens": 195_000}
    long_conversation(server, 3)
    server.responder = lambda body: (
        text("Summary.") if is_summarizer(body) else tool_use("glob", {"pattern": "*"}, usage=huge)
    )
    session, events = make_session()
    with pytest.raises(LLMError, match="3 compactions in a row"):
        await session.send("work")
    assert len(events.of(Compacted)) == 3
    server.assert_no_rejections()


async def test_compact_on_demand_with_a_focus(server, make_session):
    long_conversation(server, 3)
    server.script(text("answer"))
    server.when(is_summarizer, text("Focused summary."))
    session, events = make_session()
    await session.send("work")
    assert await session.compact("the auth module")
    summarizer = [b for b in server.requests if is_summarizer(b)][0]
    assert "Focus on: the auth module" in summarizer["messages"][-1]["content"][-1]["text"]
    assert readable(session.main.messages[0]["content"][-1]["text"]).endswith("Focused summary.")


async def test_five_megabyte_output_is_cut_and_kept_in_full(server, make_session, isolated_home):
    server.script(tool_use("bash", {"command": "head -c 5000000 /dev/zero | tr '\\\\0' a"}), text("big"))
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("make noise")
    [result] = tool_results(server.requests[1])
    output = tool_result_text(result)
    assert len(output) < 40_000 and "cut" in output
    saved = [p for p in isolated_home.rglob("*.txt") if p.stat().st_size >= 5_000_000]
    assert saved and str(saved[0].name) in output


async def test_compaction_says_why_once(server, make_session):
    long_conversation(server, 3)
    server.script(text("answer"))
    server.when(is_summarizer, text("Summary."))
    session, events = make_session()
    await session.send("work")
    await session.compact()
    [compacted] = events.of(Compacted)
    assert compacted.reason == "asked for" and compacted.tokens_after > 0
    assert not [e for e in events.of(Notice) if "ompact" in e.text]  # the event is the one report
