"""The agent loop against the stand-in server: tool calls, bad input, cancellation, caching."""

from __future__ import annotations

import asyncio

from agentcli.core.content import agentcli_note
from agentcli.core.engine.loop import STOPPED
from agentcli.core.events import (
    AssistantMessage,
    TextDelta,
    TextReset,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    UsageUpdated,
)
from tests.fakes.anthropic_server import (
    reply,
    sse_events,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)
from tests.waiting import until


async def cancel_when(work, ready, what: str) -> None:
    """Start ``work``, cancel it once ``ready()`` holds, and wait for it to wind down."""
    run = asyncio.create_task(work)
    await until(lambda: ready() or run.done(), what)
    assert not run.done(), f"the work ended before {what}"
    run.cancel()
    try:
        await run
    except asyncio.CancelledError:
        pass


async def test_plain_answer_streams_text_and_counts_usage(server, make_session):
    server.script(
        text(
            "The app logs users in through `login`.",
            usage={"input_tokens": 100, "output_tokens": 12, "cache_read_input_tokens": 50},
        )
    )
    session, events = make_session()
    result = await session.send("How do users log in?")
    assert result.status == "done"
    assert result.text == "The app logs users in through `login`."
    assert "".join(e.text for e in events.of(TextDelta)) == result.text
    usage = events.of(UsageUpdated)[-1].total
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (100, 12, 50)
    assert usage.cost is not None and usage.cost > 0
    assert events.of(TurnFinished)[-1].stop_reason == "end_turn"
    server.assert_no_rejections()


async def test_tool_results_go_back_and_history_stays_valid(server, make_session):
    server.script(tool_use("grep", {"pattern": "handle_auth"}), text("Found it."))
    session, events = make_session()
    await session.send("Where is handle_auth?")
    second = server.requests[1]
    [result] = tool_results(second)
    output = tool_result_text(result)
    assert "src/app/auth.py:9:def handle_auth(user, password):" in output
    assert "build/" not in output  # .gitignore respected
    assert not result.get("is_error")
    started, finished = events.of(ToolCallStarted)[0], events.of(ToolCallFinished)[0]
    assert started.name == "grep" and finished.id == started.id and not finished.is_error
    server.assert_no_rejections()


async def test_cache_breakpoints_on_last_tool_system_and_latest_message(server, make_session):
    server.script(tool_use("glob", {"pattern": "*.py"}), text("Two files."))
    session, _ = make_session()
    await session.send("List python files")
    for body in server.requests:
        assert "cache_control" in body["tools"][-1]
        assert all("cache_control" not in t for t in body["tools"][:-1])
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" in body["messages"][-1]["content"][-1]
    # the stored history itself carries no breakpoints (they move every turn)
    assert all("cache_control" not in b for m in session.main.messages for b in m["content"])


async def test_bad_arguments_and_unknown_tools_become_error_results(server, make_session):
    server.script(
        reply(
            tool_use_block("read_file", {}),
            tool_use_block("grep", {"pattern": 5}),
            tool_use_block("teleport", {"where": "mars"}),
            tool_use_block("read_file", {"path": "x", "bogus": 1}),
        ),
        text("Sorry."),
    )
    session, _ = make_session()
    result = await session.send("Try things")
    assert result.text == "Sorry."
    results = tool_results(server.requests[1])
    assert [r["is_error"] for r in results] == [True, True, True, True]
    texts = [tool_result_text(r) for r in results]
    assert "missing required argument 'path'" in texts[0]
    assert "'pattern' must be a string, not an integer" in texts[1]
    assert "no tool named 'teleport'" in texts[2] and "read_file" in texts[2]
    assert "no argument 'bogus'" in texts[3]
    server.assert_no_rejections()


