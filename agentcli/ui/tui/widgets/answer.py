"""An answer of the model, drawn as Markdown. Its own module: markdown-it and pygments load with it,
on the first answer, not at startup (``conversation.py`` imports it where an answer is drawn)."""

from __future__ import annotations

from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from rich import box
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Label, Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from ...markdown_rules import literal_underscores

MarkdownTable = Markdown.BLOCKS["table_open"]  # Textual's table and code blocks (their module is private)
MarkdownFence = Markdown.BLOCKS["fence"]
MarkdownBulletList = Markdown.BLOCKS["bullet_list_open"]
MarkdownOrderedList = Markdown.BLOCKS["ordered_list_open"]


class WrappingTable(MarkdownTable):  # type: ignore[misc,valid-type]
    """A Markdown table whose cells wrap between words, as line mode's do. Textual's own table shrinks
    its grid's columns below their longest word and cuts the text ("summariz…"), and the words are lost."""

    DEFAULT_CSS = """
    WrappingTable { height: auto; }
    WrappingTable > Static { width: 1fr; height: auto; }
    """

    def compose(self) -> ComposeResult:
        self._headers, self._rows = self._get_headers_and_rows()
        yield Static(self._table())

    def _table(self) -> Table:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", expand=False)
        for header in self._headers:
            table.add_column(Text(header.plain), overflow="fold")  # a word wider than its column folds
        for row in self._rows:
            table.add_row(*(Text(cell.plain) for cell in row))  # text, never markup
        return table

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        """A table that grows while the answer streams is drawn again with its new rows."""
        if isinstance(block, MarkdownTable) and self.is_mounted:
            self._headers, self._rows = block._get_headers_and_rows()  # type: ignore[attr-defined]
            self.query_one(Static).update(self._table())
            return
        await super()._update_from_block(block)


class _Code(Label):
    """A code block's text: the first time it is drawn, its block is coloured, after that frame."""

    def render_lines(self, crop: Region) -> list[Strip]:  # painting it (not laying it out): colour it next
        fence = self.parent
        if isinstance(fence, LateFence) and fence._coloured_for is None:
            self.call_later(fence.colour)
        return super().render_lines(crop)


class LateFence(MarkdownFence):  # type: ignore[misc,valid-type]
    """A code block drawn plain in the frame that first shows it and coloured right after (one that is never
    drawn, never: a resumed session's earlier answers are laid out, not all shown). Textual's fence
    colours its code as it is built, and again when it is first styled: the first block's colouring loads
    Pygments and compiles its lexer's patterns, which held up a resumed conversation's first frame."""

    BLANK = True  # its code (a Label) draws all it shows; its own rows are blank strips of its background

    def __init__(self, markdown: Markdown, token: Any, code: str) -> None:
        MarkdownBlock.__init__(self, markdown, token)  # not MarkdownFence's, which colours at once
        self.code, self.lexer, self.auto_links = code, token.info, False
        self._highlighted_code = Content(code)
        self._coloured_for: tuple[bool, bool] | None = None  # (ansi, dark) of the colours shown

    def compose(self) -> ComposeResult:
        yield _Code(self._highlighted_code, id="code-content", expand=True)

    def colour(self) -> None:
        """Colour the code for the app's theme (again only when the theme changed)."""
        key = (self.app.native_ansi_color, self.app.current_theme.dark)
        if key != self._coloured_for and self.is_attached:
            self._coloured_for = key
            shown, self._highlighted_code = (
                self._highlighted_code,
                self.highlight(self.code, self.lexer, ansi=key[0], dark=key[1]),
            )
            self._content = self._highlighted_code
            for code in self.query(_Code):  # the same text in colour takes the same size: no layout of the whole
                code.update(self._highlighted_code, layout=shown.plain != self._highlighted_code.plain)  # screen

    def ready_ahead(self) -> None:
        """Drawn ahead while the view rests (ahead.py): coloured now, so the frame that shows it draws it once."""
        if self._coloured_for is None:
            self.colour()

    def notify_style_update(self) -> None:
        if self._coloured_for is not None:  # a theme change: colour again; before the first colouring: no
            self.colour()
        MarkdownBlock.notify_style_update(self)  # not MarkdownFence's, which colours each time

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        """A fence that grows while the answer streams: its new code, coloured after the next frame."""
        await super()._update_from_block(block)
        if isinstance(block, MarkdownFence):
            self._coloured_for = None  # coloured when next drawn


