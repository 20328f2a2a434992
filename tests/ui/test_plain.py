"""Line mode, driven through prompt-toolkit's pipe input against the stand-in server."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from agentcli.config import Settings
from agentcli.core.assembly import assemble
from agentcli.core.content import agentcli_note
from agentcli.core.engine.loop import STOPPED
from agentcli.core.events import SubagentFinished, SubagentStarted, ToolCallFinished, ToolCallStarted, Usage
from agentcli.core.system.workspace import Workspace
from agentcli.ui.plain import PlainApp, run_plain
from agentcli.ui.plain.display import WITHDRAWN, Display
from agentcli.ui.plain.prompt import FileIndex, PlainCompleter, history_path
from agentcli.ui.plain.screen import SYNC_END, SYNC_START, Painter, Screen
from agentcli.ui.plain.stream import MARKDOWN_TAIL, TextStream, markdown_renderer
from agentcli.ui.plain.transcript import page
from tests.fakes.anthropic_server import (
    error,
    offers_tool,
    reply,
    sse_events,
    text,
    tool_result_text,
    tool_results,
    tool_use,
)
from tests.fakes.scenarios import demo_responder
from tests.origin import Origin
from tests.waiting import until, within

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
DELEGATE = "use a subagent to find where handle_auth is handled"


class Harness:
    """A PlainApp running on the test's loop; keys go in through a pipe, lines come out in ``out``."""

    def __init__(self, app: PlainApp, pipe: Any, out: io.StringIO) -> None:
        self.app, self.pipe, self.out = app, pipe, out
        self.task = asyncio.ensure_future(app.run())

    @property
    def text(self) -> str:
        return self.out.getvalue()

    async def until(self, condition: Callable[[], bool], what: str = "condition") -> None:
        def holds() -> bool:
            if self.task.done():
                self.task.result()
                raise AssertionError(f"line mode quit while waiting for {what}:\n{self.text}")
            return bool(condition())

        await until(holds, what, detail=lambda: f"line mode printed:\n{self.text}")

    async def idle(self) -> None:
        await self.until(lambda: self.app.at_prompt and not self.app.turns.busy, "the prompt")

    async def submit(self, line: str) -> str:
        """Type a line at the prompt, wait until the prompt is back, and return what it printed."""
        await self.idle()
        start, prompts = len(self.text), self.app.prompts
        self.pipe.send_text(line + "\r")
        await self.until(lambda: self.app.prompts > prompts and self.app.at_prompt, "the next prompt")
        return self.text[start:]

    async def quit(self) -> int:
        await self.idle()
        self.pipe.send_text("\x04")  # ctrl+d
        return await within(self.task, "line mode to quit")


@pytest.fixture
async def plain(make_session):
    harnesses: list[Harness] = []
    pipes = contextlib.ExitStack()

    def start(*, color: bool = False, live: bool = False, **overrides: Any) -> Harness:
        session, _ = make_session(interactive=True, **overrides)
        pipe = pipes.enter_context(create_pipe_input())
        out = io.StringIO()
        app = PlainApp(session, input=pipe, output=DummyOutput(), out=out, color=color, live=live, pager=False)
        harness = Harness(app, pipe, out)
        harnesses.append(harness)
        return harness

    yield start
    for harness in harnesses:
        if not harness.task.done():
            harness.task.cancel()
            await asyncio.gather(harness.task, return_exceptions=True)
    pipes.close()


async def test_a_delegated_question_prints_the_answer_and_the_child_s_progress(plain, server):
    server.responder = demo_responder
    ui = plain()
    shown = await ui.submit(DELEGATE)
    assert "handle_auth is handled in src/app/auth.py:9" in shown
    assert "sa-1 ▸ Find where handle_auth is handled · general-purpose" in shown
    assert "sa-1 · grep handle_auth" in shown
    assert re.search(r"sa-1 ✓ done · 3 turns · [\d.]+k? tokens", shown)
    # one line per subagent lifecycle step, indented under the main agent's text
    assert shown.index("I'll ask a subagent") < shown.index("  sa-1 ▸") < shown.index("## What the subagent found")
    assert await ui.quit() == 0
    server.assert_no_rejections()


