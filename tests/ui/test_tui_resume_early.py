"""A resumed session's latest part is drawn from its file before the engine opens it (tui/preview.py), kept
once the session is open, and drawn afresh if the file changed meanwhile; code blocks are coloured a frame
after they are first drawn."""

from __future__ import annotations

import json

from agentcli.core.storage.store import find_session
from agentcli.ui.tui.widgets.answer import AssistantEntry, LateFence
from agentcli.ui.tui.widgets.entries import PrunedMarker, UserEntry
from tests.fakes.anthropic_server import text
from tests.ui.test_tui_opening import held_app
from tests.ui.test_tui_support import plain, until

SMALL = (80, 14)  # a short screen: five exchanges are more than its first draw shows
CODE = "```python\ndef expire(self, now):\n    return now - self.stamp > self.ttl\n```"


async def _saved(server, make_session, exchanges: int = 5) -> str:
    server.script(*(text(f"Answer {n}.\n\n{CODE}" if n == exchanges - 1 else f"Answer {n}.") for n in range(exchanges)))
    earlier, _ = make_session()
    for n in range(exchanges):
        await earlier.send(f"question {n}")
    earlier.close()
    return earlier.id


def _questions(app) -> list[str]:
    return [plain(u) for u in app.conversation.query(UserEntry)]


async def test_the_latest_part_shows_before_the_session_opens_and_stays_once_it_is_open(server, repo, make_session):
    session_id = await _saved(server, make_session)
    app = held_app(server, repo, resume=session_id)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert not app.ready()  # the engine has not opened it: this came from the file's tail
        view = app.conversation
        assert isinstance(view.children[0], PrunedMarker)
        assert _questions(app)[-1] == "you question 4"
        assert plain(view.query(AssistantEntry).last()).startswith("Answer 4.")
        # the first frame holds what likely fills the screen; the rest of the screenful follows, above it,
        # the view staying at the bottom
        await until(pilot, lambda: _questions(app)[:1] == ["you question 1"], "the rest drawn above")
        await until(
            pilot, lambda: view.max_scroll_y > 0 and view.scroll_y == view.max_scroll_y, "the view still at the bottom"
        )
        early = list(view.children)
        app.opening.gate.set()
        await until(pilot, app.ready, "the session to open")
        await pilot.pause()
        assert list(view.children) == early  # the same widgets: nothing drawn twice
        for _ in range(10):  # scrolling back draws the earlier turns, from the session
            if not view.query(PrunedMarker):
                break
            drawn = len(view.children)
            view.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            view.scroll_home(animate=False, immediate=True)
            await until(
                pilot,
                lambda: len(view.children) > drawn or not view.query(PrunedMarker),
                "earlier turns to be drawn above",
            )
        assert not view.query(PrunedMarker)
        assert _questions(app) == [f"you question {n}" for n in range(5)]
        assert [plain(a).splitlines()[0] for a in view.query(AssistantEntry)] == [f"Answer {n}." for n in range(5)]


async def test_a_file_changed_before_the_session_opened_is_drawn_as_the_session_holds_it(server, repo, make_session):
    session_id = await _saved(server, make_session)
    app = held_app(server, repo, resume=session_id)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert _questions(app)[-1] == "you question 4"
        path = find_session(repo, session_id)
        records = [json.loads(line) for line in path.read_text().splitlines()]
        asked = next(r for r in reversed(records) if r["type"] == "user_message" and r.get("origin") == "user")
        asked["content"] = [{"type": "text", "text": "a question written meanwhile"}]
        with path.open("a") as f:
            f.write(json.dumps(asked) + "\n")
        app.opening.gate.set()
        await until(pilot, app.ready, "the session to open")
        await until(
            pilot,
            lambda: _questions(app)[-1:] == ["you a question written meanwhile"],
            "the conversation drawn from the session's own events",
        )
        assert _questions(app)[-2] == "you question 4"
        assert len(app.conversation.query(PrunedMarker)) == 1


async def test_a_code_block_is_coloured_after_it_is_first_drawn(server, repo, make_session):
    session_id = await _saved(server, make_session)
    app = held_app(server, repo, resume=session_id)
    async with app.run_test(size=SMALL) as pilot:  # (the first frame drew the answer as text: early_answer.py)
        fence = await until(pilot, lambda: next(iter(app.conversation.query(LateFence)), None), "the answer's Markdown")
        assert "def expire" in fence.code
        await until(pilot, lambda: fence._highlighted_code.spans, "the code block to be coloured")
        label = fence.query_one("#code-content")
        assert label.content.spans  # what is drawn is the coloured code
        app.opening.gate.set()
        await until(pilot, app.ready, "the session to open")


async def test_a_file_torn_by_a_crash_is_not_drawn_early_and_opens_as_before(server, repo, make_session):
    session_id = await _saved(server, make_session)
    path = find_session(repo, session_id)
    whole = held_app(server, repo, resume=session_id)
    async with whole.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert _questions(whole)[-1] == "you question 4"  # whole, it is drawn early
        whole.opening.gate.set()
        await until(pilot, whole.ready, "the session to open")
    with path.open("a") as f:
        f.write('{"type": "user_message", "agent_id": "main", "content": [{"type": "te')  # no newline: torn
    app = held_app(server, repo, resume=session_id)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert not app.conversation.query(UserEntry)  # the engine mends the file first: nothing drawn before
        app.opening.gate.set()
        await until(pilot, app.ready, "the session to open")
        await until(pilot, lambda: _questions(app)[-1:] == ["you question 4"], "the conversation, once open")
