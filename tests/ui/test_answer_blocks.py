"""A whole answer composes its Markdown blocks at once (answer.py): it shows what Textual's Markdown shows for
the same text, tables wrapped and code highlighted, and a streamed answer still grows as it is written."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from agentcli.ui.tui.widgets.answer import AssistantEntry, BulletList, LateFence, WrappingMarkdown
from agentcli.ui.tui.widgets.conversation import Conversation
from tests.narrow import of
from tests.ui.test_tui_support import until

ANSWER = (
    "## Cache\n\nEntries expire in `src/cache.py:12`:\n\n- drops old entries;\n- runs on every `get`.\n\n"
    "| name | what it does |\n| --- | --- |\n| expire | drops entries older than ttl seconds |\n\n"
    "```python\ndef expire(self, now):\n    return now\n```\n\nThat is all."
)


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
        await until(
            pilot,
            lambda: streamed.source == "First paragraph.\n\nSecond paragraph." and len(streamed.children) == 2,
            "both paragraphs",
        )


async def test_an_answer_begun_while_the_conversation_closes_takes_its_text_without_an_error():
    """The app closing without exit() (as run_test's end does) removes the conversation while the turn still
    streams: the next answer's mount is skipped (its conversation is closing), and writing into that answer,
    never mounted, failed with MountError in the app's message loop (a busy run of test_elicitation_ui met it)."""
    app = Blank()
    async with app.run_test(size=(100, 60)) as pilot:
        conversation = app.query_one(Conversation)
        closing = conversation.remove()
        await conversation.write("again\n\n- and a list")
        await pilot.pause()  # the stream appends what it was given
        await conversation.end_answer()
        await closing
        assert not app.query(Conversation)


PATHS = "Start at agentcli/__main__.py:9, then __init__ and snake_case_name; **this** stays bold."
DRAWN = "Start at agentcli/__main__.py:9, then __init__ and snake_case_name; this stays bold."


def _drawn(widget) -> str:
    return " ".join(
        strip.text.strip()
        for block in widget.children
        for strip in block.render_lines(block.region.reset_offset)
        if strip.text.strip()
    )


async def test_paths_and_identifiers_keep_their_underscores_whole_and_streamed():
    """Markdown drew agentcli/__main__.py:9 as agentcli/ + a bold 'main' + .py:9 (markdown_rules.py)."""
    app = Answers()
    async with app.run_test(size=(120, 60)) as pilot:
        whole = app.query_one(AssistantEntry)
        whole.update(PATHS)
        streamed = app.query_one("#streamed", AssistantEntry)
        stream = streamed.get_stream(streamed)
        await stream.write(PATHS)
        await stream.stop()
        for entry in (whole, streamed):
            await until(
                pilot,
                lambda: _drawn(entry) == DRAWN,
                "the text drawn with its underscores",  # noqa: B023
                timeout=60,
            )
            [block] = entry.children
            paragraph = of(MarkdownBlock, block)
            styled = {paragraph._content.plain[s.start : s.end] for s in paragraph._content.spans}
            assert styled == {"this"}, paragraph._content.spans  # ** still emphasises; nothing else is styled


def test_line_mode_keeps_underscores_too():
    from agentcli.ui.plain.screen import Painter
    from agentcli.ui.plain.stream import markdown_renderer

    lines = markdown_renderer(Painter("truecolor", lambda: 120))(PATHS, True)
    assert any("agentcli/__main__.py:9" in line and "__init__" in line for line in lines), lines


class TaskAndQuote(App[None]):
    def compose(self) -> ComposeResult:
        from agentcli.core.events import ToolCallStarted
        from agentcli.ui.tui.widgets.tool_call import TaskEntry

        with VerticalScroll():
            yield TaskEntry(ToolCallStarted(id="t1", name="task", input={"description": "Find login", "prompt": "p"}))
            yield AssistantEntry("**Find login** reported:\n\n> ## Findings\n>\n> login is in shop/auth.py:13.")


async def test_a_task_result_and_a_quote_start_at_their_first_line():
    """The result under a task line began with three empty lines (the block's margin and a heading's two) and a
    quote opening with a heading with two."""
    from agentcli.ui.tui.widgets.tool_call import TaskEntry

    MarkdownBlockQuote = Markdown.BLOCKS["blockquote_open"]  # Textual's (its module is private)

    app = TaskAndQuote()
    async with app.run_test(size=(100, 40)) as pilot:
        task = app.query_one(TaskEntry)
        await task.finish("## Findings\n\nlogin is in shop/auth.py:13.", None, 0.0)
        result = task._result
        await until(pilot, lambda: len(result.children) == 2, "the task's result blocks")
        await until(
            pilot,
            lambda: app.query(MarkdownBlockQuote) and app.query_one(MarkdownBlockQuote).children,
            "the quote's blocks",
        )
        await pilot.pause()
        heading = result.children[0]
        assert heading.region.y - task._title.region.bottom == 1  # one empty line under the task's line
        quote = app.query_one(MarkdownBlockQuote)
        assert quote.children[0].region.y == quote.region.y  # the quote's first line is its heading


LISTS = "Steps:\n\n- read `a.py`;\n- then:\n  1. parse it;\n  2. check it.\n\n3. three\n4. four\n\nDone."


class Blank(App[None]):
    def compose(self) -> ComposeResult:
        with Conversation():
            yield AssistantEntry(LISTS)
            yield AssistantEntry(ANSWER)


def _cells(app: App[None]) -> list[list[tuple[str, object, object]]]:
    """Each cell of the screen: its character, its background, and its colour where it shows one."""
    rows: list[list[tuple[str, object, object]]] = []
    for strip in app.screen._compositor.render_strips():
        row: list[tuple[str, object, object]] = []
        for segment in strip:
            style = segment.style
            for char in segment.text:
                row.append((char, style and style.bgcolor, style and style.color if char.strip() else None))
        rows.append(row)
    return rows


async def test_blank_boxes_show_what_they_would_render():
    """The conversation, an answer and a list's rows and columns are blank (Widget.BLANK: a blank strip for each,
    which its children cover, rather than its styles rendered; fewer lines to make in a jump's frame): the screen
    is cell for cell what it is when each renders through its styles."""
    app = Blank()
    async with app.run_test(size=(60, 40)) as pilot:
        await until(pilot, lambda: len(app.query(BulletList)) == 2, "both answers' bullet lists")
        coloured = lambda: [fence._coloured_for is not None for fence in app.query(LateFence)] == [True]  # noqa: E731
        await until(pilot, coloured, "the code coloured")
        blank = [widget for widget in app.query("*") if widget.BLANK]
        names = {type(widget).__name__ for widget in blank}
        assert {
            "Conversation",
            "AssistantEntry",
            "BulletList",
            "OrderedList",
            "Horizontal",
            "Vertical",
            "LateFence",
        } <= names
        drawn = _cells(app)
        assert any("parse it" in "".join(char for char, _, _ in row) for row in drawn)
        for widget in blank:
            widget.BLANK = False  # type: ignore[misc]
            widget.refresh()
        await pilot.pause()
        assert _cells(app) == drawn