def blank_rows(block: Widget) -> None:
    """A list's rows and their columns are blank (``Widget.BLANK``): the bullet and the item's blocks cover them,
    so the frame that shows them composites blank strips for them rather than rendering each through its styles."""
    for row in block.query_children(Horizontal):
        row.BLANK = True  # type: ignore[misc]
        for column in row.query_children(Vertical):
            column.BLANK = True  # type: ignore[misc]


class BulletList(MarkdownBulletList):  # type: ignore[misc,valid-type]
    BLANK = True  # its rows draw all it shows

    def on_mount(self) -> None:
        blank_rows(self)


class OrderedList(MarkdownOrderedList):  # type: ignore[misc,valid-type]
    BLANK = True  # its rows draw all it shows

    def on_mount(self) -> None:
        blank_rows(self)


class WrappingMarkdown(Markdown):
    """Markdown whose tables wrap their cells instead of cutting them, whose code is coloured a frame late
    (LateFence), and whose underscores are text (``parser``), streamed or whole. A quote starts at its first
    line: a heading first in it kept its top margin, two empty lines inside the quote's bar."""

    DEFAULT_CSS = """
    WrappingMarkdown MarkdownBlockQuote > MarkdownHeader { margin-top: 0; }
    """

    def __init__(self, markdown: str | None = None, **options: Any) -> None:
        super().__init__(markdown, parser_factory=parser, **options)

    def get_block_class(self, block_name: str) -> type[MarkdownBlock]:
        if block_name == "table_open":
            return WrappingTable
        if block_name in ("fence", "code_block"):
            return LateFence
        if block_name == "bullet_list_open":
            return BulletList
        if block_name == "ordered_list_open":
            return OrderedList
        return super().get_block_class(block_name)


@cache
def parser() -> MarkdownIt:
    """The parser of every answer: Textual's own (``gfm-like``), built once, not once per answer, whose
    underscores never emphasise (``markdown_rules``): ``__main__.py`` stays a path."""
    return MarkdownIt("gfm-like").use(literal_underscores)


class AssistantEntry(WrappingMarkdown):
    """An answer: streamed into (``AssistantEntry()`` and ``get_stream``), or whole (replayed, or not streamed).

    A whole answer's blocks are parsed and composed with it, so the frame that draws the entry draws them:
    Textual's Markdown parses in a thread after mounting and mounts its blocks later, each answer on its
    own, and a resumed session's screenful of answers took as many rounds and layouts."""

    DEFAULT_CSS = """
    AssistantEntry { margin: 0 0 1 0; padding: 0 1 0 1; background: transparent; }
    """
    BLANK = True  # its blocks draw all it shows; its own rows (its padding) are blank strips

    def compose(self) -> ComposeResult:
        text = self._initial_markdown
        if text:
            self._initial_markdown, self._markdown, self._theme = None, text, self.app.theme
            lines = text.splitlines()
            self._last_parsed_line = len(lines) - (1 if lines and lines[-1] else 0)  # as Markdown.update sets it
            yield from self._parse_markdown(parser().parse(text))

    def append(self, markdown: str) -> AwaitComplete:
        """Markdown's append, except into an answer that was never put on screen: begun while its conversation
        closes (the app shutting down as the reply still streams), its mount was skipped, and the mount of its
        blocks failed with MountError in the app's message loop. (Removed later, it is closing, and Textual's
        mount does nothing then.)"""
        if not self.is_mounted:
            return AwaitComplete()  # nothing to await
        return super().append(markdown)

    async def _on_mount(self, event: events.Mount) -> None:  # type: ignore[override]  # Markdown's is async
        if self._markdown:  # composed whole: Markdown's own mount (called next, unless prevented) would parse it
            event.prevent_default()  # again; streamed: it starts the empty document the stream writes into
