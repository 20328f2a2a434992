"""The full-screen app under Pilot, against the stand-in server: what a user sees and does."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

from agentcli.config import Settings
from agentcli.core.events import ALLOW_ALWAYS
from agentcli.ui.slash import tokens
from agentcli.ui.tui.app import RESUME_WIDGETS, make_app
from agentcli.ui.tui.screens.approval import ApprovalScreen
from agentcli.ui.tui.screens.no_key import NoKeyScreen
from agentcli.ui.tui.screens.transcript import TranscriptScreen
from agentcli.ui.tui.widgets.answer import AssistantEntry
from agentcli.ui.tui.widgets.entries import NoticeEntry, PrunedMarker, ReportEntry
from agentcli.ui.tui.widgets.prompt import Completions, PromptInput
from agentcli.ui.tui.widgets.side_panel import EntryTitle, SubagentEntry
from agentcli.ui.tui.widgets.tool_call import TaskEntry, ToolCallEntry
from tests.fakes.anthropic_server import (
    error,
    first_user_text,
    last_user_text,
    reply,
    stream_error,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)
from tests.narrow import of
from tests.ui.test_tui_support import SIZE, answer, approval_shown, is_child, is_main, plain, resize, send, shown, until


def delegate(description: str, prompt: str) -> dict[str, Any]:
    return tool_use_block("task", {"description": description, "prompt": prompt})


async def test_delegated_search_shows_a_live_panel_entry_then_the_answer(server, tui):
    gate = threading.Event()
    server.when(
        is_main,
        reply("Let me delegate.", delegate("Find auth handler", "Find where handle_auth is.")),
        text("handle_auth lives in **src/app/auth.py**."),
    )
    server.when(
        is_child,
        tool_use("grep", {"pattern": "def handle_auth"}, gate=gate, gate_timeout=120),
        tool_use("read_file", {"path": "src/app/auth.py"}),
        text("handle_auth is defined at src/app/auth.py:9."),
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        assert not app.panel.is_open
        await send(pilot, "Use a subagent to find where auth is handled")
        await until(pilot, lambda: "sa-1" in app.panel.entries and app.subagents["sa-1"].turn == 1, "the panel entry")
        entry = app.panel.entries["sa-1"]
        assert app.panel.is_open  # it opened by itself
        # at 110 columns, two lines: the id and the description, then the state and the numbers, with a unit
        assert plain(entry).startswith("● sa-1 Find auth handler\n    1/30 · ")
        assert plain(entry).splitlines()[1].endswith(" tok")
        assert "sa-1" in plain(app.conversation.query_one(TaskEntry))
        await pilot.press("ctrl+o")  # the transcript, live while the child works
        await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript")
        transcript = app.screen
        assert shown(transcript.conversation).startswith("brief Find where handle_auth is.")
        assert not transcript.conversation.query(ToolCallEntry)
        gate.set()
        await until(pilot, lambda: len(transcript.conversation.query(ToolCallEntry)) == 2, "live tool calls")
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, "the answer")
        await pilot.pause()
        assert plain(entry).startswith("✓ sa-1 Find auth handler\n    3/30")
        assert "read_file src/app/auth.py" in plain(entry)
        task = app.conversation.query_one(TaskEntry)
        assert "handle_auth is defined at src/app/auth.py:9." in plain(task)
        answers = [plain(a) for a in app.conversation.query(AssistantEntry)]
        assert answers[-1] == "handle_auth lives in **src/app/auth.py**."
        kept_out = tokens(app.session.subagents.tokens_kept_out)
        assert f"kept out of main context: {kept_out} tokens" in str(app.query_one("#status").content)
    server.assert_no_rejections()


async def test_ctrl_o_shows_the_childs_tool_calls_with_input_and_output(server, tui):
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}), text("Done."))
    server.when(
        is_child,
        tool_use("grep", {"pattern": "handle_auth"}),
        tool_use("read_file", {"path": "src/app/auth.py"}),
        text("It is in src/app/auth.py:9."),
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "Find auth through a subagent")
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript")
        screen = app.screen
        await until(pilot, lambda: len(screen.conversation.query(ToolCallEntry)) == 2, "the replayed calls")
        calls = list(screen.conversation.query(ToolCallEntry))
        assert [c.call.name for c in calls] == ["grep", "read_file"]
        assert all(not c.collapsed for c in calls)  # the transcript shows every input and output
        assert "src/app/auth.py:9:def handle_auth(user, password):" in plain(calls[0])
        assert "pattern: handle_auth" in plain(calls[0])
        assert "def login(user, password):" in plain(calls[1])
        body = shown(screen.conversation)
        assert body.startswith("brief Find handle_auth.")
        assert "It is in src/app/auth.py:9." in body
        await pilot.press("escape")
        assert not isinstance(app.screen, TranscriptScreen)
    server.assert_no_rejections()


async def test_x_cancels_one_child_of_three_while_the_others_finish(server, tui):
    hold = threading.Event()
    server.when(
        is_main,
        reply(
            delegate("Errand one", "Errand 1"), delegate("Errand two", "Errand 2"), delegate("Errand three", "Errand 3")
        ),
        text("All reported."),
    )
    server.when(
        lambda b: first_user_text(b) == "Errand 2" and b.get("tool_choice") == {"type": "none"},
        text("Partial: errand two looked in src/ only."),
    )
    server.when(
        lambda b: first_user_text(b) == "Errand 2",
        tool_use("grep", {"pattern": "x"}),
        text("never sent", gate=hold, gate_timeout=120),
    )
    for n in (1, 3):
        server.when(lambda b, n=n: first_user_text(b) == f"Errand {n}", text(f"Result {n}"))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Run three errands")
        await until(
            pilot,
            lambda: "sa-2" in app.subagents and app.subagents["sa-2"].turn == 2,
            "errand two to wait on its second call",
        )
        app.query_one("#entry-sa-2", SubagentEntry).query_one(EntryTitle).focus()
        await pilot.press("x")
        await until(pilot, lambda: not app.busy, "the parent to finish")
        await pilot.pause()
        statuses = {i: s.status for i, s in app.subagents.items()}
        assert statuses == {"sa-1": "done", "sa-2": "cancelled", "sa-3": "done"}
        assert plain(app.panel.entries["sa-2"]).startswith("⊘")
        results = [tool_result_text(r) for r in tool_results(server.requests[-1])]
        assert results[0].startswith("Result 1") and results[2].startswith("Result 3")
        assert results[1].startswith("Partial: errand two looked in src/ only.")
        assert "sa-2 · cancelled" in results[1]
        # Entries stay, newest first.
        assert [e.agent_id for e in app.panel.query(SubagentEntry)] == ["sa-3", "sa-2", "sa-1"]
    hold.set()
    server.assert_no_rejections()


async def test_escape_mid_stream_interrupts_and_leaves_a_valid_history(server, tui):
    long_answer = " ".join(f"word{i}" for i in range(300))
    server.script(text(long_answer, stall_after_events=8, stall_seconds=600), text("Second answer."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Tell me a long story")
        await until(pilot, lambda: app.conversation.streaming, "the answer to stream")
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, "the interrupt")
        notices = [plain(n) for n in app.conversation.query(NoticeEntry)]
        assert any(n.startswith("Interrupted.") for n in notices), shown(app.conversation)
        assert app.session.main.messages[-1]["role"] == "user"
        await answer(pilot, "Go on")
        assert plain(list(app.conversation.query(AssistantEntry))[-1]) == "Second answer."
    server.assert_no_rejections()  # the stand-in server checks every history it is sent, as the API does
    assert "Go on" in json.dumps(server.requests[-1]["messages"][-1])


async def test_the_approval_modal_answers(server, tui):
    server.script(
        tool_use("bash", {"command": "echo one"}),
        tool_use("bash", {"command": "echo two"}),
        tool_use("bash", {"command": "echo three"}),
        tool_use("bash", {"command": "echo three"}),
        text("Ran them."),
    )
    app = tui(interactive=True)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Run four commands")
        for key in ("y", "n", "s"):
            await until(pilot, lambda: approval_shown(app), "an approval request")
            modal = app.screen
            assert modal.request.tool == "bash"
            assert "main agent" in plain(modal.query_one("#approval-agent"))
            await pilot.press(key)
            await until(pilot, lambda: app.screen is not modal, "the modal to close")
        await until(pilot, lambda: not app.busy, "the end of the turn")
        assert not isinstance(app.screen, ApprovalScreen)  # "echo three" was allowed for the session
    outputs = [tool_result_text(tool_results(b)[0]) for b in server.requests[1:]]
    assert outputs[0].strip() == "one"
    assert "denied" in outputs[1]
    assert outputs[2].strip() == "three" and outputs[3].strip() == "three"
    server.assert_no_rejections()


async def test_a_no_with_a_reason_reaches_the_model_in_the_tool_result(server, tui):
    server.script(tool_use("bash", {"command": "pytest tests/x.py"}), text("I will use make test."))
    app = tui(interactive=True)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Run the tests")
        await until(pilot, lambda: approval_shown(app), "the approval request")
        modal = app.screen
        await pilot.press("t")
        await until(pilot, lambda: modal.query_one("#approval-why").has_focus, "the reason's input")
        await pilot.press(*["space" if c == " " else c for c in "use make test, not pytest"])  # y, s, a, n type
        assert modal.query_one("#approval-why").value == "use make test, not pytest"
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy, "the end of the turn")
    [result] = tool_results(server.requests[1])
    assert result["is_error"] and tool_result_text(result) == (
        'The user denied this bash call and said why: "use make test, not pytest". Do not retry it unchanged; '
        "act on what they said."
    )
    server.assert_no_rejections()


async def test_always_allow_resolves_the_request_and_names_the_asking_subagent(server, tui):
    server.when(is_main, tool_use("task", {"description": "Run the tests", "prompt": "Run echo ok."}), text("ok"))
    server.when(is_child, tool_use("bash", {"command": "echo ok"}), text("Tests pass."))
    app = tui(interactive=True)
    answers = []
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "delegate the tests")
        await until(pilot, lambda: approval_shown(app), "the approval request")
        request = app.screen.request
        request.future.add_done_callback(lambda f: answers.append(f.result()))
        assert "subagent sa-1 (Run the tests)" in plain(app.screen.query_one("#approval-agent"))
        await pilot.press("a")
        await until(pilot, lambda: not app.busy, "the end of the turn")
    assert answers == [ALLOW_ALWAYS]
    assert app.subagents["sa-1"].status == "done"


async def test_tool_calls_are_one_line_and_expand_on_enter(server, tui):
    server.script(tool_use("grep", {"pattern": "handle_auth"}), text("Found it."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "grep for handle_auth")
        call = app.conversation.query_one(ToolCallEntry)
        title = plain(call).splitlines()[0]
        assert title.startswith("grep  handle_auth  ✓")
        assert call.collapsed
        call.focus()
        await pilot.press("enter")
        assert not call.collapsed
        assert "src/app/auth.py:6:    return handle_auth(user, password)" in plain(call)


async def test_slash_commands(server, tui):
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/help")
        assert "/model NAME" in plain(list(app.conversation.query(ReportEntry))[-1])
        await send(pilot, "/model claude-haiku-4-5")
        assert app.session.main.model == "claude-haiku-4-5"
        assert "claude-haiku-4-5" in str(app.query_one("#status").content)
        await send(pilot, "/permissions plan")
        assert app.session.permissions.mode == "plan"
        await send(pilot, "/permissions sometimes")
        assert "Unknown permission mode 'sometimes'" in plain(list(app.conversation.query(NoticeEntry))[-1])
        await send(pilot, "/cost")
        assert "kept out of main context" in plain(list(app.conversation.query(ReportEntry))[-1])
        await send(pilot, "/agents")
        assert app.panel.is_open
        assert "general-purpose" in plain(list(app.conversation.query(ReportEntry))[-1])
        await send(pilot, "/bogus")
        assert "Unknown command /bogus" in plain(list(app.conversation.query(NoticeEntry))[-1])
        await send(pilot, "/clear")
        assert len(app.conversation.children) == 1
        await send(pilot, "/exit")
        await pilot.pause()
    assert app.return_value == 0


async def test_compact_runs_in_a_worker(server, tui):
    server.script(text("First answer."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "hello")
        server.responder = lambda body: text("Summary of the conversation so far.")
        await send(pilot, "/compact the auth code")
        await until(pilot, lambda: not app.busy, "compaction")
        assert not [n for n in app.conversation.query(NoticeEntry) if "-error" in n.classes]
    server.assert_no_rejections()


async def test_input_completes_files_and_commands_and_recalls_history(server, tui, repo):
    server.script(text("One."), text("Two."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        area = app.query_one(PromptInput)
        menu = app.query_one(Completions)
        await pilot.press("@", "a", "u")
        await until(pilot, lambda: menu.showing and menu.items, "file completions")
        labels = [c.label for c in menu.items]
        assert "src/app/auth.py" in labels
        assert "build/auth.py" not in labels  # ignored by .gitignore
        await pilot.press("tab")
        assert area.text == "@src/app/auth.py "
        area.clear()
        await pilot.press("/", "m", "o")
        await until(pilot, lambda: menu.showing, "command completions")
        assert [c.label for c in menu.items] == ["/model NAME"]
        await pilot.press("enter")
        assert area.text == "/model "  # it needs a name: enter only completes it
        area.clear()
        await pilot.press("/", "c", "o", "s")
        await until(pilot, lambda: menu.showing, "command completions")
        await pilot.press("enter")  # nothing more to type: it runs at once
        assert area.text == ""
        assert "kept out of main context" in plain(list(app.conversation.query(ReportEntry))[-1])
        await pilot.pause()
        await pilot.press("a", "ctrl+j", "b")
        assert area.text == "a\nb"
        area.clear()
        await answer(pilot, "first question")
        await answer(pilot, "second question")
        await pilot.press("up")
        assert area.text == "second question"
        await pilot.press("up")
        assert area.text == "first question"
        await pilot.press("down", "down")
        assert area.text == ""


def hold_the_quit_window(app) -> list[Any]:
    """The window for a second ctrl+c closes after 3 s of wall time; a loaded machine can take that long
    between two key presses. Keep the timers that would close it, so the test closes it when it means to."""
    closers: list[Any] = []
    set_timer = app.set_timer

    def keep_closers(delay, callback=None, **options):
        if callback == app.disarm_ctrl_c:
            closers.append(callback)
            return None
        return set_timer(delay, callback, **options)

    app.set_timer = keep_closers
    return closers


async def test_ctrl_c_twice_quits_and_once_only_warns(server, tui):
    app = tui()
    closers = hold_the_quit_window(app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and len(closers) == 1
        closers.pop()()  # the window closes: the next press only warns again
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and len(closers) == 1
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_value == 0


async def test_side_panel_toggles_and_ctrl_o_without_subagents_says_so(server, tui):
    app = tui()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("ctrl+t")
        assert app.panel.is_open
        await pilot.press("ctrl+t")
        assert not app.panel.is_open
        await pilot.press("ctrl+o")
        assert not isinstance(app.screen, TranscriptScreen)
        assert any("No subagent" in n.message for n in app._notifications)


async def test_long_sessions_prune_old_widgets(server, tui):
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        app.conversation.max_widgets = 20
        for n in range(50):
            await app.conversation.add_notice(f"note {n}")
        await pilot.pause()
        children = list(app.conversation.children)
        assert isinstance(children[0], PrunedMarker)
        assert len(children) == 21
        assert plain(children[-1]) == "note 49"


async def test_resumed_session_rebuilds_panel_and_conversation(server, make_session):
    server.when(
        is_main,
        tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}),
        text("It is in auth.py."),
    )
    server.when(is_child, tool_use("grep", {"pattern": "handle_auth"}), text("src/app/auth.py:9"))
    session, _ = make_session(interactive=True)
    await session.send("find auth via a subagent")  # as if loaded from disk: messages and records are there
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.panel.is_open
        assert plain(app.panel.entries["sa-1"]).startswith("✓ sa-1 Find auth\n    2/30")
        body = shown(app.conversation)
        assert "you find auth via a subagent" in body and "It is in auth.py." in body
        assert "sa-1" in plain(app.conversation.query_one(TaskEntry))
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript")
        transcript = of(TranscriptScreen, app.screen)
        await until(pilot, lambda: transcript.conversation.query(ToolCallEntry), "the child's calls")
        assert transcript.conversation.query_one(ToolCallEntry).call.name == "grep"
        await pilot.press("up")  # the resumed prompts are in the input history
        await pilot.press("escape")
        await pilot.press("up")
        assert app.query_one(PromptInput).text == "find auth via a subagent"


async def test_without_a_key_the_app_opens_and_says_how_to_set_one(repo, monkeypatch):
    monkeypatch.setenv("AGENTCLI_FROM_MAKE", "1")  # `make run`: in the clone agentcli is not on PATH, make demo is
    app = make_app(Settings().engine(), repo, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, NoKeyScreen)
        shown = plain(app.screen.query_one("#no-key-text"))
        assert "export ANTHROPIC_API_KEY" in shown and "  make demo" in shown and "agentcli --demo" not in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, NoKeyScreen)
        prompt = app.query_one(PromptInput)
        prompt.load_text("hello?")
        await pilot.press("enter")
        await until(pilot, lambda: app.conversation.query(NoticeEntry), "the notice")
        assert prompt.text == "hello?"  # kept, to send once a key is set
        notices = [plain(n) for n in app.conversation.query(NoticeEntry)]
        assert any("No API key" in n for n in notices)
        assert "no API key" in str(app.query_one("#status").content)
        await until(pilot, app.ready, "the session to open")
        assert app.session.main.messages == []  # nothing was sent, so nothing is half-sent


async def test_command_palette_lists_the_apps_actions_and_themes(server, tui):
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Interrupt", "Side panel", "Transcript", "/help", "/compact", "Theme", "Quit"):
            assert wanted in titles
        assert app.theme == "agentcli"
        assert {"agentcli", "textual-dark", "nord"} <= set(app.available_themes)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"


def test_first_screen_is_drawn_before_the_sdk_is_imported(repo, tmp_path):
    script = tmp_path / "first_paint.py"
    script.write_text(
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from agentcli.config import Settings\n"
        "from agentcli.ui.tui.app import RESUME_WIDGETS, make_app\n"
        "assert 'anthropic' not in sys.modules, 'importing the TUI imported the SDK'\n"
        "async def main():\n"
        f"    app = make_app(Settings().engine(), Path({str(repo)!r}), testing=True)\n"
        "    async with app.run_test() as pilot:\n"
        "        deadline = asyncio.get_running_loop().time() + 60\n"
        "        while app.first_paint_without_sdk is None:\n"
        "            assert asyncio.get_running_loop().time() < deadline, 'the first paint never happened'\n"
        "            await pilot.pause(0.01)\n"
        "        print('first paint without sdk:', app.first_paint_without_sdk)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=110, cwd=str(repo))
    assert done.returncode == 0, done.stderr
    assert "first paint without sdk: True" in done.stdout


async def test_a_retried_answer_replaces_the_text_streamed_before_the_error(server, tui):
    server.script(
        stream_error(
            "overloaded_error",
            "Overloaded",
            after_events=6,
            base=text("This first try breaks off in the middle of the sentence."),
        ),
        text("The second try arrives whole."),
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "hello")
        assert [plain(a) for a in app.conversation.query(AssistantEntry)] == ["The second try arrives whole."]
        warnings = [n for n in app.conversation.query(NoticeEntry) if "-warning" in n.classes]
        assert warnings  # the retry is said, once
    server.assert_no_rejections()


async def test_a_long_resumed_conversation_draws_only_its_latest_part(server, make_session):
    from agentcli.core.events import AssistantMessage, UserMessage

    session, _ = make_session()
    session.restored_events = [
        event
        for n in range(300)
        for event in (
            UserMessage(content=[{"type": "text", "text": f"question {n}"}]),
            AssistantMessage(content=[{"type": "text", "text": f"answer {n}"}]),
        )
    ]
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        children = list(app.conversation.children)
        assert isinstance(children[0], PrunedMarker)
        assert len(children) <= RESUME_WIDGETS + 1
        assert plain(children[-1]) == "answer 299"


async def test_an_edit_is_approved_from_its_diff(server, tui, repo):
    server.script(
        tool_use("read_file", {"path": "README.md"}),  # edits need a read first
        tool_use("edit_file", {"path": "README.md", "old_string": "# Demo app", "new_string": "# Demo application"}),
        text("Renamed."),
    )
    app = tui(interactive=True)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Rename the app in the README")
        await until(pilot, lambda: approval_shown(app), "the approval request")
        shown_input = plain(app.screen.query_one("#approval-input"))
        assert "README.md\n@@ -1,3 +1,3 @@\n-# Demo app\n+# Demo application\n \n A tiny app" in shown_input
        await pilot.press("y")
        await until(pilot, lambda: not app.busy, "the end of the turn")
        assert plain(app.conversation.query(ToolCallEntry).last()).startswith("edit_file  README.md  +1 −1  ✓")
    assert (repo / "README.md").read_text().startswith("# Demo application\n")


async def test_quitting_mid_answer_saves_a_session_that_resumes_validly(server, make_session):
    from agentcli.ui.tui.resume import open_session

    server.script(
        text(" ".join(f"word{i}" for i in range(200)), stall_after_events=8, stall_seconds=600),
        text("Picked up again."),
    )
    session, _ = make_session(interactive=True)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Tell me a long story")
        await until(pilot, lambda: app.conversation.streaming, "the answer to stream")
        await pilot.press("ctrl+q")
    resumed, _ = open_session(session.settings, session.workspace.root, llm=session.llm, resume=session.id)
    app = make_app(resumed.settings, resumed.workspace.root, session=resumed, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "you Tell me a long story" in shown(app.conversation)
        await answer(pilot, "Go on")
        assert plain(list(app.conversation.query(AssistantEntry))[-1]) == "Picked up again."
    server.assert_no_rejections()


async def test_typing_while_the_panel_has_focus_goes_to_the_input(server, tui):
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}), text("Done."))
    server.when(is_child, text("It is in src/app/auth.py:9."))
    app = tui()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await answer(pilot, "Find auth through a subagent")
        app.clear_notifications()
        app.panel.focus_newest()
        await pilot.pause()
        assert isinstance(app.focused, EntryTitle)
        assert "x" not in app.active_bindings  # finished: the footer offers no "x Cancel"
        await pilot.press("x")  # the entry's own key, on purpose: nothing to cancel, and it says so
        await until(pilot, lambda: app._notifications, "a word on why x does nothing")
        assert app.query_one(PromptInput).text == ""
        assert "already finished" in "".join(n.message for n in app._notifications)
        await pilot.press("h", "i")
        assert app.query_one(PromptInput).text == "hi" and app.query_one(PromptInput).has_focus


async def test_agents_keeps_the_focus_in_the_input_and_typed_x_never_cancels(server, tui):
    gate = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}), text("Done."))
    server.when(
        is_child,
        tool_use("grep", {"pattern": "handle_auth"}, gate=gate, gate_timeout=120),
        text("It is in src/app/auth.py:9."),
    )
    app = tui()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        prompt = app.query_one(PromptInput)
        await send(pilot, "Find auth through a subagent")
        await until(pilot, lambda: "sa-1" in app.subagents and app.subagents["sa-1"].turn == 1, "the child")
        await send(pilot, "/agents")
        assert app.panel.is_open and prompt.has_focus
        assert "tab on an empty input" in plain(list(app.conversation.query(ReportEntry))[-1])
        await pilot.press("x", "y")  # typed, with the panel open: text
        assert prompt.text == "xy"
        prompt.clear()
        await pilot.press("f", "i")
        app.panel.focus_newest()  # the focus lands on the entry while the user is typing
        await pilot.pause()
        await pilot.press("x", "space", "i", "t")
        assert prompt.text == "fix it" and prompt.has_focus
        assert app.subagents["sa-1"].status == "running"
        prompt.clear()
        await pilot.press("tab")  # to the entry, on purpose (tab on the empty input)
        assert isinstance(app.focused, EntryTitle)
        await pilot.press("x")
        await until(pilot, lambda: app.subagents["sa-1"].finished, "the cancel")
        assert app.subagents["sa-1"].status == "cancelled" and prompt.text == ""
        # The main agent goes on ("Done."): leaving before its turn ends let its TurnEnded reach an app Pilot was
        # already taking apart (ScreenStackError, seen once under load), as in test_receipt_marks.py.
        await until(pilot, lambda: not app.busy, "the main agent's turn to end")
    gate.set()


async def test_typed_text_and_enter_send_even_when_a_tool_line_has_the_focus(server, tui):
    server.script(tool_use("grep", {"pattern": "handle_auth"}), text("Found it."), text("Sent."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "grep for handle_auth")
        call = app.conversation.query_one(ToolCallEntry)
        await pilot.press(*"fix it")
        call.focus()  # the focus lands on the tool line while the user types
        await pilot.pause()
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and len(app.conversation.query(AssistantEntry)) == 2, "the answer")
        assert call.collapsed
        assert "you fix it" in shown(app.conversation)
        assert app.query_one(PromptInput).has_focus
        call.focus()  # moved there on purpose, with nothing typed since
        await pilot.pause()
        await pilot.press("enter")
        assert not call.collapsed


async def test_ctrl_c_interrupts_the_turn_then_clears_the_input_then_quits(server, tui):
    server.script(text(" ".join(f"word{i}" for i in range(300)), stall_after_events=8, stall_seconds=600))
    app = tui()
    hold_the_quit_window(app)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Tell me a long story")
        await until(pilot, lambda: app.conversation.streaming, "the answer to stream")
        await pilot.press("ctrl+c")  # like esc: stop the answer, keep the app
        await until(pilot, lambda: not app.busy, "the interrupt")
        assert app.is_running
        assert any(plain(n).startswith("Interrupted.") for n in app.conversation.query(NoticeEntry))
        await pilot.press("a", "b", "ctrl+c")  # a draft, and nothing runs: clear it
        assert app.prompt.text == "" and app.is_running
        await pilot.press("ctrl+c")  # an empty input: only now does it ask for a second press
        await pilot.pause()
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_value == 0
    server.assert_no_rejections()


async def test_at_80_columns_entries_status_and_reports_keep_their_facts(server, tui):
    gate = threading.Event()
    server.when(
        is_main, tool_use("task", {"description": "Find where billing is handled", "prompt": "Find it."}), text("Done.")
    )
    server.when(is_child, tool_use("grep", {"pattern": "charge"}, gate=gate, gate_timeout=120), text("Nowhere."))
    app = tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "Find billing through a subagent")
        await until(pilot, lambda: "sa-1" in app.subagents and app.subagents["sa-1"].turn == 1, "the child")
        first_line = lambda: plain(app.panel.entries["sa-1"]).split("\n▶")[0]  # noqa: E731  (its title)
        # Layout settles over a few refreshes (more of them on a loaded machine): wait for it.
        # Two lines in a narrow panel: the id and the description (cut), then the state and the numbers.
        await until(
            pilot, lambda: first_line() == "● sa-1 Find where billin…\n    1/30 · 0 tok", "the entry line, cut to fit"
        )
        assert app.conversation.size.width >= 44  # the panel leaves the conversation room
        title = app.panel.entries["sa-1"].query_one(EntryTitle)
        assert title.size.height == 2
        entry, state = app.panel.entries["sa-1"], app.subagents["sa-1"]
        entry.show_times = True  # as outside tests: the time stays too
        assert entry.line(state, state.started + 3).plain.endswith("\n    1/30 · 0 tok · 3.0 s")
        status = app.query_one("#status")
        facts = str(status.content)
        assert "● working" in facts and "kept out 0" in facts and "ctx " in facts, facts
        assert len(facts) <= status.content_size.width
        reports = lambda: list(app.conversation.query(ReportEntry))  # noqa: E731
        await send(pilot, "/cost")
        await until(pilot, lambda: len(reports()) == 1, "the /cost report")
        report = plain(reports()[-1])
        assert "sa-1" in report and "total" in report and "kept out of main context" in report
        assert "…" not in report  # columns that do not fit go whole; no number is cut
        await send(pilot, "/agents")
        await until(pilot, lambda: len(reports()) == 2, "the /agents report")
        report = plain(reports()[-1])
        assert "general-purpose" in report and "● running" in report
        assert max(map(len, report.splitlines())) <= list(app.conversation.query(ReportEntry))[-1].outer_size.width
        assert f"sa-1 · general-purpose · {app.session.model}\n" in plain(entry)  # the model it runs on
        await send(pilot, "/export")  # a running child: its transcript so far, at the end
        exported = app.session.workspace.root / f"agentcli-{app.session.id}.md"
        await until(pilot, exported.exists, "the exported session")
        assert "## User\n\nFind billing through a subagent" in exported.read_text()
        assert (
            "<summary>Subagent sa-1 · general-purpose · " in exported.read_text()
            and " · running · " in exported.read_text()
        )
        await resize(pilot, 200, 40)
        await until(
            pilot,
            lambda: first_line().startswith("● sa-1 Find where billing is handled  1/30 0 tok "),
            "the wide entry line",
        )
        await until(pilot, lambda: "kept out of main context: 0 tokens" in str(status.content), "the wide status")
        gate.set()
        await until(pilot, lambda: not app.busy, "the turn to end")


async def test_sending_while_scrolled_up_jumps_to_the_bottom_and_follows(server, tui):
    server.script(text("\n\n".join(f"Paragraph {n}." for n in range(40))))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        for n in range(60):
            await app.conversation.add_notice(f"note {n}")
        await pilot.pause()
        app.conversation.scroll_home(animate=False)  # the user scrolls up to read
        await pilot.pause()
        assert app.conversation.scroll_y == 0
        await answer(pilot, "tell me more")
        conversation = app.conversation
        await until(
            pilot,
            lambda: 0 < conversation.max_scroll_y == conversation.scroll_y,
            "the view to follow the answer down to the bottom",
        )


async def test_api_retries_update_one_line_and_show_in_the_subagents_entry(server, tui):
    gate = threading.Event()

    def overloaded():
        return error(529, "overloaded_error", "Overloaded")

    server.when(
        is_main,
        overloaded(),
        overloaded(),
        overloaded(),
        tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}),
        text("Done."),
    )
    server.when(is_child, overloaded(), overloaded(), text("In src/app/auth.py.", gate=gate, gate_timeout=120))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Find auth through a subagent")
        await until(
            pilot,
            lambda: "sa-1" in app.subagents and app.subagents["sa-1"].retry == "retrying 2/8",
            "the child's second retry",
        )
        await pilot.pause()
        assert "● sa-1 Find auth\n    retrying 2/8 · 1/30 · 0 tok" in plain(app.panel.entries["sa-1"])  # tokens kept
        assert "retrying 2/8" in plain(app.conversation.query_one(TaskEntry))
        notes = [plain(n) for n in app.conversation.query(NoticeEntry) if "Retr" in plain(n)]
        assert notes == ["The API is overloaded or failing (529): Overloaded. Retried 3 times."]  # the call went
        gate.set()  # through: one line, updated in place, says so, and no "Retrying in 4 s" stays behind
        await until(pilot, lambda: not app.busy, "the answer")
        await pilot.pause()
        assert app.subagents["sa-1"].retry == ""
        assert "retrying" not in plain(app.panel.entries["sa-1"])
    server.assert_no_rejections()


async def test_enter_runs_a_command_whose_argument_is_optional_at_once(server, tui):
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        area, menu = app.prompt, app.query_one(Completions)
        await pilot.press(*"/model")
        await until(pilot, lambda: menu.showing, "command completions")
        await pilot.press("enter")  # the whole name typed: /model alone shows the model
        assert area.text == ""
        assert "The model is" in plain(list(app.conversation.query(NoticeEntry))[-1])
        await pilot.press(*"/perm")
        await until(pilot, lambda: menu.showing, "command completions")
        await pilot.press("enter")  # [MODE] is optional: it runs
        assert area.text == ""
        assert "Modes:" in plain(list(app.conversation.query(NoticeEntry))[-1])
        await pilot.press(*"/mo")
        await until(pilot, lambda: menu.showing, "command completions")
        await pilot.press("enter")  # only part of a command that takes a name: enter completes it
        assert area.text == "/model "


async def test_compaction_is_one_line_live_and_resumed_and_a_clear_shows_as_a_divider(server, make_session):
    from agentcli.core.events import Notice
    from agentcli.ui.tui.resume import open_session

    server.script(text("One."), text("Two."), text("The user said first and second."), text("Three."))
    session, _ = make_session(interactive=True)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "first")
        await answer(pilot, "second")
        await send(pilot, "/compact")
        await until(pilot, lambda: not app.busy, "compaction")
        await pilot.pause()
        lines = [plain(n) for n in app.conversation.query(NoticeEntry) if "compacted" in plain(n).lower()]
        assert len(lines) == 1 and lines[0].startswith("── compacted 3 older messages into a summary (asked for)")
        # As sessions saved before the engine dropped its own notice of compaction have it:
        session.emit(Notice(level="info", text="Compacted 3 older messages into a summary: about 1,000 → 100."))
        await send(pilot, "/clear")
        await answer(pilot, "third")
    resumed, _ = open_session(session.settings, session.workspace.root, llm=session.llm, resume=session.id)
    app = make_app(resumed.settings, resumed.workspace.root, session=resumed, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        body = shown(app.conversation)
        assert body.lower().count("compacted") == 1
        before, divider, after = body.partition("── /clear: the conversation started afresh")
        assert divider and "you second" in before and "you third" in after and "Three." in after
    server.assert_no_rejections()


async def test_the_no_key_window_fits_80_by_24(repo):
    app = make_app(Settings().engine(), repo, testing=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        window = app.screen.query_one("#no-key")
        assert app.screen.region.contains_region(window.region)  # the whole frame is on the screen
        assert window.max_scroll_y == 0  # and all of the text, without scrolling
        assert "agentcli --demo" in plain(app.screen.query_one("#no-key-text"))  # to try it first
        await resize(pilot, 60, 14)
        assert app.screen.region.contains_region(window.region)  # smaller still: it scrolls instead


async def test_one_escape_closes_the_transcript_and_only_the_next_interrupts(server, tui):
    gate = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}), text("Done."))
    server.when(is_child, tool_use("grep", {"pattern": "handle_auth"}, gate=gate, gate_timeout=120), text("Found."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Find auth through a subagent")
        await until(pilot, lambda: "sa-1" in app.subagents and app.subagents["sa-1"].turn == 1, "the child")
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TranscriptScreen)
        assert app.busy and app.subagents["sa-1"].status == "running"  # closed, and nothing interrupted
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, "the interrupt")
    gate.set()


async def test_esc_puts_the_queue_back_before_a_draft_and_loses_neither(server, tui):
    gate = threading.Event()
    server.script(text("First answer.", gate=gate, gate_timeout=120), text("Later."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await until(pilot, lambda: len(server.requests) == 1, "the first request")
        await send(pilot, "queued words")
        app.prompt.load_text("a draft")  # typed but not sent when esc comes
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, "the interrupt")
        assert not app.turns.queued and app.prompt.text == "queued words\na draft"
    gate.set()


async def test_a_message_sent_while_the_agent_works_is_queued_then_sent(server, tui):
    first, third = threading.Event(), threading.Event()
    server.script(
        text("First answer.", gate=first, gate_timeout=120),
        text("Second answer."),
        text("Third answer.", gate=third, gate_timeout=120),
        text("Fourth answer."),
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await until(pilot, lambda: len(server.requests) == 1, "the first request")
        await send(pilot, "second")  # the agent is busy: it waits in the queue, in sight
        assert app.busy and app.turns.queued == ["second"]
        assert plain(app.queued).startswith("queued second")
        first.set()
        await until(pilot, lambda: len(app.conversation.query(AssistantEntry)) == 2 and not app.busy, "both")
        body = shown(app.conversation)
        assert body.index("First answer.") < body.index("you second") < body.index("Second answer.")
        assert not app.turns.queued and not app.queued.display
        await send(pilot, "third")
        await until(pilot, lambda: len(server.requests) == 3, "the third request")
        await send(pilot, "fourth")
        await pilot.press("escape")  # interrupts, and takes the queue back into the input
        await until(pilot, lambda: not app.busy, "the interrupt")
        assert not app.turns.queued and app.prompt.text == "fourth"
        assert len(server.requests) == 3
        app.prompt.focus()
        await pilot.press("enter")  # only now is it sent: the next request is the first to carry it
        await until(pilot, lambda: not app.busy and "Fourth answer." in shown(app.conversation), "the fourth answer")
        [after] = server.requests[3:]  # one request more, and it is the first to carry "fourth"
        assert last_user_text(after).endswith("fourth")
    third.set()


async def test_a_long_diffs_approval_keeps_its_answers_on_an_80_by_24_screen(server, tui, repo):
    """The diff of a long edit filled the box and pushed the buttons below its bottom, out of sight; the answers
    keep the box's bottom now, and the diff is what gets cut."""
    lines = "".join(f"line {n}\n" for n in range(60))
    (repo / "long.txt").write_text(lines)
    server.script(
        tool_use("read_file", {"path": "long.txt"}),
        tool_use("write_file", {"path": "long.txt", "content": lines.replace("line", "LINE")}),
        text("Done."),
    )
    app = tui(interactive=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "Shout every line")
        await until(pilot, lambda: approval_shown(app), "the approval request")
        modal = app.screen
        screen = modal.region
        for answer in ("#allow_once", "#deny"):
            button = modal.query_one(answer)
            assert screen.contains_region(button.region) and button.region.height > 0, (answer, button.region)
        await pilot.press("n")
        await until(pilot, lambda: not app.busy, "the end of the turn")
    assert (repo / "long.txt").read_text() == lines
