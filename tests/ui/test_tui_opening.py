"""The session opens after the first screen: what is drawn before it, what the user sends meanwhile (kept and
sent in order once it is open), a resumed conversation drawn once it is open, and a session that cannot open."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.config import Settings
from agentcli.core.model.llm import LLM, Credentials
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.opening import Opening
from agentcli.ui.tui.widgets.answer import AssistantEntry
from agentcli.ui.tui.widgets.entries import NoticeEntry, ReportEntry, UserEntry
from agentcli.ui.tui.widgets.prompt import PromptInput
from tests.conftest import API_KEY
from tests.fakes.anthropic_server import last_user_text, text
from tests.ui.test_tui_support import SIZE, plain, send, until
from tests.waiting import DEADLINE


@dataclass(frozen=True)
class HeldOpening(Opening):
    """Opens the session only once ``gate`` is set: the test decides when the engine is ready."""

    gate: threading.Event = field(default_factory=threading.Event)

    def open(self, post):
        assert self.gate.wait(DEADLINE), "the test never let the session open"
        return super().open(post)


def llm_for(server) -> LLM:
    return LLM(
        model=Settings().model,
        retry_base_delay=0.01,
        retry_max_delay=0.05,
        credentials=Credentials(api_key=API_KEY, base_url=server.base_url),
    )


def held_app(server, root: Path, **options):
    app = make_app(Settings().engine(), root, llm=llm_for(server), testing=True, **options)
    app.opening = HeldOpening(
        app.opening.settings, root, llm=app.opening.llm, resume=app.opening.resume, continue_=app.opening.continue_
    )
    return app


async def test_what_is_sent_before_the_session_opens_waits_then_goes_out_in_order(server, repo):
    server.script(text("First answer."), text("Second answer."))
    app = held_app(server, repo)
    async with app.run_test(size=SIZE) as pilot:
        welcome = [plain(n) for n in app.conversation.query(NoticeEntry)]
        assert any("ask about the code" in n for n in welcome)  # the first screen needs no session
        assert not app.ready()
        await send(pilot, "/help")
        await send(pilot, "first question")
        await send(pilot, "second question")
        assert not app.ready() and app.turns.queued == ["/help", "first question", "second question"]
        assert server.requests == []  # nothing could have gone out: there is no session yet
        app.opening.gate.set()
        await until(pilot, lambda: len(server.requests) == 2 and not app.busy, "both answers")
        await pilot.pause()
        assert app.conversation.query(ReportEntry)  # the command ran
        assert [last_user_text(r) for r in server.requests] == ["first question", "second question"]
        assert [plain(a) for a in app.conversation.query(AssistantEntry)] == ["First answer.", "Second answer."]
        assert not app.turns.queued
    server.assert_no_rejections()


async def test_esc_before_the_session_opens_takes_the_waiting_message_back(server, repo):
    app = held_app(server, repo)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "changed my mind")
        assert app.turns.queued == ["changed my mind"]
        await pilot.press("escape")
        prompt = app.query_one(PromptInput)
        await until(pilot, lambda: prompt.text == "changed my mind", "the message back in the input")
        app.opening.gate.set()
        await until(pilot, app.ready, "the session to open")
        await pilot.pause()
        assert server.requests == [] and not app.busy


async def test_continue_draws_the_earlier_conversation_once_the_session_is_open(server, repo, make_session):
    server.script(text("Earlier answer."))
    earlier, _ = make_session()
    await earlier.send("an earlier question")
    earlier.close()
    app = held_app(server, repo, continue_=True)
    async with app.run_test(size=SIZE) as pilot:
        assert not any("ask about the code" in plain(n) for n in app.conversation.query(NoticeEntry))
        app.opening.gate.set()
        await until(pilot, app.ready, "the session to open and show what it holds")
        assert app.session.id == earlier.id
        assert [plain(u) for u in app.conversation.query(UserEntry)] == ["you an earlier question"]
        assert plain(app.conversation.query_one(AssistantEntry)) == "Earlier answer."
        assert not any("ask about the code" in plain(n) for n in app.conversation.query(NoticeEntry))


async def test_a_session_that_cannot_open_closes_the_app_with_one_sentence(server, repo):
    app = make_app(Settings().engine(), repo, llm=llm_for(server), resume="no-such-session", testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.open_error, "the opening error")
    assert app.return_value == 1
    assert "\n" not in app.open_error and "no-such-session" in app.open_error


async def test_quitting_while_the_session_opens_still_closes_it(server, repo):
    app = held_app(server, repo)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.opener is not None, "the opening to start")
        app.exit(0)
        app.opening.gate.set()
    assert app.session is not None  # the app waited for it, and closed it (on_unmount)
