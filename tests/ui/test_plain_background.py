"""Line mode with background and resumed subagents, through prompt-toolkit's pipe input and the stand-in server."""

from __future__ import annotations

import io
import threading

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from agentcli.config import Settings
from agentcli.core.assembly import assemble
from agentcli.core.events import SubagentFinished
from agentcli.core.system.workspace import Workspace
from agentcli.ui.plain import PlainApp
from tests.fakes.anthropic_server import first_user_text, last_user_text, message_text, offers_tool, text, tool_use
from tests.ui.test_plain import Harness, plain  # noqa: F401  (the fixture)
from tests.waiting import within


def is_main(body):
    return offers_tool(body, "task")


def is_child(body):
    return not offers_tool(body, "task")


def background(description, prompt):
    return tool_use("task", {"description": description, "prompt": prompt, "run_in_background": True})


def main_requests(server):
    return [b for b in server.requests if is_main(b)]


async def test_a_result_arriving_at_the_prompt_starts_a_turn_and_keeps_the_draft(plain, server):
    release = threading.Event()
    server.when(
        is_main,
        background("Find auth", "Find where auth is handled."),
        text("Started it."),
        text("The child says auth is in auth.py."),
        text("Got your draft."),
    )
    server.when(is_child, text("Auth is in src/app/auth.py.", gate=release, gate_timeout=120))
    ui = plain()
    shown = await ui.submit("look for auth in the background")
    assert "sa-1 ▸ Find auth · general-purpose · background" in shown and "Started it." in shown
    ui.pipe.send_text("half a thou")  # the user is typing when the result comes
    await ui.until(lambda: ui.app.prompt.app.current_buffer.text == "half a thou", "the draft in the input")
    release.set()
    await ui.until(lambda: "The child says auth is in auth.py." in ui.text, "the turn on the result")
    assert (
        ui.text.index("sa-1 ✓ done")
        < ui.text.index("↳ sa-1 ✓ done · its result reached the main agent")
        < ui.text.index("The child says auth is in auth.py.")
    )
    assert "Auth is in src/app/auth.py." in last_user_text(main_requests(server)[2])
    await ui.until(
        lambda: ui.app.at_prompt and ui.app.prompt.app.current_buffer.text == "half a thou",
        "the draft back in the input",
    )
    ui.pipe.send_text("ght\r")
    await ui.until(lambda: "Got your draft." in ui.text, "the draft to be sent")
    assert last_user_text(main_requests(server)[-1]) == "half a thought"
    assert await ui.quit() == 0
    server.assert_no_rejections()


async def test_a_result_arriving_during_a_turn_joins_it(plain, server):
    child_done = threading.Event()
    server.when(
        is_main,
        background("Find auth", "Find where auth is handled."),
        tool_use("read_file", {"path": "README.md"}, gate=child_done, gate_timeout=120),
        text("README read, and auth is in auth.py."),
    )
    server.when(is_child, text("Auth is in src/app/auth.py."))
    ui = plain()
    ui.app.session.subscribe(lambda e: child_done.set() if isinstance(e, SubagentFinished) else None)
    shown = await ui.submit("auth in the background, the README meanwhile")
    assert shown.index("↳ sa-1 ✓ done") < shown.index("README read, and auth is in auth.py.")
    last = main_requests(server)[-1]["messages"][-1]
    assert last["content"][0]["type"] == "tool_result" and "Auth is in src/app/auth.py." in message_text(last)
    assert len(main_requests(server)) == 3  # no extra turn afterwards
    assert await ui.quit() == 0
    server.assert_no_rejections()


