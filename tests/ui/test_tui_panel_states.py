"""The panel and the conversation as a new user found them: cancelling, stalls, focus, modes, the working
line, /resume, a message typed without a key, the transcript's first screen, and the context bars."""

from __future__ import annotations

import threading

from textual.content import Content
from textual.widgets import OptionList, Static

from agentcli.config import Settings
from agentcli.ui.tui import controls
from agentcli.ui.tui.app import AgentApp, make_app
from agentcli.ui.tui.screens.sessions import SessionPicker
from agentcli.ui.tui.screens.transcript import TranscriptScreen
from agentcli.ui.tui.widgets.entries import NoticeEntry, ReportEntry
from agentcli.ui.tui.widgets.prompt import PromptInput
from agentcli.ui.tui.widgets.side_panel import EntryTitle, SubagentEntry
from agentcli.ui.tui.widgets.status_bar import StatusBar
from agentcli.ui.tui.widgets.working import WAITING
from tests import waiting
from tests.fakes.anthropic_server import first_user_text, reply, text, tool_use, tool_use_block
from tests.narrow import of
from tests.ui.test_tui_support import SIZE, USAGE, answer, is_child, is_main, plain, send, until


def entry_line(app: AgentApp, agent_id: str) -> str:
    """The entry's title: one line, or two in a narrow panel."""
    return of(Content, app.query_one(f"#entry-{agent_id}", SubagentEntry).title).plain


def header(app: AgentApp) -> str:
    return of(Content, app.screen.query_one("#transcript-header", Static).content).plain


def toasts(app: AgentApp) -> str:
    return "\n".join(n.message for n in app._notifications)


async def test_cancelling_shows_at_once_and_x_on_a_finished_entry_says_why(server, tui):
    hold, summary = threading.Event(), threading.Event()
    server.when(is_main, tool_use("task", {"description": "Slow one", "prompt": "Slow errand"}), text("Reported."))
    server.when(
        lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"},
        text("Partial: looked in src/ only.", gate=summary, gate_timeout=120),
    )
    server.when(is_child, tool_use("grep", {"pattern": "x"}), text("never sent", gate=hold, gate_timeout=120))
    app = tui()
    try:
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await send(pilot, "one slow errand")
            await until(pilot, lambda: "sa-1" in app.subagents and app.subagents["sa-1"].turn == 2, "the child")
            await pilot.press("tab")  # on the empty input: to the panel
            assert isinstance(app.focused, EntryTitle)
            await pilot.press("x")
            await until(pilot, lambda: "cancelling…" in entry_line(app, "sa-1"), "the entry to say cancelling")
            assert not app.subagents["sa-1"].finished  # the summary has not come back: no toast needed
            await pilot.press("ctrl+o")
            await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript")
            assert header(app).split("\n")[1].startswith("cancelling…")
            summary.set()
            await until(pilot, lambda: app.subagents["sa-1"].finished, "the cancel to finish")
            await until(pilot, lambda: "cancelled" in header(app), "the header to say cancelled")
            assert "summarized" in header(app)
            await pilot.press("x")  # on the transcript of a finished child
            await until(pilot, lambda: "already finished (cancelled)" in toasts(app), "a word on why")
            await pilot.press("escape")
            await until(pilot, lambda: not app.busy, "the turn to end")
            app.clear_notifications()
            app.panel.focus_newest()
            app.prompt.typing = False
            await pilot.pause()
            await pilot.press("x")  # on the finished entry
            await until(pilot, lambda: "nothing to cancel" in toasts(app), "a word on why, from the panel")
            assert app.prompt.text == ""
    finally:
        hold.set()
        summary.set()