async def test_agents_lists_the_child_and_transcript_1_shows_its_grep(plain, server):
    server.responder = demo_responder
    ui = plain()
    await ui.submit(DELEGATE)
    listing = " ".join((await ui.submit("/agents")).split())  # rows wrap at the width
    assert re.search(
        r"1\. sa-1 ✓ done 3 turns · [\d.]+k tokens · [\d.]+ s · general-purpose · "
        r"Find where handle_auth is handled",
        listing,
    )
    transcript = await ui.submit("/transcript 1")
    assert "Brief:" in transcript and "Find where `handle_auth` is handled in this repository." in transcript
    assert '● grep(pattern="handle_auth", case_insensitive=true)' in transcript
    assert "src/app/auth.py:6:    return handle_auth(user, password)" in transcript  # the grep output
    assert "● read_file(" in transcript
    assert "Status: done" in transcript and "handle_auth is handled in src/app/auth.py:9" in transcript
    assert "No subagent '7'" in await ui.submit("/transcript 7")
    await ui.quit()


@pytest.mark.parametrize("key", ["\x03", "\x1b"], ids=["ctrl+c", "esc"])
async def test_interrupting_mid_stream_keeps_the_next_request_valid(plain, server, key):
    long_answer = "".join(f"Line {n} of a long answer.\n" for n in range(200))
    # The first lines arrive, then the stream goes silent until the server stops: the key lands mid-stream.
    server.script(text(long_answer, stall_after_events=40, stall_seconds=600), text("Second answer."))
    ui = plain()
    await ui.idle()
    ui.pipe.send_text("tell me everything\r")
    await ui.until(lambda: "Line 3 of a long answer." in ui.text, "streamed text")
    ui.pipe.send_text(key)  # esc on its own interrupts as ctrl+c does
    await ui.idle()
    assert "Interrupted." in ui.text
    assert "Line 199 of" not in ui.text
    shown = await ui.submit("and now?")
    assert "Second answer." in shown
    server.assert_no_rejections()  # the server validates the history as the API does
    second = server.requests[1]["messages"]
    assert [m["role"] for m in second] == ["user"]  # the cut-off reply never entered the history
    # ... and the next request says, as agentcli's, that the turn was stopped
    assert [b["text"] for b in second[0]["content"]] == [
        "tell me everything",
        agentcli_note(STOPPED)["text"],
        "and now?",
    ]
    await ui.quit()


async def test_alt_enter_typed_during_a_turn_is_a_new_line_not_an_interrupt(plain, server):
    gate = threading.Event()
    server.script(text("First answer.", gate=gate, gate_timeout=120), text("Second answer."))
    ui = plain()
    await ui.idle()
    ui.pipe.send_text("first question\r")
    await ui.until(lambda: ui.app.turns.busy and len(server.requests) == 1, "the first request")
    ui.pipe.send_text("one\x1b\rtwo")  # alt+enter sends esc and enter at once
    await ui.until(lambda: ui.app.display.typeahead == "one\ntwo", "the type-ahead")
    gate.set()
    await ui.until(lambda: "First answer." in ui.text and ui.app.at_prompt, "the first answer")
    assert "Interrupted." not in ui.text
    ui.pipe.send_text("\r")
    await ui.until(lambda: "Second answer." in ui.text, "the second answer")
    assert server.requests[1]["messages"][-1]["content"][0]["text"] == "one\ntwo"
    await ui.quit()


async def test_an_approval_answered_n_denies_the_subagent_s_bash_call(plain, server):
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Run the tests", "prompt": "Run make test and report."}),
        text("The subagent could not run the tests."),
    )
    server.when(
        lambda b: not offers_tool(b, "task"),
        tool_use("bash", {"command": "make test"}),
        text("I was not allowed to run make test."),
    )
    ui = plain()
    await ui.idle()
    ui.pipe.send_text("run the tests\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the approval question")
    assert "? sa-1 (Run the tests) wants to run bash" in ui.text
    assert "    make test" in ui.text
    ui.pipe.send_text("n")
    await ui.idle()
    assert "✗ denied: bash make test (sa-1)" in ui.text
    assert "The subagent could not run the tests." in ui.text
    child_followup = [b for b in server.requests if not offers_tool(b, "task")][-1]
    [result] = tool_results(child_followup)
    assert result["is_error"] and "The user denied this bash call" in tool_result_text(result)
    server.assert_no_rejections()
    await ui.quit()


