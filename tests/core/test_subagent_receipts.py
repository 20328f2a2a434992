"""A subagent's report: the receipt agentcli builds from the child's tool calls, the "unverified" mark, and
the re-ask for an empty or pointer-only answer; against the stand-in server with a scripted model."""

from __future__ import annotations

import json

from agentcli.core.content import NOTE_OPEN
from agentcli.core.events import ALLOW_ONCE, DENY, ApprovalRequested, SubagentFinished, SubagentReport, event_from_dict
from agentcli.core.subagent_report import RECEIPT_CAP
from tests.fakes.anthropic_server import (
    offers_tool,
    reply,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)
from tests.narrow import of


def is_child(body):
    return not offers_tool(body, "task")


def is_main(body):
    return offers_tool(body, "task")


def delegate(prompt="Find where login is handled; report path:line.", **extra):
    return tool_use("task", {"description": "Find login", "prompt": prompt, **extra})


def task_result(server) -> str:
    """The task tool result the main agent's second request carried."""
    [block] = tool_results([b for b in server.requests if is_main(b)][1])
    return tool_result_text(block)


def receipt_of(result: str) -> str:
    """The agentcli note holding the receipt, inside a task result."""
    start = result.index(NOTE_OPEN + "Receipt for")
    return result[start : result.index("</system-reminder>", start)]


async def test_the_receipt_lists_what_the_child_did_not_what_it_said(server, make_session, repo):
    server.when(is_main, delegate(), text("Done."))
    server.when(
        is_child,
        tool_use("grep", {"pattern": "def login"}),
        tool_use("read_file", {"path": "src/app/auth.py", "limit": 5}),
        tool_use("bash", {"command": "false"}),
        text("login is at src/app/auth.py:4; `false` exits 1."),
    )
    session, events = make_session(permission_mode="bypassPermissions")
    await session.send("delegate")
    result = task_result(server)
    assert result.startswith("login is at src/app/auth.py:4;")
    receipt = receipt_of(result)
    assert "Read: src/app/auth.py (1-5)" in receipt
    assert "Ran: `false` → exit code 1" in receipt
    assert 'grep ×1 ("def login")' in receipt  # what it searched for, not only how often
    assert "UNVERIFIED" not in receipt
    assert result.splitlines()[-1].startswith("[sa-1 · done · 4 turns · ")
    [finished] = events.of(SubagentFinished)
    assert finished.report is not None and finished.report.mark == ""
    # Written to the session file and read back, it is the same value.
    assert of(SubagentFinished, event_from_dict(json.loads(json.dumps(finished.to_dict())))).report == finished.report


async def test_an_answer_citing_a_file_the_child_never_touched_is_unverified(server, make_session, repo):
    server.when(is_main, delegate(), text("Done."))
    server.when(
        is_child,
        tool_use("read_file", {"path": "src/app/views.py"}),
        text("Login is handled in src/app/session_manager.py:12, called from src/app/views.py:1."),
    )
    session, events = make_session()
    await session.send("delegate")
    receipt = receipt_of(task_result(server))
    assert "UNVERIFIED: its answer cites src/app/session_manager.py, which none of its tool calls touched." in receipt
    assert "views.py," not in receipt.split("UNVERIFIED")[1].split("\n")[0]  # the file it did read is not blamed
    [finished] = events.of(SubagentFinished)
    assert finished.report.mark == "unverified"
    # The panel, line mode and the transcript read the mark from the same report.
    assert session.subagents.records["sa-1"].report is finished.report


async def test_an_answer_with_no_tool_call_is_unverified(server, make_session):
    server.when(is_main, delegate(), text("Done."))
    server.when(is_child, text("Login is in auth.py, as usual in such apps."))
    session, events = make_session()
    await session.send("delegate")
    receipt = receipt_of(task_result(server))
    assert "UNVERIFIED: it made no tool call" in receipt and "Tool calls: none." in receipt
    assert "Check the unverified part yourself before you rely on it." in receipt  # where it applies, not the prompt


