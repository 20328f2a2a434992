"""The task tool: fresh context, budgets, no recursion, parallel children, cancellation."""

from __future__ import annotations

import asyncio
import json
import threading

from agentcli.core.events import SubagentFinished, SubagentStarted, ToolCallStarted
from tests.fakes.anthropic_server import (
    first_user_text,
    offers_tool,
    reply,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)
from tests.waiting import until, within


def is_child(body):
    return not offers_tool(body, "task")


def is_main(body):
    return offers_tool(body, "task")


def delegate(description, prompt, **extra):
    return tool_use("task", {"description": description, "prompt": prompt, **extra})


async def test_delegated_search_keeps_the_file_out_of_the_parent(server, make_session, repo):
    big = "".join(f"SECRET_PAYLOAD_{i:05d} = {i}\n" for i in range(4000))
    (repo / "src" / "app" / "big.py").write_text(big + "def handle_payment():\n    pass\n")
    server.when(
        is_main,
        delegate("Find payment handler", "Find where handle_payment is defined. Report path:line."),
        text("It is in src/app/big.py."),
    )
    server.when(
        is_child,
        tool_use("grep", {"pattern": "def handle_payment"}),
        tool_use("read_file", {"path": "src/app/big.py"}),
        text("handle_payment is defined at src/app/big.py:4001."),
    )
    session, events = make_session()
    result = await session.send("Use a subagent to find where payments are handled")
    assert result.text == "It is in src/app/big.py."
    child_requests = [b for b in server.requests if is_child(b)]
    parent_requests = [b for b in server.requests if is_main(b)]
    assert len(child_requests) == 3 and len(parent_requests) == 2
    # The child read the big file; not one line of it reached any parent request.
    assert "SECRET_PAYLOAD_00042" in json.dumps(child_requests[-1])
    assert all("SECRET_PAYLOAD" not in json.dumps(b) for b in parent_requests)
    # The child started fresh: its history began with exactly the brief.
    assert child_requests[0]["messages"] == [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "Find where handle_payment is defined. Report path:line.",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        }
    ]
    assert "task" not in [t["name"] for t in child_requests[0]["tools"]]
    # The parent got the child's answer and one footer line.
    [task_result] = tool_results(parent_requests[1])
    answer = tool_result_text(task_result)
    assert answer.startswith("handle_payment is defined at src/app/big.py:4001.")
    assert answer.splitlines()[-1].startswith("[sa-1 · done · 3 turns · ")
    assert answer.splitlines()[-1].endswith(" s]")
    # Child events are tagged with its id and the parent's tool_use id.
    [started] = events.of(SubagentStarted)
    task_call = events.of(ToolCallStarted, name="task")[0]
    assert started.id == "sa-1" and started.parent_tool_use_id == task_call.id
    child_tools = events.of(ToolCallStarted, agent_id="sa-1")
    assert [e.name for e in child_tools] == ["grep", "read_file"]
    assert all(e.parent_tool_use_id == task_call.id for e in child_tools)
    # Usage is counted per child and rolled up.
    record = session.subagents.records["sa-1"]
    assert record.status == "done" and record.turns == 3
    assert session.usage.total_tokens == session.main.usage.total_tokens + record.usage.total_tokens
    assert record.tool_output_chars > 20_000  # read_file shows up to ~29k characters per call
    server.assert_no_rejections()


async def test_child_that_never_stops_is_cut_at_30_and_still_summarizes(server, make_session):
    server.when(is_main, delegate("Endless search", "Look everywhere for the config loader."), text("ok"))
    server.when(
        lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"},
        text("Summary: searched 30 times, the loader is not in src/."),
    )
    server.responder = lambda body: tool_use("glob", {"pattern": "**/*.py"})  # the child never stops
    session, events = make_session()
    await session.send("Delegate an endless search")
    child = [b for b in server.requests if is_child(b)]
    assert len(child) == 31  # 30 turns, then one tool-less summary call
    assert child[-1]["tool_choice"] == {"type": "none"}
    assert "turns (30)" in first_user_text(child[-1]) or "turns (30)" in json.dumps(child[-1]["messages"][-1])
    [finished] = events.of(SubagentFinished)
    assert finished.status == "capped" and finished.turns == 30 and finished.summarized  # the summary is no turn
    answer = tool_result_text(tool_results([b for b in server.requests if is_main(b)][-1])[0])
    assert answer.startswith("Summary: searched 30 times")
    assert "[sa-1 · capped · 30 turns + summary" in answer
    server.assert_no_rejections()