async def test_t_at_an_approval_denies_with_the_reason_typed_and_the_model_reads_it(plain, server):
    server.script(tool_use("bash", {"command": "pytest tests/x.py"}), text("I will use make test."))
    ui = plain()
    await ui.idle()
    ui.pipe.send_text("run the tests\r")
    await ui.until(lambda: "no, [t]ell it why" in ui.text, "the approval question")
    ui.pipe.send_text("tuse make test; nothing else\r")  # y, s, a and n are letters of the reason now
    await ui.until(lambda: "I will use make test." in ui.text, "the answer")
    assert "✗ denied: bash pytest tests/x.py (main) — use make test; nothing else" in ui.text
    [result] = tool_results(server.requests[1])
    assert result["is_error"] and tool_result_text(result) == (
        'The user denied this bash call and said why: "use make test; nothing else". Do not retry it unchanged; '
        "act on what they said."
    )
    await ui.quit()


async def test_an_approval_answered_s_allows_the_tool_for_the_session(plain, server, repo):
    server.script(
        tool_use("bash", {"command": "echo one"}), tool_use("bash", {"command": "echo one"}), text("Both ran.")
    )
    ui = plain()
    await ui.idle()
    ui.pipe.send_text("echo twice\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the approval question")
    assert "? main agent wants to run bash" in ui.text
    ui.pipe.send_text("s")
    await ui.idle()
    assert ui.text.count("[y]es once") == 1  # the second call needed no question
    assert "allowed for this session: bash echo one (main)" in ui.text
    assert ui.text.count("● bash echo one") == 2 and "Both ran." in ui.text
    assert "(this session)" in (await ui.submit("/permissions"))
    await ui.quit()


async def test_a_bash_call_shows_the_last_lines_of_its_output_and_ctrl_o_shows_all(plain, server, repo):
    server.script(
        tool_use("bash", {"command": "seq 1 30"}),
        tool_use("read_file", {"path": "src/app/auth.py"}),
        tool_use("bash", {"command": "echo boom; exit 3"}),
        tool_use("bash", {"command": "seq 11 15"}),
        text("Ran them."),
    )
    ui = plain(permission_mode="bypassPermissions")
    lines = (await ui.submit("count")).splitlines()
    at = lines.index(next(line for line in lines if line.startswith("● bash seq 1 30 · ")))
    assert lines[at + 1 : at + 6] == [
        "    … 26 earlier lines · ctrl+o shows all",
        "    27",
        "    28",
        "    29",
        "    30",
    ]
    at = lines.index(next(line for line in lines if line.startswith("● read_file src/app/auth.py · ")))
    assert lines[at + 1].startswith("● bash echo boom")  # read_file keeps one line
    assert lines[at + 1].endswith("· Command failed with exit code 3.") and lines[at + 2] == "    boom"
    assert lines[at + 3].startswith("● bash seq 11 15 · ")
    assert lines[at + 4 : at + 9] == ["    11", "    12", "    13", "    14", "    15"]  # no hint to hide one line
    shown = await ui.submit("\x0f")  # ctrl+o, then enter on the empty line
    assert "● bash seq 1 30 · " in shown and all(f"\n{n}\n" in shown for n in range(1, 31))
    assert "boom" not in shown  # only calls whose preview was cut
    await ui.quit()


def test_a_long_command_is_cut_so_the_time_stays_on_its_lines():
    out = io.StringIO()
    now = [100.0]
    screen = Screen(out, live=True, size=lambda: (61, 40))
    display = Display(screen, Painter(None, lambda: screen.width), clock=lambda: now[0])
    command = "pytest tests/" + "x" * 100
    display.view.apply(ToolCallStarted(id="t1", name="bash", input={"command": command}, summary=command), 100.0)
    now[0] = 103.2
    [live] = display.live_lines()
    assert live[2:].startswith("bash pytest tests/xxx") and live.endswith("… · 3.2 s") and len(live) <= 60
    display.handle(ToolCallFinished(id="t1", name="bash", output="ok", is_error=False, seconds=4.5))
    assert out.getvalue().splitlines()[0].endswith("… · 4.5 s")