async def test_an_empty_answer_is_asked_for_again_in_the_childs_own_conversation(server, make_session, repo):
    server.when(is_main, delegate(), text("Done."))
    server.when(
        lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"},
        text("login is defined at src/app/auth.py:4."),
    )
    server.when(is_child, tool_use("read_file", {"path": "src/app/auth.py"}), text(""))
    session, events = make_session()
    await session.send("delegate")
    children = [b for b in server.requests if is_child(b)]
    asked = children[-1]
    assert asked["tool_choice"] == {"type": "none"}
    # The same conversation: the brief, its read, its empty answer kept, then the question.
    assert asked["messages"][0]["content"][0]["text"].startswith("Find where login is handled")
    assert json.dumps(asked["messages"][-2]).count("no answer") == 1
    assert "gave the agent that sent you nothing it can use" in json.dumps(asked["messages"][-1])
    result = task_result(server)
    assert result.startswith("login is defined at src/app/auth.py:4.")
    assert "Answer: re-asked: its first answer was empty" in receipt_of(result)
    assert "UNVERIFIED" not in receipt_of(result)


async def test_a_pointer_answer_is_asked_for_again_then_the_best_text_is_marked(server, make_session, repo):
    server.when(is_main, delegate(), text("Done."))
    server.when(
        lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"}, text("See above.")
    )  # asked again, it points again
    server.when(
        is_child,
        reply(
            "Looking at src/app/auth.py now; login is at line 4.",
            tool_use_block("read_file", {"path": "src/app/auth.py"}),
            stop_reason="tool_use",
        ),
        text("The report was delivered above."),
    )
    session, events = make_session()
    await session.send("delegate")
    assert len([b for b in server.requests if is_child(b) and b.get("tool_choice") == {"type": "none"}]) == 1
    result = task_result(server)
    assert result.startswith("Looking at src/app/auth.py now; login is at line 4.")  # the best text it wrote
    assert "The report was delivered above." not in result
    assert "Answer: no answer: asked twice, it gave none" in receipt_of(result)
    [finished] = events.of(SubagentFinished)
    assert finished.report.mark == "no answer"


async def test_a_long_receipt_is_capped_and_says_what_it_left_out(server, make_session, repo):
    for n in range(40):
        (repo / "src" / "app" / f"module_with_a_long_name_{n:02d}.py").write_text(f"X = {n}\n")
    reads = [
        reply(
            *(
                tool_use_block("read_file", {"path": f"src/app/module_with_a_long_name_{n:02d}.py"})
                for n in range(at, at + 4)
            ),
            stop_reason="tool_use",
        )
        for at in range(0, 40, 4)
    ]
    server.when(is_main, delegate(), text("Done."))
    server.when(is_child, *reads, text("X is set in each module; see src/app/module_with_a_long_name_00.py:1."))
    session, events = make_session()
    await session.send("delegate")
    receipt = receipt_of(task_result(server))
    assert len(receipt) <= RECEIPT_CAP + len(NOTE_OPEN)
    assert "more in its transcript." in receipt
    [finished] = events.of(SubagentFinished)
    assert len(finished.report.reads) == 40  # the whole record stays in the transcript


def test_a_damaged_stored_report_is_none():
    assert SubagentReport.from_dict({"id": "sa-1"}) is None
    assert SubagentReport.from_dict("x") is None


async def test_a_structured_brief_becomes_sections_and_the_receipt_says_which_named_files_were_read(
    server, make_session, repo
):
    server.when(
        is_main,
        delegate(
            "Find where login is handled.",
            known="It is not in build/.",
            files=["src/app/auth.py", "src/app/views.py"],
            constraints="Do not edit.",
            deliverable="path:line of login.",
        ),
        text("Done."),
    )
    server.when(is_child, tool_use("read_file", {"path": "src/app/auth.py"}), text("login: src/app/auth.py:4."))
    session, events = make_session()
    await session.send("delegate")
    first = [b for b in server.requests if is_child(b)][0]["messages"][0]["content"][0]["text"]
    assert first == (
        "Find where login is handled.\n\n# What is already known\nIt is not in build/.\n\n"
        "# Files to start from\n- src/app/auth.py\n- src/app/views.py\n\n# Constraints\nDo not edit.\n\n"
        "# What to deliver\npath:line of login."
    )
    receipt = receipt_of(task_result(server))
    assert "Brief's files: src/app/auth.py (read), src/app/views.py (NOT read)" in receipt


async def test_a_named_file_the_child_only_searched_is_said_to_be_searched(server, make_session, repo):
    server.when(is_main, delegate("Find login.", files=["src/app/auth.py", "src/app/views.py"]), text("Done."))
    server.when(is_child, tool_use("grep", {"pattern": "login", "path": "src/app/views.py"}), text("Not there."))
    session, events = make_session()
    await session.send("delegate")
    receipt = receipt_of(task_result(server))
    assert "Brief's files: src/app/auth.py (NOT read), src/app/views.py (searched, NOT read)" in receipt
    [finished] = events.of(SubagentFinished)
    assert SubagentReport.from_dict(finished.report.to_dict()) == finished.report  # kept as it was


