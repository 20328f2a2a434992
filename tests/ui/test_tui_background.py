"""The full-screen app with background and resumed subagents, under Pilot against the stand-in server."""

from __future__ import annotations

import threading

from agentcli.core.events import SubagentFinished
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.resume import open_session
from agentcli.ui.tui.screens.quit import QuitScreen
from agentcli.ui.tui.screens.transcript import TranscriptScreen
from agentcli.ui.tui.widgets.answer import AssistantEntry
from agentcli.ui.tui.widgets.prompt import PromptInput
from tests.fakes.anthropic_server import first_user_text, last_user_text, message_text, text, tool_use
from tests.narrow import of
from tests.ui.test_tui_support import SIZE, answer, is_child, is_main, plain, send, shown, until


def background(description, prompt):
    return tool_use("task", {"description": description, "prompt": prompt, "run_in_background": True})


def main_requests(server):
    return [b for b in server.requests if is_main(b)]


def answers(app):
    return [plain(a) for a in app.conversation.query(AssistantEntry)]


async def test_a_result_arriving_while_idle_starts_a_turn_by_itself(server, tui):
    release = threading.Event()
    server.when(
        is_main,
        background("Find auth", "Find where auth is handled."),
        text("Started it."),
        text("The child says auth is in auth.py."),
    )
    server.when(is_child, text("Auth is in src/app/auth.py.", gate=release, gate_timeout=120))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "look for auth in the background")
        assert answers(app) == ["Started it."]
        assert app.subagents["sa-1"].background and not app.subagents["sa-1"].finished
        app.query_one(PromptInput).load_text("a draft")
        release.set()
        await until(
            pilot,
            lambda: "The child says auth is in auth.py." in answers(app) and not app.busy,
            "the turn that reads the result",
        )
        conversation = shown(app.conversation)
        assert conversation.index("↳ sa-1 done · its result reached the main agent · Find auth") < conversation.index(
            "The child says auth is in auth.py."
        )
        assert "Auth is in src/app/auth.py." in last_user_text(main_requests(server)[-1])
        assert app.query_one(PromptInput).text == "a draft"  # the user's typing is untouched
        assert app.view.results_waiting == []
    server.assert_no_rejections()


async def test_a_result_arriving_while_busy_joins_the_turn_and_esc_spares_the_child(server, tui):
    child_done, hold_main = threading.Event(), threading.Event()
    server.when(
        is_main,
        background("Find auth", "Find where auth is handled."),
        text("never shown", gate=hold_main, gate_timeout=120),
        tool_use("read_file", {"path": "README.md"}, gate=child_done, gate_timeout=120),
        text("README read; auth is in auth.py."),
    )
    server.when(is_child, text("Auth is in src/app/auth.py.", gate=hold_main, gate_timeout=120))
    app = tui()
    app.session.subscribe(lambda e: child_done.set() if isinstance(e, SubagentFinished) else None)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "auth in the background")
        await until(pilot, lambda: len(main_requests(server)) == 2, "the main agent's second call")
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, "the interrupt")
        assert app.subagents["sa-1"].status == "running"  # esc stopped the main turn only
        await send(pilot, "now read the README")
        hold_main.set()
        await until(pilot, lambda: "README read; auth is in auth.py." in answers(app) and not app.busy, "the answer")
        last = main_requests(server)[-1]["messages"][-1]
        assert last["content"][0]["type"] == "tool_result" and "Auth is in src/app/auth.py." in message_text(last)
        assert "↳ sa-1 done" in shown(app.conversation)
    server.assert_no_rejections()


async def test_stop_cancels_children_and_quitting_with_one_running_asks_first(server, tui):
    hold = threading.Event()
    server.when(
        is_main,
        background("Endless", "Search forever."),
        text("Started."),
        text("It was stopped."),
        background("Again", "Search again."),
        text("Started again."),
    )
    server.when(lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"}, text("Looked at one glob."))
    server.when(
        is_child,
        tool_use("glob", {"pattern": "*"}),
        text("never", gate=hold, gate_timeout=120),
        text("never", gate=hold, gate_timeout=120),
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "search forever in the background")
        await until(pilot, lambda: len([b for b in server.requests if is_child(b)]) == 2, "the child's 2nd call")
        await send(pilot, "/stop")
        await until(pilot, lambda: "It was stopped." in answers(app) and not app.busy, "the turn on the summary")
        assert "Cancelling sa-1; each sends the main agent a summary" in shown(app.conversation)
        assert "Looked at one glob." in last_user_text(main_requests(server)[-1])
        await answer(pilot, "search again in the background")
        await until(
            pilot,
            lambda: any(first_user_text(b) == "Search again." for b in server.requests),
            "the second child's call",
        )
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitScreen), "the question")
        assert "sa-2 is still running. Quit anyway?" in plain(app.screen.query_one("#quit"))
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, QuitScreen), "the question to close")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitScreen), "the question again")
        await pilot.press("y")
    hold.set()
    assert app.session.subagents.records["sa-2"].status == "interrupted"


async def test_a_resumed_child_is_one_panel_entry_with_a_new_run_live_and_after_continue(server, make_session):
    server.when(
        is_main,
        tool_use("task", {"description": "Find login", "prompt": "Where is login defined?"}),
        text("In auth.py."),
        tool_use("task", {"description": "Callers", "prompt": "Who calls it?", "resume": "sa-1"}),
        text("views.py calls it."),
        tool_use("task", {"description": "More", "prompt": "And handle_auth?", "resume": "sa-1"}),
        text("Both in auth.py."),
    )
    server.when(
        is_child,
        text("login is at src/app/auth.py:4."),
        text("src/app/views.py imports login."),
        text("handle_auth is at src/app/auth.py:9."),
    )
    session, _ = make_session(interactive=True)
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "find login")
        await answer(pilot, "who calls it?")
        assert list(app.panel.entries) == ["sa-1"] and app.subagents["sa-1"].segment == 2
        assert app.subagents["sa-1"].turn == 2
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript")
        text_shown = shown(of(TranscriptScreen, app.screen).conversation)
        assert (
            text_shown.index("login is at src/app/auth.py:4.")
            < text_shown.index("── resumed (Callers)")
            < text_shown.index("Who calls it?")
            < text_shown.index("src/app/views.py imports login.")
        )
    session.close()
    resumed, _ = open_session(session.settings, session.workspace.root, llm=session.llm, continue_=True)
    app = make_app(resumed.settings, resumed.workspace.root, session=resumed, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "and handle_auth?")
        assert answers(app)[-1] == "Both in auth.py."
        assert list(app.panel.entries) == ["sa-1"] and app.subagents["sa-1"].segment == 3
    child = [b for b in server.requests if is_child(b)][-1]
    assert first_user_text(child) == "Where is login defined?" and last_user_text(child) == "And handle_auth?"
    server.assert_no_rejections()