async def test_commands_answer_in_one_sentence(plain, server):
    server.script(text("Hello there."))
    ui = plain()
    await ui.submit("hi")
    assert "/transcript N" in await ui.submit("/help")
    assert "Unknown command /frobnicate; /help lists the commands." in await ui.submit("/frobnicate")
    assert "main context:" in await ui.submit("/cost")
    root, ident = ui.app.session.workspace.root, ui.app.session.id
    assert f"Exported this session to agentcli-{ident}.md." in await ui.submit("/export")
    assert "## User\n\nhi\n\n## Assistant\n\nHello there." in (root / f"agentcli-{ident}.md").read_text()
    assert "Cannot write" in await ui.submit("/export no/such/folder.md")
    assert "Exported this session to s.json." in await ui.submit("/export s.json")
    assert '"id": "' + ident + '"' in (root / "s.json").read_text()  # a .json name: the JSON export
    assert "Model set to claude-haiku-4-5." in await ui.submit("/model claude-haiku-4-5")
    assert ui.app.session.main.model == "claude-haiku-4-5"
    assert "Unknown permission mode 'sometimes'" in await ui.submit("/permissions sometimes")
    assert "Permission mode set to acceptEdits." in await ui.submit("/permissions acceptEdits")
    assert "No subagents in this session yet." in await ui.submit("/agents")
    assert "Started a fresh conversation" in await ui.submit("/clear")
    assert ui.app.session.main.messages == []
    assert "too little to compact" in await ui.submit("/compact")
    await ui.idle()
    ui.pipe.send_text("/exit\r")
    assert await within(ui.task, "line mode to quit") == 0


async def test_ctrl_c_twice_on_an_empty_line_quits_and_history_is_kept(plain, server):
    server.script(text("Noted."))
    ui = plain()
    await ui.submit("remember this line")
    ui.pipe.send_text("\x03")
    await ui.until(lambda: "Press ctrl+c again to quit" in ui.text, "the hint")
    ui.pipe.send_text("\x03")
    assert await within(ui.task, "line mode to quit") == 0
    assert "remember this line" in history_path().read_text()


async def test_quitting_says_how_to_resume_the_session(plain, server):
    server.script(text("Noted."))
    ui = plain()
    await ui.submit("remember this")
    await ui.quit()
    resume = f"Session {ui.app.session.id} is saved; resume it with: agentcli --plain --continue"
    assert ui.text.rstrip().endswith(resume)
    empty = plain()
    await empty.quit()
    assert "is saved" not in empty.text and empty.text.rstrip().endswith("Nothing was saved: no message was sent.")


async def test_ctrl_j_adds_a_line_and_enter_sends(plain, server):
    server.script(text("Two lines received."))
    ui = plain()
    await ui.submit("first\nsecond")  # "\n" is ctrl+j in a terminal
    [request] = server.requests
    assert request["messages"][0]["content"][0]["text"] == "first\nsecond"
    await ui.quit()


async def test_markdown_is_rendered_with_color_and_printed_once(plain, server):
    server.script(text("## Findings\n\nThe code is in `src/app/auth.py`.\n\n```python\ndef f():\n    return 1\n```\n"))
    ui = plain(color=True)
    shown = await ui.submit("where?")
    plain_text = ANSI.sub("", shown)
    assert "## Findings" not in plain_text and "Findings" in plain_text  # rendered, not raw
    assert plain_text.count("The code is in src/app/auth.py.") == 1
    assert "\x1b[" in shown  # styled
    assert "def f():" in plain_text
    await ui.quit()


async def test_without_color_the_output_is_plain_text(plain, server):
    server.responder = demo_responder
    ui = plain(color=False)
    shown = await ui.submit(DELEGATE)
    assert "\x1b" not in shown
    assert "## What the subagent found" in shown  # raw Markdown, as the model wrote it
    await ui.quit()