async def test_a_brief_part_of_the_wrong_shape_gets_one_sentence(server, make_session):
    server.when(is_main, delegate(files="src/app/auth.py"), text("Sorry."))
    session, events = make_session()
    await session.send("delegate")
    [block] = tool_results([b for b in server.requests if is_main(b)][1])
    assert block.get("is_error") and tool_result_text(block) == "task: 'files' must be an array, not a string."
    assert not [b for b in server.requests if is_child(b)]


async def test_an_answer_claiming_a_command_it_never_ran_is_unverified(server, make_session, repo):
    server.when(is_main, delegate(), text("Done."))
    server.when(
        is_child,
        tool_use("read_file", {"path": "src/app/auth.py"}),
        text(
            "I ran `pytest -q` and every test passes; login is at src/app/auth.py:4. "
            "Run `make lint` to check the style."
        ),
    )
    session, events = make_session()
    await session.send("delegate")
    receipt = receipt_of(task_result(server))
    assert "UNVERIFIED: its answer says it ran `pytest -q`, which it did not." in receipt
    assert "make lint" not in receipt  # advice to run a command is no claim that it ran


async def test_a_path_the_brief_gave_the_child_is_not_unverified(server, make_session, repo):
    """The parent told it where the session code lives (its known part): citing that is no fabrication."""
    server.when(
        is_main, delegate("Find login.", known="Sessions are made in src/app/session_manager.py."), text("Done.")
    )
    server.when(
        is_child,
        tool_use("read_file", {"path": "src/app/auth.py"}),
        text(
            "login is at src/app/auth.py:4; it calls src/app/session_manager.py, as the brief said. "
            "It also touches src/app/tokens.py."
        ),
    )
    session, events = make_session()
    await session.send("delegate")
    receipt = receipt_of(task_result(server))
    assert "UNVERIFIED: its answer cites src/app/tokens.py, which none of its tool calls touched." in receipt
    assert "session_manager" not in receipt  # from the brief: the parent knows where it came from


async def test_a_call_denied_inside_a_child_says_no_user_will_answer_and_its_receipt_says_denied(
    server, make_session, repo
):
    server.when(is_main, delegate(), text("Done."))
    server.when(
        is_child,
        tool_use("bash", {"command": "rm -r build"}),
        tool_use("bash", {"command": "false"}),
        text("Could not clean build/: the user said no."),
    )
    session, events = make_session(interactive=True)
    answers = iter([DENY, ALLOW_ONCE])

    def sink(event):
        events(event)
        if isinstance(event, ApprovalRequested):
            assert event.future is not None
            event.future.set_result(next(answers))

    session.sink = sink
    await session.send("delegate")
    [denied] = tool_results([b for b in server.requests if is_child(b)][1])
    said = tool_result_text(denied)
    assert said == (
        "The user denied this bash call. Do not retry it; take another approach, or finish and say in "
        "your answer what you needed it for."
    )  # its prompt says nobody answers its questions
    receipt = receipt_of(task_result(server))
    assert "Denied: `rm -r build`" in receipt and "rm -r build` →" not in receipt  # it never ran
    assert "Ran: `false` → exit code 1" in receipt  # a command that ran and failed is still one that ran


async def test_the_receipt_names_a_few_patterns_of_each_search_tool_each_cut_short(server, make_session, repo):
    server.when(is_main, delegate(), text("Done."))
    server.when(
        is_child,
        *[tool_use("grep", {"pattern": p}) for p in ("def login", "def login", "x" * 60, "auth\\(user", "session")],
        tool_use("glob", {"pattern": "src/**/*.py"}),
        text("login: src/app/auth.py:4."),
    )
    session, events = make_session()
    await session.send("delegate")
    receipt = receipt_of(task_result(server))
    assert f'grep ×5 ("def login", "{"x" * 39}…", "auth\\(user", +1 more); glob ×1 ("src/**/*.py")' in receipt
    [finished] = events.of(SubagentFinished)
    assert SubagentReport.from_dict(json.loads(json.dumps(finished.report.to_dict()))) == finished.report