async def test_stop_cancels_a_background_child_which_still_reports(plain, server):
    hold = threading.Event()
    server.when(is_main, background("Endless", "Search forever."), text("Started."), text("It was stopped."))
    server.when(lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"}, text("Looked at two globs."))
    server.when(is_child, tool_use("glob", {"pattern": "*"}), text("never", gate=hold, gate_timeout=120))
    ui = plain()
    await ui.submit("search forever in the background")
    await ui.until(lambda: len([b for b in server.requests if is_child(b)]) == 2, "the child's second call")
    shown = await ui.submit("/stop")
    assert "Cancelling sa-1; each sends the main agent a summary of what it found." in shown
    await ui.until(lambda: "It was stopped." in ui.text, "the turn on the cancelled child's summary")
    hold.set()
    assert "sa-1 ■ cancelled" in ui.text
    assert "Looked at two globs." in last_user_text(main_requests(server)[-1])
    assert await ui.quit() == 0


async def test_quitting_with_a_child_running_asks_and_keeps_it_interrupted(plain, server):
    hold = threading.Event()
    server.when(is_main, background("Endless", "Search forever."), text("Started."))
    server.when(is_child, text("never", gate=hold, gate_timeout=120))
    ui = plain()
    await ui.submit("search forever in the background")
    await ui.until(lambda: any(is_child(b) for b in server.requests), "the child's call")
    ui.pipe.send_text("\x04")
    await ui.until(
        lambda: "sa-1 is still running. Quit anyway? Its transcript is kept as interrupted." in ui.text, "the question"
    )
    await ui.until(lambda: ui.app.at_prompt, "the question's prompt")
    ui.pipe.send_text("n\r")
    await ui.until(lambda: ui.app.prompts >= 2 and ui.app.at_prompt and not ui.task.done(), "the prompt again")
    ui.pipe.send_text("/exit\r")
    await ui.until(lambda: ui.text.count("Quit anyway?") == 2, "the question again")
    ui.pipe.send_text("y\r")
    assert await within(ui.task, "line mode to quit") == 0
    hold.set()
    record = ui.app.session.subagents.records["sa-1"]
    assert record.status == "interrupted"


async def test_a_child_is_resumed_live_and_after_continue(plain, server, repo, closing):
    server.when(
        is_main,
        tool_use("task", {"description": "Find login", "prompt": "Where is login defined?"}),
        text("In auth.py."),
        tool_use("task", {"description": "Callers", "prompt": "Who calls it?", "resume": "sa-1"}),
        text("views.py calls it."),
    )
    server.when(is_child, text("login is at src/app/auth.py:4."), text("src/app/views.py imports login."))
    ui = plain()
    await ui.submit("find login")
    shown = await ui.submit("who calls it?")
    assert "sa-1 ▸ Callers · general-purpose · resumed" in shown and "views.py calls it." in shown
    transcript = await ui.submit("/transcript sa-1")
    assert (
        transcript.index("Where is login defined?")
        < transcript.index("login is at src/app/auth.py:4.")
        < transcript.index("Who calls it?")
        < transcript.index("src/app/views.py imports login.")
    )
    await ui.quit()
    server.when(
        is_main,
        tool_use("task", {"description": "More", "prompt": "And handle_auth?", "resume": "sa-1"}),
        text("Both in auth.py."),
    )
    server.when(is_child, text("handle_auth is at src/app/auth.py:9."))
    old = ui.app.session
    resumed = closing(
        assemble(Settings().engine(), Workspace.at(repo), None, interactive=True, llm=old.llm, resume=old.id)
    )
    out = io.StringIO()
    with create_pipe_input() as pipe:
        again = Harness(
            PlainApp(resumed, input=pipe, output=DummyOutput(), out=out, color=False, live=False, pager=False),
            pipe,
            out,
        )
        assert "Both in auth.py." in await again.submit("and handle_auth?")
        await again.quit()
    child = [b for b in server.requests if is_child(b)][-1]
    assert first_user_text(child) == "Where is login defined?" and last_user_text(child) == "And handle_auth?"
    assert [m["role"] for m in child["messages"]] == ["user", "assistant"] * 2 + ["user"]
    server.assert_no_rejections()


async def test_piped_input_waits_for_background_children_at_the_end(make_session, server):
    started = threading.Event()  # the child answers once the main agent's turn has its last reply

    def said_started(body):
        started.set()
        return text("Started.")

    server.when(
        is_main,
        background("Find auth", "Find where auth is handled."),
        said_started,
        text("Auth is in auth.py, says sa-1."),
    )
    server.when(is_child, text("Auth is in src/app/auth.py.", gate=started, gate_timeout=120))
    session, _ = make_session(interactive=True)
    out = io.StringIO()
    app = PlainApp(
        session, out=out, color=False, live=False, pager=False, lines=io.StringIO("auth in the background\n")
    )
    assert await within(app.run(), "line mode to quit") == 0
    assert "Auth is in auth.py, says sa-1." in out.getvalue()
    assert session.subagents.records["sa-1"].status == "done" and not session.subagents.pending
    server.assert_no_rejections()


async def test_a_background_child_asking_for_approval_at_the_prompt_is_asked(plain, server):
    server.when(is_main, background("Say hi", "Run echo hi."), text("Started."), text("The child ran echo."))
    release = threading.Event()  # the child asks only once the main agent is idle at the prompt
    server.when(
        is_child,
        tool_use("bash", {"command": "echo hi-from-child"}, gate=release, gate_timeout=120),
        text("It printed hi-from-child."),
    )
    ui = plain()
    await ui.submit("say hi in the background")
    release.set()
    await ui.until(lambda: "wants to run bash" in ui.text, "the child's question")
    await ui.until(lambda: ui.app.keys.watching, "the keys to be watched")
    ui.pipe.send_text("y")
    await ui.until(lambda: "The child ran echo." in ui.text, "the turn on the child's result")
    assert "It printed hi-from-child." in last_user_text(main_requests(server)[-1])
    assert ui.app.session.subagents.records["sa-1"].status == "done"
    assert await ui.quit() == 0
    server.assert_no_rejections()


async def test_on_a_terminal_a_background_child_leaves_no_live_line_under_the_prompt(make_session, server):
    from tests.ui.test_plain import ANSI, settle

    release = threading.Event()
    server.when(
        is_main,
        background("Find auth", "Find where auth is handled."),
        text("Started it."),
        text("The child says auth.py."),
    )
    server.when(is_child, text("Auth is in src/app/auth.py.", gate=release, gate_timeout=120))
    session, _ = make_session(interactive=True)
    out = io.StringIO()
    with create_pipe_input() as pipe:
        ui = Harness(
            PlainApp(session, input=pipe, output=DummyOutput(), out=out, color=True, live=True, pager=False), pipe, out
        )
        await ui.submit("look for auth in the background")
        release.set()
        await ui.until(lambda: "The child says auth.py." in out.getvalue() and ui.app.at_prompt, "the result turn")
        shown = ANSI.sub("", settle(out.getvalue()))
        assert "turn 1/30" not in shown and "starting" not in shown  # the child's live line never stayed
        assert shown.count("sa-1 ✓ done · unverified · 1 turn") == 1  # it made no tool call
        await ui.quit()


async def test_two_results_ending_the_prompt_in_one_tick_end_it_once(plain, server):
    """Two background children that finish together each end the prompt (on_event's end_prompt) before it has
    returned: the second must not ask prompt-toolkit to exit again ("Return value already set")."""
    server.when(is_main, text("Hello."))
    ui = plain()
    await ui.submit("hi")
    await ui.idle()
    ui.pipe.send_text("a draft")
    await ui.until(lambda: ui.app.prompt.app.current_buffer.text == "a draft", "the draft in the input")
    prompts = ui.app.prompts
    ui.app.end_prompt()
    ui.app.end_prompt()
    await ui.until(lambda: ui.app.prompts > prompts and ui.app.at_prompt, "the prompt again")
    assert ui.app.prompt.app.current_buffer.text == "a draft"
    ui.pipe.send_text("\x15")  # ctrl+u: an empty line, so ctrl+d quits
    await ui.until(lambda: ui.app.prompt.app.current_buffer.text == "", "the input emptied")
    assert await ui.quit() == 0
