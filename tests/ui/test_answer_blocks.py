"""A whole answer composes its Markdown blocks at once (answer.py): it shows what Textual's Markdown shows for
the same text, tables wrapped and code highlighted, and a streamed answer still grows as it is written."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from agentcli.ui.tui.widgets.answer import AssistantEntry, WrappingMarkdown
from tests.ui.test_tui_support import until

ANSWER = ("## Cache\n\nEntries expire in `src/cache.py:12`:\n\n- drops old entries;\n- runs on every `get`.\n\n"
          "| name | what it does |\n| --- | --- |\n| expire | drops entries older than ttl seconds |\n\n"
          "```python\ndef expire(self, now):\n    return now\n```\n\nThat is all.")


class Answers(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield AssistantEntry(ANSWER)
            yield WrappingMarkdown(ANSWER, id="reference")
            yield AssistantEntry(id="streamed")


def _blocks(widget) -> list[tuple[str, str]]:
    return [(type(block).__name__, block.source or "") for block in widget.children]


async def test_a_whole_answer_shows_the_blocks_textual_draws_for_the_same_text():
    app = Answers()
    async with app.run_test(size=(100, 60)) as pilot:
        entry = app.query_one(AssistantEntry)
        assert entry.children, "composed with the entry, not after it mounted"
        reference = app.query_one("#reference", WrappingMarkdown)
        await until(pilot, lambda: len(reference.children) == len(entry.children), "the reference's blocks")
        assert _blocks(entry) == _blocks(reference)
        assert entry.source == ANSWER
        assert "WrappingTable" in [name for name, _ in _blocks(entry)]


async def test_a_streamed_answer_grows_as_it_is_written():
    app = Answers()
    async with app.run_test(size=(100, 60)) as pilot:
        streamed = app.query_one("#streamed", AssistantEntry)
        stream = streamed.get_stream(streamed)
        await stream.write("First paragraph.\n\n")
        await stream.write("Second paragraph.")
        await stream.stop()
        await until(pilot, lambda: streamed.source == "First paragraph.\n\nSecond paragraph."
                    and len(streamed.children) == 2, "both paragraphs")