async def test_focus_lands_on_the_newest_running_entry_and_ctrl_t_moves_there(server, tui):
    gate = threading.Event()
    server.when(
        is_main,
        reply(
            "Three.",
            *[tool_use_block("task", {"description": f"Errand {n}", "prompt": f"E{n}"}) for n in (1, 2, 3)],
            usage=USAGE,
        ),
        text("Done.", usage=USAGE),
    )
    server.when(lambda b: first_user_text(b) == "E3", text("Quick.", usage=USAGE))
    for slow in ("E1", "E2"):
        server.when(lambda b, slow=slow: first_user_text(b) == slow, text("Slow.", gate=gate, gate_timeout=120))
    app = tui()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "three errands")
            await until(
                pilot,
                lambda: (
                    "sa-3" in app.subagents
                    and app.subagents["sa-3"].finished
                    and app.subagents["sa-2"].status == "running"
                ),
                "sa-3 done while sa-1 and sa-2 run",
            )
            await pilot.press("tab")
            assert app.panel.focused_id() == "sa-2"  # the newest running one, not sa-3 on top nor sa-1
            await pilot.press("ctrl+t")  # from inside the panel: it hides, the input has the focus
            assert not app.panel.is_open and app.prompt.has_focus
            await pilot.press("ctrl+t")
            assert app.panel.is_open and app.prompt.has_focus
            await pilot.press("ctrl+t")  # open: to the panel
            assert app.panel.focused_id() == "sa-2"
            gate.set()
            await until(pilot, lambda: not app.busy, "the turn to end")
    finally:  # a failed check above leaves the children waiting
        gate.set()


async def test_shift_tab_cycles_the_permission_modes_shown_in_the_status_bar(server, tui):
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        seen = []
        for _ in range(3):
            await pilot.press("shift+tab")
            seen.append(app.session.permissions.mode)
            assert app.prompt.has_focus  # it does not move the focus
            assert app.session.permissions.mode in app.query_one(StatusBar).content.plain or seen[-1] == "default"
        assert seen == ["acceptEdits", "plan", "default"]


async def test_a_stalled_child_is_flagged_in_its_entry(server, tui):
    gate = threading.Event()
    server.when(is_main, tool_use("task", {"description": "Stuck one", "prompt": "Stuck errand"}), text("Done."))
    server.when(is_child, text("Late.", gate=gate, gate_timeout=120))  # the stand-in stays silent
    app = tui(subagent_stall_seconds=0.05)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "a stuck errand")
            await until(
                pilot, lambda: "sa-1" in app.subagents and app.subagents["sa-1"].status == "running", "the child to run"
            )

            async def redraw() -> None:  # the once-a-second redraw, which tests leave off
                await pilot.pause(0.02)
                await app.tick()

            await waiting.until(lambda: "no progress for" in entry_line(app, "sa-1"), "the stall flag", step=redraw)
            assert "no progress for" in app.query_one("#entry-sa-1", SubagentEntry).state.state(
                app.clock(), app.view.stall_after
            )
            gate.set()
            await until(pilot, lambda: not app.busy, "the turn to end")
            await app.tick()
            assert "no progress" not in entry_line(app, "sa-1")
    finally:
        gate.set()


async def test_the_working_line_says_when_the_server_has_not_begun_its_reply(server, tui):
    """Held before its status and headers (a gate), the reply has not begun: the working line says so, not just
    "↓ 0 tokens"; once it streams, the hint goes, though the turn goes on (the stream then goes silent)."""
    gate = threading.Event()
    server.script(
        text(
            " ".join(f"word{i}" for i in range(200)),
            gate=gate,
            gate_timeout=120,
            stall_after_events=8,
            stall_seconds=600,
        )
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        await until(pilot, lambda: WAITING in app.working.content.plain, "the hint on the working line")
        assert "esc to interrupt" in app.working.content.plain
        gate.set()
        await until(pilot, lambda: app.conversation.streaming, "the reply to stream")
        await until(pilot, lambda: WAITING not in app.working.content.plain, "the hint to go")
        assert app.busy and "esc to interrupt" in app.working.content.plain
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, "the interrupt")


async def test_the_working_line_shows_while_the_main_agent_waits_on_the_model(server, tui):
    gate = threading.Event()
    server.script(text("Here it is.", gate=gate, gate_timeout=120, usage=USAGE))
    app = tui()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello")
            await until(pilot, lambda: app.working.display and app.working.region.height == 1, "the working line")
            shown = app.working.content.plain  # the tokens so far, or (held before its headers) the wait
            assert "esc to interrupt" in shown and ("tokens" in shown or WAITING in shown)
            gate.set()
            await until(pilot, lambda: not app.busy, "the turn to end")
            assert not app.working.display or app.working.has_class("-idle")
    finally:
        gate.set()


