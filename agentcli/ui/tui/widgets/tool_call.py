"""A tool call in a conversation: one compact line that expands to its input and output; and task calls."""

from __future__ import annotations

from typing import cast

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Size
from textual.reactive import reactive
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import RenderOptions, Visual
from textual.widget import Widget
from textual.widgets import Static

from ....core.events import ToolCallFinished, ToolCallStarted, ToolProgress
from ...calls import call_line
from ...format import seconds, tokens
from ...view import Subagent, progress_text
from ..format import clip_lines, input_view, one_line, status_icon
from ..messages import OpenTranscript

Row = tuple[str, Content | str]  # a line of a tool call: what it is ("title", "input", "output", "blank"), its text
INDENT = 2  # the input and the output, under the title


def wrap_plain(text: str, width: int) -> list[str]:
    """``text``'s lines wrapped to ``width`` as a Static wraps them; a line that fits (most) as it is."""
    rows: list[str] = []
    for line in text.split("\n"):
        if line.isprintable() and cell_len(line) <= width:
            rows.append(line)
        else:  # tabs, control characters, or too long: Content's own wrapping
            rows += [row.plain for row in Content(line).wrap(width)] or [""]
    return rows


def as_content(row: Content | str) -> Content:
    return row if isinstance(row, Content) else Content(row)