async def test_completion_of_commands_and_gitignore_aware_paths(repo):
    files = FileIndex(repo)
    await files.read()
    assert "src/app/auth.py" in files.files and "build/auth.py" not in files.files
    completer = PlainCompleter(files, lambda: [("1", "sa-1 Find auth")])

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("/com") == ["/compact"]
    assert "/transcript" in complete("/t")
    assert complete("/permissions acc") == ["acceptEdits"]
    assert complete("/transcript ") == ["1"]
    assert complete("look at @auth") == ["@src/app/auth.py"]
    assert complete("look at @src/") == ["@src/", "@src/app/", "@src/app/auth.py", "@src/app/views.py"]


async def test_piped_lines_are_read_plainly_and_echoed_once(make_session, server):
    server.script(text("Hello back."))
    session, _ = make_session(interactive=True)
    out = io.StringIO()
    app = PlainApp(session, out=out, color=False, live=False, pager=False, lines=io.StringIO("hello\n\n/cost\n"))
    assert await within(app.run(), "line mode to quit") == 0
    shown = out.getvalue()
    assert shown.count("› hello\n") == 1 and shown.count("› /cost\n") == 1 and "\r" not in shown
    order = [shown.index(part) for part in ("› hello", "Hello back.", "› /cost", "main context:")]
    assert order == sorted(order)
    assert app.prompt is None  # no prompt-toolkit session at all


def test_piping_into_line_mode_prints_no_terminal_warning(server, api_env, repo):
    server.script(text("Hello back."))
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "--plain"],
        cwd=repo,
        input="hello\n/cost\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "not a terminal" not in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout.count("› hello\n") == 1 and proc.stdout.count("› /cost\n") == 1 and "\r" not in proc.stdout
    assert "Hello back." in proc.stdout and "main context:" in proc.stdout


def test_the_pager_gets_a_final_newline_so_the_prompt_starts_on_its_own_line(capfd):
    assert page("one\ntwo", ["cat"])  # PAGER=cat prints as is
    assert capfd.readouterr().out == "one\ntwo\n"


def test_missing_credentials_exit_2_with_one_sentence(repo, capsys):
    assert run_plain(Settings(), repo) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentcli: No API key: set ANTHROPIC_API_KEY") and "Traceback" not in err
    assert err.rstrip().endswith("To try it first with no key: agentcli --demo --plain") and err.count("\n") == 1


def test_under_make_run_the_demo_is_offered_as_make_demo(repo, capsys, monkeypatch):
    """`make run` in a clone: agentcli is not on PATH there, `make demo` is (the Makefile sets AGENTCLI_FROM_MAKE)."""
    monkeypatch.setenv("AGENTCLI_FROM_MAKE", "1")
    assert run_plain(Settings(), repo) == 2
    assert capsys.readouterr().err.rstrip().endswith("To try it first with no key: make demo ARGS=--plain")


async def test_a_line_typed_while_a_turn_runs_is_sent_next(plain, server):
    gate = threading.Event()
    server.script(text("First answer.", gate=gate, gate_timeout=120), text("Second answer."))
    ui = plain()
    await ui.idle()
    ui.pipe.send_text("first question\r")
    await ui.until(lambda: ui.app.turns.busy and len(server.requests) == 1, "the first request")
    ui.pipe.send_text("second question\r")  # typed ahead, while the answer is awaited
    await ui.until(lambda: ui.app.display.typeahead == "second question\n", "the type-ahead")
    gate.set()
    await ui.until(lambda: "Second answer." in ui.text, "the second answer")
    assert server.requests[1]["messages"][-1]["content"][0]["text"] == "second question"
    await ui.quit()


def settle(output: str) -> str:
    """What a terminal shows after the live region's erase-and-redraw sequences have been applied."""
    output = output.replace(SYNC_START, "").replace(SYNC_END, "")
    shown = ""
    for n, part in enumerate(re.split(r"\r\x1b\[(\d+)A\x1b\[J", output)):
        if n % 2:
            shown = "".join(shown.splitlines(keepends=True)[: -int(part)])
        else:
            shown += part
    return shown


