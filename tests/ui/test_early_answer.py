"""A resumed session's first frame draws its answers as text (early_answer.py), in the rows and styles their
Markdown entries take, and swaps them for those entries right after: once settled, the screen is the one drawn
without the early answers."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.strip import Strip
from textual.widget import Widget

from agentcli.ui.tui.widgets import early_answer
from agentcli.ui.tui.widgets.answer import LateFence
from agentcli.ui.tui.widgets.conversation import Conversation
from agentcli.ui.tui.widgets.early_answer import EarlyAnswer, blocks
from agentcli.ui.tui.widgets.history import answer_entry
from tests.fakes.anthropic_server import text
from tests.ui.test_tui_opening import held_app
from tests.ui.test_tui_support import until

CODE = (
    "def expire(self, now):",
    "    for key, (stamp, _) in list(self.items.items()):",
    "        if now - stamp > self.ttl:",
    "            del self.items[key]",
)
ANSWERS = [
    "## Answer 1 of 50\n\nEntries expire in `src/cache.py:12` (`Cache.expire`), which:\n\n"
    "- drops entries older than `ttl` seconds;\n- runs on every `get`, so no timer thread is needed;\n"
    "- counts what it dropped in `stats.expired`.\n\n```python\n" + "\n".join(CODE) + "\n```\n\n"
    "The tests in `tests/test_cache.py` cover both paths.",
    "### A third-level heading long enough to be cut on a narrow screen, as Textual cuts it\n\n"
    "A paragraph of two source lines, with **bold words** and `inline code`, long enough to wrap\n"
    "when the conversation is narrow.\n\n- an item long enough to wrap onto a second line when the conversation "
    "is narrow\n- a short one\n\n#### Fourth\n\n```\n" + CODE[1] + "\n\n" + CODE[2] + "\n```",
    "## A second-level heading that wraps on a narrow screen rather than being cut\n\n##### five\n\n###### six",
    "Answer 4.",
]


class One(App[None]):
    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield Conversation()

    async def on_mount(self) -> None:
        await self.query_one(Conversation).mount(self.widget)


async def _drawn(widget: Widget, width: int) -> list[Strip]:
    app = One(widget)
    async with app.run_test(size=(width, 50)) as pilot:
        await until(pilot, lambda: widget.region.height > 0, "the answer laid out")
        await pilot.pause()
        return app.screen._compositor.render_strips()


def _cells(strip: Strip) -> list[tuple[str, str]]:
    """Each cell's character and look; a space's look is its background, and a line of code's cells their
    characters and background (Markdown colours code after the frame that first draws it)."""
    shown = strip.text.strip()
    code = bool(shown) and any(line.strip().startswith(shown) for line in CODE)  # (cut on a narrow screen)
    return [
        (ch, str(style.bgcolor) if ch == " " or code else str(style))
        for segment_text, style, _ in strip
        for ch in segment_text
        if style is not None
    ]


@pytest.mark.parametrize("width", [120, 61, 33])
@pytest.mark.parametrize("answer", ANSWERS, ids=range(len(ANSWERS)))
async def test_an_answer_drawn_as_text_looks_as_its_markdown_entry_does(answer: str, width: int) -> None:
    found = blocks(answer)
    assert found is not None
    markdown, early = await _drawn(answer_entry(answer), width), await _drawn(EarlyAnswer(answer, found), width)
    assert [s.text for s in early] == [s.text for s in markdown]
    assert [_cells(s) for s in early] == [_cells(s) for s in markdown]


@pytest.mark.parametrize(
    "answer",
    [
        "| a | b |\n| - | - |\n| 1 | 2 |",
        "see [the docs](x)",
        "an _emphasis_",
        "a *star*",
        "snake_case words",
        "# a title",
        "1. first\n2. second",
        "> quoted",
        "- item\n  - nested",
        "- item\n\n- loose",
        "title\n---",
        "see example.com",
        "mail me@example.org",
        "https://example.org",
        "a <b>tag</b>",
        "a &amp; b",
        "line\\\nbreak",
        "two spaces  \nbreak",
        "```\nunclosed",
        "    indented code",
        "- # heading in an item",
        "~~struck~~",
    ],
)
def test_what_is_drawn_otherwise_than_this_draws_it_is_left_to_markdown(answer: str) -> None:
    assert blocks(answer) is None


async def _settled(server: Any, repo: Any, session_id: str) -> list[Strip]:
    app = held_app(server, repo, resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        app.opening.gate.set()
        await until(pilot, app.ready, "the session to open")
        view = app.conversation
        await until(pilot, lambda: not view.query(EarlyAnswer) and view._unfilled is None, "the preview settled")
        await until(
            pilot,
            lambda: all(f._coloured_for for f in view.query(LateFence) if f.region.intersection(view.region).area),
            "the code shown coloured",
        )
        await pilot.pause()
        return app.screen._compositor.render_strips()


async def test_once_settled_the_screen_is_the_one_drawn_without_early_answers(server, repo, make_session, monkeypatch):
    server.script(*(text(ANSWERS[0].replace("1 of 50", f"{n} of 4")) for n in range(4)))
    earlier, _ = make_session()
    for n in range(4):
        await earlier.send(f"question {n}")
    earlier.close()
    drawn: list[object] = []

    def recorded(answer: str) -> object:
        found = blocks(answer)
        drawn.append(found)
        return found

    monkeypatch.setattr(early_answer, "blocks", recorded)
    with_early = await _settled(server, repo, earlier.id)
    assert drawn and all(drawn)  # the first frame drew its answers as text
    monkeypatch.setattr(early_answer, "blocks", lambda answer: None)
    without = await _settled(server, repo, earlier.id)
    assert [s.text for s in with_early] == [s.text for s in without]
    assert [list(s) for s in with_early] == [list(s) for s in without]