async def test_writes_and_bash_are_refused_headless_without_the_flag(server, make_session, repo):
    server.script(
        reply(
            tool_use_block("write_file", {"path": "new.txt", "content": "x"}),
            tool_use_block("bash", {"command": "touch ran.txt"}),
        ),
        text("ok"),
    )
    session, _ = make_session()
    await session.send("Write and run")
    write, bash = tool_results(server.requests[1])
    assert write["is_error"] and "--permission-mode acceptEdits" in tool_result_text(write)
    assert bash["is_error"] and "--permission-mode bypassPermissions" in tool_result_text(bash)
    assert not (repo / "new.txt").exists() and not (repo / "ran.txt").exists()


async def test_accept_edits_writes_but_does_not_run_bash(server, make_session, repo):
    server.script(
        reply(
            tool_use_block("write_file", {"path": "new.txt", "content": "x\n"}),
            tool_use_block("bash", {"command": "touch ran.txt"}),
        ),
        text("ok"),
    )
    session, _ = make_session(permission_mode="acceptEdits")
    await session.send("Write and run")
    assert (repo / "new.txt").read_text() == "x\n"
    assert not (repo / "ran.txt").exists()


async def test_read_only_calls_overlap_and_writes_run_in_order(server, make_session, repo):
    calls = [
        tool_use_block("bash", {"command": "echo one >> order.txt"}),
        tool_use_block("bash", {"command": "echo two >> order.txt"}),
        tool_use_block("read_file", {"path": "order.txt"}),
    ]
    server.script(reply(*calls), text("done"))
    session, events = make_session(permission_mode="bypassPermissions")
    await session.send("go")
    assert (repo / "order.txt").read_text() == "one\ntwo\n"
    assert session.main.batches([{"name": "grep"}, {"name": "glob"}, {"name": "bash"}, {"name": "grep"}]) == [
        [{"name": "grep"}, {"name": "glob"}],
        [{"name": "bash"}],
        [{"name": "grep"}],
    ]
    assert "two" in tool_result_text(tool_results(server.requests[1])[2])  # read after both writes


async def test_cancel_mid_tool_keeps_every_tool_use_answered(server, make_session, repo):
    server.script(
        reply(tool_use_block("grep", {"pattern": "login"}), tool_use_block("bash", {"command": "sleep 30"})),
        text("Resumed fine."),
    )
    session, events = make_session(permission_mode="bypassPermissions")
    await cancel_when(
        session.send("Look and wait"), lambda: bool(events.of(ToolCallStarted, name="bash")), "the bash call to start"
    )
    last = session.main.messages[-1]
    assert last["role"] == "user"
    assert [b["type"] for b in last["content"]] == ["tool_result", "tool_result", "text"]
    assert last["content"][1]["is_error"] and "Interrupted" in last["content"][1]["content"]
    assert events.of(TurnFinished)[-1].stop_reason == "cancelled"
    # The next message continues on a history the API accepts, and it says the turn was stopped, as agentcli's.
    result = await session.send("Carry on")
    assert result.text == "Resumed fine."
    server.assert_no_rejections()
    roles = [m["role"] for m in server.requests[-1]["messages"]]
    assert roles == ["user", "assistant", "user"]
    after_tools = server.requests[-1]["messages"][-1]["content"][2:]
    assert [b["text"] for b in after_tools] == [agentcli_note(STOPPED)["text"], "Carry on"]


async def test_cancel_mid_stream_drops_the_partial_message(server, make_session):
    slow = text("This answer is slow to arrive and never finishes")
    names = [name for name, _ in sse_events(slow, {"model": "m", "messages": []})]
    # The first words arrive, then the stream goes silent until the server stops: the cancel lands mid-stream.
    server.script(
        slow.with_options(stall_after_events=names.index("content_block_delta") + 1, stall_seconds=600),
        text("Second try."),
    )
    session, events = make_session()
    await cancel_when(session.send("Say something"), lambda: bool(events.of(TextDelta)), "the first words")
    assert [m["role"] for m in session.main.messages] == ["user"]
    assert not events.of(AssistantMessage)
    assert (await session.send("Again")).text == "Second try."
    first_user = server.requests[-1]["messages"][0]["content"]
    assert [b["text"] for b in first_user] == ["Say something", agentcli_note(STOPPED)["text"], "Again"]
    server.assert_no_rejections()