class ToolCallEntry(Widget, can_focus=True):
    """``▶ grep  handle_auth  ✓ 0.1s``; click its line or press enter and it shows the input and the output.

    One widget that draws its lines itself: the title, then the input indented under it and the output
    beside a ``▏`` bar, each part as the Collapsible of a title and a body of two Statics (one with a
    border) drew it. Those six widgets were styled, laid out and rendered one by one, and their output
    wrapped at every layout: a transcript of two long calls took 1.6 times a bare screen of the same text.
    """

    BINDINGS = [Binding("enter", "toggle_call", "Toggle", show=False)]
    COMPONENT_CLASSES = {"tool-call--title", "tool-call--input", "tool-call--output", "tool-call--bar"}
    DEFAULT_CSS = """
    ToolCallEntry {
        width: 1fr; height: auto; padding: 0 0 0 2;
        & > .tool-call--title { color: $text-muted; text-style: $block-cursor-blurred-text-style; }
        &.-title-hover { pointer: pointer; }
        &.-title-hover > .tool-call--title { background: $block-hover-background; color: $foreground; }
        &:focus > .tool-call--title {
            text-style: $block-cursor-text-style; background: $block-cursor-background;
            color: $block-cursor-foreground;
        }
        & > .tool-call--input { color: $text-muted; }
        & > .tool-call--output { color: $foreground 85%; }
        &.-error > .tool-call--output { color: $error; }
        & > .tool-call--bar { color: $secondary 40%; }
    }
    """
    collapsed = reactive(True, init=False)

    def __init__(
        self, event: ToolCallStarted, *, show_times: bool = True, collapsed: bool = True, max_output_lines: int = 200
    ) -> None:
        super().__init__()
        self.call = event
        self.show_times = show_times
        self.max_output_lines = max_output_lines
        self.result: ToolCallFinished | None = None
        self.progress = ""
        self.set_reactive(ToolCallEntry.collapsed, collapsed)
        self.title = self._label()
        self.built = not collapsed  # the body is laid out when first expanded: most calls never are
        self._body: tuple[int, list[Row]] | None = None  # the input and output rows, wrapped to a width
        self._rows: tuple[tuple[int, bool], list[Row]] | None = None  # all the rows drawn, at a width

    def _watch_collapsed(self, collapsed: bool) -> None:
        self.built = self.built or not collapsed
        self._changed()
        if not collapsed:
            self.call_after_refresh(self.scroll_visible)

    def _changed(self, body: bool = False) -> None:
        if body:
            self._body = None
        self._rows = None
        self.refresh(layout=True)

    def action_toggle_call(self) -> None:
        self.collapsed = not self.collapsed

    def on_click(self, event: events.Click) -> None:
        if self._on_title(event):
            event.stop()
            self.action_toggle_call()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.set_class(self._on_title(event), "-title-hover")

    def on_leave(self, event: events.Leave) -> None:
        self.remove_class("-title-hover")

    def _on_title(self, event: events.MouseEvent) -> bool:
        offset = event.get_content_offset(self)
        return offset is not None and offset.y < sum(kind == "title" for kind, _ in self.rows(self.size.width))

    def rows(self, width: int) -> list[Row]:
        """What each line shows at ``width``: the title, then (expanded) the input, the output, a blank line."""
        if self._rows is None or self._rows[0] != (width, self.collapsed):
            title = Content.assemble("▶ " if self.collapsed else "▼ ", self.title)
            rows: list[Row] = [("title", row) for row in title.wrap(max(1, width))]
            if not self.collapsed:
                rows += self._body_rows(width)
            self._rows = (width, self.collapsed), rows
        return self._rows[1]

    def _body_rows(self, width: int) -> list[Row]:
        if self._body is None or self._body[0] != width:
            event = self.result
            text = "running…" if event is None else clip_lines(event.output or "(no output)", self.max_output_lines)
            rows: list[Row] = [
                ("input", row) for row in input_view(self.call.preview, self.call.input).wrap(max(1, width - INDENT))
            ]
            rows += [("output", row) for row in wrap_plain(text, max(1, width - INDENT - 2))]
            self._body = width, [*rows, ("blank", "")]
        return self._body[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.rows(width))

    def render_line(self, y: int) -> Strip:
        """Line ``y`` as the title, the input or the output line drew it in their own widgets: the output
        beside its bar, both indented; the parts' colours are the component classes'."""
        width = self.size.width
        rows = self.rows(width)
        background = RichStyle(bgcolor=self.background_colors[1].rich_color)
        if y >= len(rows):
            return Strip.blank(width, background)
        kind, row = rows[y]
        if kind == "title":  # not selectable, as a Collapsible's title is not
            style = self.get_visual_style("tool-call--title")
            line = Visual.to_strips(self, as_content(row), width, 1, style, apply_selection=False)[0]
            return line.adjust_cell_length(width, VisualStyle(background=style.background).rich_style)
        if kind == "blank":
            return Strip.blank(width, background)
        content = as_content(row)
        if (selection := self.text_selection) is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            content = content.stylize(
                VisualStyle.from_styles(self.screen.get_component_styles("screen--selection")),
                start,
                len(content) if end == -1 else end,
            )
        part = "tool-call--input" if kind == "input" else "tool-call--output"
        style = self.visual_style + self.get_visual_style(part, partial=True)
        strips = content.render_strips(width, 1, style, RenderOptions(self._get_style, cast(RulesMap, self.styles)))
        text = strips[0].apply_offsets(0, y) if strips else Strip([])
        prefix = [Segment(" " * INDENT, background)]
        if kind == "output":
            bar = self.background_colors[1] + self.get_component_styles("tool-call--bar").color
            prefix += [
                Segment("▏", RichStyle(color=bar.rich_color, bgcolor=background.bgcolor)),
                Segment(" ", background),
            ]
        return Strip.join([Strip(prefix), text]).adjust_cell_length(width, background)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        text = "\n".join(row if isinstance(row, str) else row.plain for _, row in self.rows(self.size.width))
        return selection.extract(text), "\n"

    @property
    def plain(self) -> str:
        """What it shows: its title line, and its input and output once built (expanded or not)."""
        lines = [self.title.plain]
        if self.built:
            lines += [row if isinstance(row, str) else row.plain for _, row in self._body_rows(self.size.width or 80)]
        return "\n".join(lines).rstrip("\n")

    def _label(self) -> Content:  # a Content, so brackets in arguments are never read as markup
        name = Content.styled(self.call.name, "bold $secondary")
        summary = Content(one_line(call_line(self.call.preview, self.call.input, self.call.summary), 70))
        if self.result is None:
            state = Content.styled(f"… {self.progress}" if self.progress else "…", "$warning")
        else:
            state = status_icon("failed" if self.result.is_error else "done")
            if self.show_times and self.result.seconds >= 0:  # replayed calls have no timing
                state = state + Content.styled(f" {seconds(self.result.seconds)}", "$text-muted")
        return Content.assemble(name, "  ", summary, "  ", state)

    def show_progress(self, event: ToolProgress) -> None:
        """What the call's MCP server says of its progress, on its title line while it runs."""
        self.progress = progress_text(event)
        self.title = self._label()
        self._changed()

    def finish(self, event: ToolCallFinished) -> None:
        self.result = event
        self.title = self._label()
        self.set_class(event.is_error, "-error")
        self._changed(body=True)