async def test_on_a_terminal_live_lines_are_redrawn_in_place_and_nothing_is_printed_twice(make_session, server):
    server.responder = demo_responder
    session, _ = make_session(interactive=True)
    out = io.StringIO()
    with create_pipe_input() as pipe:
        app = PlainApp(session, input=pipe, output=DummyOutput(), out=out, color=True, live=True, pager=False)
        ui = Harness(app, pipe, out)
        await ui.submit(DELEGATE)
        assert "\x1b[J" in out.getvalue()  # live lines were drawn and erased
        shown = ANSI.sub("", settle(out.getvalue()))
        assert shown.count("handle_auth is handled in src/app/auth.py:9.") == 1
        assert shown.count("I'll ask a subagent to look for handle_auth.") == 1
        assert "Thinking" not in shown and "turn 1/30" not in shown  # live-only lines are gone
        assert "sa-1 ✓ done · 3 turns" in shown
        await ui.quit()


async def test_api_retries_update_one_live_line_and_the_outcome_stays(plain, server):
    overloaded = error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})
    # the connection is made first: a loopback reset of a new one under load would take a try (tests/retries.py)
    server.script(text("Hello."), overloaded, overloaded, text("Made it."), overloaded, overloaded, overloaded)
    ui = plain(live=True, api_retries=2)
    await ui.submit("hello")
    await ui.submit("hi")
    assert "Retrying in 0 s (2/2) · The API is overloaded or failing (529): Overloaded." in ANSI.sub("", ui.text)
    await ui.submit("again")
    shown = ANSI.sub("", settle(ui.text))
    assert "Retrying in" not in shown  # the live line is gone; no paragraph per try
    retried = "! The API is overloaded or failing (529): Overloaded. Retried 2 times.\n"
    assert shown.count(retried) == 2
    first, second = shown.split("Made it.")  # the outcome of each run of retries stays: the answer, the error
    assert retried in first and (retried + "Error: The API is overloaded or failing (529): Overloaded.") in second
    await ui.quit()


async def test_a_resumed_session_shows_its_conversation(plain, server, repo, closing):
    server.responder = demo_responder
    ui = plain()
    await ui.submit(DELEGATE)
    await ui.quit()
    old = ui.app.session
    resumed = closing(
        assemble(Settings().engine(), Workspace.at(repo), None, interactive=True, llm=old.llm, resume=old.id)
    )
    out = io.StringIO()
    with create_pipe_input() as pipe:
        app = PlainApp(resumed, input=pipe, output=DummyOutput(), out=out, color=False, live=False, pager=False)
        again = Harness(app, pipe, out)
        await again.idle()
        assert f"Resumed session {old.id}." in out.getvalue()
        assert f"› {DELEGATE}" in out.getvalue()
        assert "sa-1 ✓ done · 3 turns" in out.getvalue()
        assert "1. sa-1 ✓ done" in await again.submit("/agents")
        assert "● grep(" in await again.submit("/transcript 1")
        await again.quit()


async def test_compaction_shows_as_one_line_live_and_when_resumed(plain, server, repo, closing):
    server.script(text("One."), text("Two."), text("The user said first and second."))
    ui = plain()
    await ui.submit("first")
    await ui.submit("second")
    shown = await ui.submit("/compact")
    line = re.search(
        r"compacted 3 older messages into a summary \(asked for\): about [\d.]+k? → [\d.]+k? tokens", shown
    )
    assert line and "too little" not in shown
    await ui.quit()
    resumed = closing(
        assemble(
            Settings().engine(),
            Workspace.at(repo),
            None,
            interactive=True,
            llm=ui.app.session.llm,
            resume=ui.app.session.id,
        )
    )
    out = io.StringIO()
    with create_pipe_input() as pipe:
        app = PlainApp(resumed, input=pipe, output=DummyOutput(), out=out, color=False, live=False, pager=False)
        again = Harness(app, pipe, out)
        await again.idle()
        assert line.group(0) in out.getvalue()
        await again.quit()