async def test_a_message_typed_without_a_key_stays_in_the_input(repo):
    app = make_app(Settings().engine(), repo, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")  # the window on how to set a key
        await until(pilot, lambda: app.screen is app.screen_stack[0], "the main screen")
        prompt = app.query_one(PromptInput)
        prompt.focus()
        prompt.load_text("find the auth handler")
        await pilot.press("enter")
        await until(pilot, lambda: app.conversation.query(NoticeEntry), "the notice")
        assert prompt.text == "find the auth handler"


async def test_resume_opens_a_picker_and_quitting_says_how_to_come_back(server, tui, make_session):
    server.script(text("Earlier answer."), text("Now."))
    earlier, _ = make_session()
    await earlier.send("an earlier question")
    earlier.close()
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "a question now")
        await send(pilot, "/resume")
        await until(
            pilot,
            lambda: isinstance(app.screen, SessionPicker) and app.screen.query_one(OptionList).option_count,
            "the session picker",
        )
        options = app.screen.query_one(OptionList)
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == [earlier.id]
        await pilot.press("enter")
        await until(pilot, lambda: app.switch_to == earlier.id, "the pick")
    assert controls.goodbye(app.session) == (
        f"Session {app.session.id} is saved; resume it with: agentcli --resume {app.session.id}"
    )


async def test_the_transcript_opens_at_the_brief_and_end_jumps_to_the_latest(server, tui):
    lines = "\n".join(f"line {n}" for n in range(300))
    server.when(is_main, tool_use("task", {"description": "Long output", "prompt": "Read it all."}), text("Done."))
    server.when(is_child, tool_use("bash", {"command": f"printf '{lines}'"}), text("Read 300 lines."))
    app = tui(permission_mode="bypassPermissions")
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "delegate a long read")
        await pilot.press("ctrl+o")
        await until(
            pilot,
            lambda: isinstance(app.screen, TranscriptScreen) and app.screen.conversation.max_scroll_y > 0,
            "a transcript longer than the screen",
        )
        await pilot.pause()
        conversation = app.screen.conversation
        assert conversation.scroll_y == 0  # the brief is on screen
        await pilot.press("end")
        await until(pilot, lambda: conversation.scroll_y == conversation.max_scroll_y > 0, "the latest output")


async def test_context_bars_in_cost_and_the_panel_header(server, tui):
    child_usage = {"input_tokens": 40_000, "output_tokens": 100}
    server.when(
        is_main,
        tool_use("task", {"description": "Big read", "prompt": "Read a lot."}, usage=USAGE),
        text("Done.", usage=USAGE),
    )
    server.when(is_child, text("Found it.", usage=child_usage))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "delegate")
        await send(pilot, "/cost")
        report = plain(list(app.conversation.query(ReportEntry))[-1])
        assert "with subagents" in report and "without subagents" in report
        assert "1.2k" in report.split("with subagents")[1].splitlines()[0]  # the main context: 1,200 tokens
        assert "41.2k" in report.split("without subagents")[1].splitlines()[0]  # plus the child's 40,000
        bars = app.query_one("#panel-context", Static)
        shown = bars.render().plain
        assert bars.display and "41.2k" in shown and "1.2k" in shown


async def test_at_80_by_24_the_panel_is_narrower_and_its_bars_show_while_the_first_child_runs(server, tui):
    """At 80x24 the panel took 34 columns and its bars were 4 cells wide, and they were hidden until a child's
    first call had reported what its context held."""
    gate = threading.Event()
    server.when(
        is_main,
        tool_use("task", {"description": "Big read", "prompt": "Read a lot."}, usage=USAGE),
        text("Done.", usage=USAGE),
    )
    server.when(is_child, text("Found it.", usage={"input_tokens": 40_000, "output_tokens": 100}, gate=gate))
    app = tui()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await send(pilot, "delegate")
            await until(pilot, lambda: app.panel.entries, "the child's entry")
            bars = app.query_one("#panel-context", Static)
            await until(pilot, lambda: bars.display and "with" in bars.render().plain, "the bars, while it runs")
            assert app.panel.size.width <= 31
            gate.set()
            await until(pilot, lambda: not app.busy, "the turn to end")
            await pilot.pause()
            [with_row, without_row] = bars.render().plain.splitlines()
            assert with_row.startswith("with ") and without_row.startswith("without ")
            assert without_row.count("█") + without_row.count("░") >= 8, without_row  # a bar, not 4 cells
    finally:
        gate.set()