class TaskTitle(Static, can_focus=True):
    BINDINGS = [("enter", "open", "Open transcript")]

    def action_open(self) -> None:
        entry = self.parent
        if isinstance(entry, TaskEntry) and entry.agent_id:
            self.post_message(OpenTranscript(entry.agent_id))

    def on_click(self) -> None:
        self.action_open()


class TaskEntry(Vertical):
    """A ``task`` call: what it was asked, a live status line, then the distilled result."""

    DEFAULT_CSS = """
    TaskEntry {
        height: auto; margin: 0 0 1 2; padding: 0 1; border-left: thick $secondary; background: $boost;
        TaskTitle { width: 1fr; }
        TaskTitle:focus { background: $block-cursor-blurred-background; }
        Markdown { margin: 1 0 0 0; padding: 0; background: transparent; }
        Markdown > MarkdownHeader { margin-top: 0; }  /* a heading first: one empty line under the task, not three */
        Markdown.-pending { display: none; }
    }
    """

    def __init__(self, event: ToolCallStarted, *, show_times: bool = True) -> None:
        super().__init__()
        self.call = event
        self.show_times = show_times
        self.agent_id: str | None = None
        self.description = str(event.input.get("description", "")) if isinstance(event.input, dict) else ""
        self.subagent_type = (
            str(event.input.get("subagent_type") or "general-purpose")
            if isinstance(event.input, dict)
            else "general-purpose"
        )
        self._title = TaskTitle(self._line(None, 0.0))
        from .answer import WrappingMarkdown  # on the first task call: startup does without markdown-it

        self._result = WrappingMarkdown("", classes="-pending")

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._result

    def _line(self, state: Subagent | None, now: float) -> Content:
        head = Content.assemble(
            Content.styled("task ", "bold $secondary"), Content.styled(one_line(self.description, 60), "bold")
        )
        if state is None:
            return head + Content.styled("  waiting to start", "$text-muted")
        facts = [state.id, f"turn {state.turn}/{state.max_turns}", f"{tokens(state.tokens)} tokens"]
        if self.show_times:
            facts.append(seconds(state.elapsed(now)))
        tail = Content.styled("  " + " · ".join(facts), "$text-muted")
        word = state.state(now, stall_after=float("inf"))  # cancelling…, retrying 3/8, or the status
        status = Content.styled(word, "$warning") if word != state.status else Content(word)
        return Content.assemble(head, "  ", status_icon(state.status), " ", status, tail)

    def show(self, state: Subagent, now: float) -> None:
        self.agent_id = state.id
        self._title.update(self._line(state, now))

    async def finish(self, result: str, state: Subagent | None, now: float) -> None:
        if state is not None:
            self.show(state, now)
        text = (state.result if state is not None and state.result else result) or "(no result)"
        self._result.remove_class("-pending")
        if self._result.is_mounted:
            await self._result.update(text)
        else:  # replayed before being mounted
            self._result = type(self._result)(text)