async def test_subagent_max_turns_setting_is_honoured(server, make_session):
    server.when(is_main, delegate("Short leash", "Search briefly."), text("ok"))
    server.when(lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"}, text("Partial."))
    server.responder = lambda body: tool_use("glob", {"pattern": "*"})
    session, _ = make_session(subagent_max_turns=4)
    await session.send("go")
    assert len([b for b in server.requests if is_child(b)]) == 5


async def test_child_calling_task_is_refused_and_no_grandchild_runs(server, make_session):
    server.when(is_main, delegate("Nested work", "Do the thing."), text("ok"))
    server.when(
        is_child,
        tool_use("task", {"description": "grandchild", "prompt": "GRANDCHILD BRIEF"}),
        text("I did it myself."),
    )
    session, events = make_session()
    await session.send("go")
    child = [b for b in server.requests if is_child(b)]
    assert len(child) == 2
    [refusal] = tool_results(child[1])
    assert refusal["is_error"] and "Subagents cannot start subagents" in tool_result_text(refusal)
    assert all("GRANDCHILD BRIEF" != first_user_text(b) for b in server.requests)
    assert [e.id for e in events.of(SubagentStarted)] == ["sa-1"]


async def test_child_is_offered_no_main_only_tool_and_running_one_is_refused(server, make_session):
    server.when(is_main, delegate("Nested work", "Do the thing."), text("ok"))
    server.when(is_child, tool_use("message_subagent", {"subagent_id": "sa-1", "message": "hi"}), text("Done alone."))
    session, _ = make_session()
    await session.send("go")
    main, child = ([b for b in server.requests if is_main(b)], [b for b in server.requests if is_child(b)])
    main_only = {"task", "message_subagent"}
    assert main_only <= {t["name"] for t in main[0]["tools"]}
    assert not main_only & {t["name"] for t in child[0]["tools"]}
    [refusal] = tool_results(child[1])
    assert refusal["is_error"] and "main agent's tool alone" in tool_result_text(refusal)


async def test_three_tasks_in_one_message_run_at_the_same_time(server, make_session):
    barrier = threading.Barrier(3)  # each child's first call waits until all three have arrived
    server.when(
        is_main,
        reply(
            *[tool_use_block("task", {"description": f"Errand {n}", "prompt": f"Errand number {n}"}) for n in (1, 2, 3)]
        ),
        text("All three reported."),
    )
    for n in (1, 2, 3):
        server.when(
            lambda b, n=n: is_child(b) and first_user_text(b) == f"Errand number {n}",
            text(f"Result {n}", gate=barrier, gate_timeout=120),
        )
    session, events = make_session()
    result = await session.send("Do three errands")
    assert result.text == "All three reported."
    child_indexes = [i for i, b in enumerate(server.requests) if is_child(b)]
    assert server.overlapped(*child_indexes)
    answers = [tool_result_text(r) for r in tool_results(server.requests[-1])]
    assert [a.splitlines()[0] for a in answers] == ["Result 1", "Result 2", "Result 3"]
    assert sorted(e.id for e in events.of(SubagentFinished)) == ["sa-1", "sa-2", "sa-3"]


async def test_parallel_limit_makes_the_fourth_child_wait(server, make_session):
    gate = threading.Event()
    server.when(
        is_main,
        reply(*[tool_use_block("task", {"description": f"E{n}", "prompt": f"Errand {n}"}) for n in range(4)]),
        text("done"),
    )
    server.responder = lambda body: text("child done", gate=gate, gate_timeout=120)
    session, events = make_session(max_parallel_subagents=3)
    run = asyncio.create_task(session.send("go"))
    await until(
        lambda: len(events.of(SubagentStarted)) == 4 and len(server.requests) == 4,
        "all four children to start and three of them to call the model",
    )
    # A child past SubagentStarted either holds a slot (running) or waits for one (queued): no await between.
    statuses = sorted(r.status for r in session.subagents.records.values())
    assert statuses == ["queued", "running", "running", "running"]  # the fourth waits for a free slot
    gate.set()
    await within(run, "the parent's answer")
    assert len([b for b in server.requests if is_child(b)]) == 4


async def test_cancelling_one_child_gives_the_parent_its_partial_summary(server, make_session):
    hold = threading.Event()
    server.when(
        is_main,
        reply(
            tool_use_block("task", {"description": "Slow one", "prompt": "Slow errand"}),
            tool_use_block("task", {"description": "Quick one", "prompt": "Quick errand"}),
        ),
        text("Reported."),
    )
    server.when(
        lambda b: first_user_text(b) == "Slow errand" and b.get("tool_choice") == {"type": "none"},
        text("Partial: looked in src/ only."),
    )
    server.when(
        lambda b: first_user_text(b) == "Slow errand",
        tool_use("grep", {"pattern": "x"}),
        text("never sent", gate=hold, gate_timeout=120),
    )
    server.when(lambda b: first_user_text(b) == "Quick errand", text("Quick result."))
    session, events = make_session()
    run = asyncio.create_task(session.send("two errands"))
    await until(
        lambda: (
            events.of(SubagentFinished, id="sa-2")
            and len([b for b in server.requests if first_user_text(b) == "Slow errand"]) == 2
        ),
        "the quick child to finish and the slow one to wait on its second call",
    )
    assert session.subagents.cancel("sa-1")
    await within(run, "the parent's answer")
    hold.set()
    slow, quick = [tool_result_text(r) for r in tool_results(server.requests[-1])]
    assert slow.startswith("Partial: looked in src/ only.") and "[sa-1 · cancelled" in slow
    assert quick.startswith("Quick result.") and "[sa-2 · done" in quick
    server.assert_no_rejections()


async def test_cancelling_the_parent_cancels_children_with_valid_transcripts(server, make_session):
    hold = threading.Event()
    server.when(is_main, delegate("Stuck", "Wait forever"), text("after"))
    server.when(is_child, tool_use("grep", {"pattern": "login"}), text("never", gate=hold, gate_timeout=120))
    session, events = make_session()
    run = asyncio.create_task(session.send("go"))
    await until(
        lambda: events.of(ToolCallStarted, agent_id="sa-1") and len(server.requests) >= 3,
        "the child to call grep and then the model again",
    )
    run.cancel()
    try:
        await run
    except asyncio.CancelledError:
        pass
    hold.set()
    [finished] = events.of(SubagentFinished)
    assert finished.status == "cancelled"
    assert session.subagents.records["sa-1"].status == "cancelled"
    main_last = session.main.messages[-1]
    assert main_last["content"][0]["type"] == "tool_result" and main_last["content"][0]["is_error"]
    assert (await session.send("and now?")).text == "after"
    server.assert_no_rejections()


async def test_cancelling_a_child_during_its_final_summary_still_answers_the_parent(server, make_session):
    hold, summary_hold = threading.Event(), threading.Event()
    server.when(is_main, delegate("Slow search", "Search slowly."), text("Parent carries on."))
    server.when(
        lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"},
        text("never sent", gate=summary_hold, gate_timeout=120),
    )
    server.when(is_child, tool_use("grep", {"pattern": "login"}), text("never", gate=hold, gate_timeout=120))
    session, events = make_session(subagent_timeout=0.5)
    run = asyncio.create_task(session.send("go"))
    await until(
        lambda: any(b.get("tool_choice") == {"type": "none"} for b in server.requests),
        "the child to time out and ask for its summary",
    )
    assert session.subagents.cancel("sa-1")
    assert not session.subagents.cancel("sa-1")  # a second press does nothing
    result = await within(run, "the parent's answer")
    hold.set()
    summary_hold.set()
    assert result.text == "Parent carries on."
    record = session.subagents.records["sa-1"]
    assert record.status == "cancelled" and "The user cancelled" in record.result
    assert [e.status for e in events.of(SubagentFinished)] == ["cancelled"]
    server.assert_no_rejections()


async def test_a_child_that_cannot_start_fails_cleanly(server, make_session):
    server.when(is_main, delegate("Broken type", "Anything."), text("Noted."))
    session, events = make_session(subagent_timeout="soon")  # bypasses config validation: no timeout takes it
    result = await session.send("go")
    assert result.text == "Noted."
    [finished] = events.of(SubagentFinished)
    assert finished.status == "failed" and "could not run" in finished.result
    [failure] = tool_results(server.requests[-1])
    assert failure["is_error"] and "could not run" in tool_result_text(failure)