async def test_turn_cap_stops_the_main_agent(server, make_session):
    server.script(*[tool_use("glob", {"pattern": "*.md"}) for _ in range(3)])
    session, _ = make_session(max_turns=3)
    result = await session.send("loop forever")
    assert result.status == "capped"
    assert len(server.requests) == 3
    assert session.main.messages[-1]["role"] == "user"  # the last call's results are in place


async def test_max_tokens_inside_a_tool_call_is_retried_and_never_run(server, make_session, repo):
    cut = tool_use(
        "write_file", {"path": "cut.txt", "content": "a" * 200}, stop_reason="max_tokens", truncate_json_at=40
    )
    server.script(cut, cut, text("I will split it."))
    session, _ = make_session(permission_mode="acceptEdits")
    result = await session.send("write a big file")
    assert result.text == "I will split it."
    assert not (repo / "cut.txt").exists()
    assert server.requests[1]["max_tokens"] == 2 * server.requests[0]["max_tokens"]
    third = server.requests[2]["messages"]
    assert "output token limit" in third[-1]["content"][-1]["text"]
    server.assert_no_rejections()


async def test_nul_characters_in_arguments_are_refused_not_raised(server, make_session):
    server.script(
        reply(tool_use_block("read_file", {"path": "src/a\x00b.py"}), tool_use_block("bash", {"command": "echo \x00"})),
        text("ok"),
    )
    session, _ = make_session(permission_mode="bypassPermissions")
    assert (await session.send("x")).text == "ok"
    for result in tool_results(server.requests[1]):
        assert result["is_error"] and "NUL character" in tool_result_text(result)


async def test_a_blank_answer_does_not_poison_the_history(server, make_session):
    server.script(text("\n\n"), text("Real answer."))
    session, _ = make_session()
    await session.send("first")
    assert (await session.send("second")).text == "Real answer."
    server.assert_no_rejections()


async def test_the_max_tokens_retry_withdraws_the_streamed_text(server, make_session):
    cut = reply(
        "Let me write the file.",
        tool_use_block("write_file", {"path": "f.txt", "content": "a" * 100}),
        stop_reason="max_tokens",
        truncate_json_at=30,
    )
    server.script(
        cut,
        reply(
            "Let me write the file.",
            tool_use_block("write_file", {"path": "f.txt", "content": "a"}),
            stop_reason="max_tokens",
            truncate_json_at=10,
        ),
        text("done"),
    )
    session, events = make_session(permission_mode="acceptEdits")
    await session.send("go")
    kinds = [type(e).__name__ for e in events.events if type(e).__name__ in ("TextDelta", "TextReset")]
    assert "TextReset" in kinds
    shown = "".join(
        e.text for e in events.events[events.events.index(events.of(TextReset)[-1]) :] if isinstance(e, TextDelta)
    )
    assert shown.count("Let me write the file.") == 1


async def test_a_failed_call_closes_its_turn(server, make_session):
    from tests.fakes.anthropic_server import error

    server.script(error(401, "authentication_error", "bad key"))
    session, events = make_session()
    try:
        await session.send("x")
    except Exception:
        pass
    assert events.of(TurnFinished)[-1].stop_reason == "error"


async def test_model_aliases_become_model_ids(server, make_session, repo):
    from agentcli.config import load_settings

    assert load_settings(repo, {"model": "opus"}).model == "claude-opus-5-5"
    server.script(text("hi"))
    session, _ = make_session()
    session.set_model("haiku")
    await session.send("x")
    assert server.requests[-1]["model"] == "claude-haiku-5-5"
    assert session.llm.model == "claude-haiku-5-5"  # subagents of type 'inherit' follow