async def test_a_busy_subagent_s_tool_lines_are_summed_up(repo):
    out = io.StringIO()
    screen = Screen(out, live=False, size=lambda: (120, 40))
    display = Display(screen, Painter(None, lambda: screen.width), clock=lambda: 100.0)
    child: Origin = {"agent_id": "sa-1", "parent_tool_use_id": "toolu_1"}
    display.handle(SubagentStarted(id="sa-1", subagent_type="explore", description="Map the code", prompt="…", **child))
    for n, (name, args) in enumerate(
        [
            ("grep", {"pattern": "a"}),
            ("grep", {"pattern": "b"}),
            ("read_file", {"path": "x.py"}),
            ("grep", {"pattern": "c"}),
        ]
    ):
        display.handle(ToolCallStarted(id=f"t{n}", name=name, input=args, summary=next(iter(args.values())), **child))
    assert out.getvalue().count("sa-1 ·") == 1  # the first call shows; the others wait for the next line
    display.handle(
        SubagentFinished(id="sa-1", status="done", result="ok", turns=5, usage=Usage(1500, 500), seconds=4.2, **child)
    )
    lines = out.getvalue().splitlines()
    assert lines == [
        "  sa-1 ▸ Map the code · explore",
        "  sa-1 · grep a",
        "  sa-1 · grep b  +2 more: read_file, grep",
        "  sa-1 ✓ done · 5 turns · 2.0k tokens · 4.2 s",
    ]


def test_a_long_markdown_answer_streams_in_segments_and_prints_as_a_whole_would():
    painter = Painter("truecolor", lambda: 80)
    render = markdown_renderer(painter)
    blocks = [
        "## Step {n}\n\nSome text with `code` and **bold** words, long enough to wrap at the end of a line.\n\n",
        "- one\n- two\n\n  still two\n\n- three\n\n",
        "```python\ndef f(x):\n\n    return x * {n}\n```\n\n",
        "> a quote\n>\n> and more\n\n",
        "| a | b |\n|---|---|\n| {n} | 2 |\n\n",
    ]
    answer = "".join(blocks[n % len(blocks)].format(n=n) for n in range(40)) + "The end."
    stream = TextStream(render, MARKDOWN_TAIL, segments=True)
    printed: list[str] = []
    for start in range(0, len(answer), 7):
        stream.add(answer[start : start + 7])
        printed += stream.step()[0]
    printed += stream.step(final=True)[0]
    assert stream.base > 0  # it was cut into segments
    assert printed == render(answer, True)


@pytest.mark.parametrize("live", [False, True], ids=["pipe", "terminal"])
async def test_a_draft_printed_before_its_stream_broke_is_withdrawn_and_the_answer_printed_once(plain, server, live):
    """A reply cut before message_stop is asked for again whole (tests/e2e/test_cut_draft.py): what of its draft
    was printed for good stays in the scrollback, so a line under it says it is withdrawn."""
    base = reply("First paragraph of the draft.\n\nSecond paragraph of the draft.\n\n", "A part never sent whole")
    names = [name for name, _ in sse_events(base, {"model": "m", "messages": []})]
    gate = threading.Event()  # the stream waits, mid-draft, until the draft is printed
    server.script(
        base.with_options(
            gate=gate,
            gate_after_events=names.index("content_block_stop"),
            end_after_events=names.index("content_block_stop") + 3,
        ),
        text("The whole answer."),
    )
    ui = plain(live=live)
    await ui.idle()
    start = len(ui.text)
    ui.pipe.send_text("question\r")
    await ui.until(lambda: "First paragraph of the draft." in ui.text[start:], "the draft to be printed")
    gate.set()
    await ui.idle()
    shown = ANSI.sub("", settle(ui.text[start:]) if live else ui.text[start:])
    draft, rest = shown.split(WITHDRAWN)
    assert "First paragraph of the draft." in draft and "draft" not in rest
    assert rest.count("The whole answer.") == 1
    assert [e for e in ui.app.session.main.messages if e["role"] == "assistant"] == [
        {"role": "assistant", "content": [{"type": "text", "text": "The whole answer."}]}
    ]
    await ui.quit()
