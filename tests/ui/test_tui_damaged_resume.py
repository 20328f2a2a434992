"""The full-screen app resumes a damaged session: the bad records are skipped with one warning each."""

from __future__ import annotations

from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.resume import open_session
from agentcli.ui.tui.widgets.entries import NoticeEntry
from tests.fakes.anthropic_server import text
from tests.ui.test_tui_support import SIZE, answer, plain, shown, until

BAD_TURN = '{"type": "turn_started", "agent_id": "main", "turn": "abc"}'
BAD_OUTPUT = (
    '{"type": "tool_call_finished", "agent_id": "main", "id": "toolu_x", "name": "grep", "output": 17, '
    '"is_error": false, "seconds": 0.1}'
)


async def test_a_damaged_session_resumes_in_the_app_with_one_warning_per_bad_record(server, make_session):
    server.script(text("One."), text("Two."), text("Three."))
    session, _ = make_session(interactive=True)
    await session.send("first")
    session.clear()  # the app reads the file again for a /clear: that reader must skip the same lines
    await session.send("second")
    session.close()
    path = session.store.main_path
    with path.open("a") as f:
        f.write(f"{BAD_TURN}\n{BAD_OUTPUT}\n")
    count = len(path.read_text().splitlines())

    resumed, opened = open_session(session.settings, session.workspace.root, llm=session.llm, resume=session.id)
    app = make_app(resumed.settings, resumed.workspace.root, session=resumed, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.conversation.query(NoticeEntry), "the warnings")
        notices = [plain(n) for n in app.conversation.query(NoticeEntry)]
        for line in (count - 1, count):
            assert sum(f"Skipped line {line} of {path}" in n for n in notices) == 1, notices
        body = shown(app.conversation)
        before, divider, after = body.partition("── /clear: the conversation started afresh")
        assert divider and "One." in before and "you second" in after and "Two." in after
        await answer(pilot, "third")
        assert "Three." in shown(app.conversation)
    server.assert_no_rejections()
