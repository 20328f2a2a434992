"""A tool call in a conversation: one compact line that expands to its input and output; and task calls."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Static

from ....core.events import ToolCallFinished, ToolCallStarted, ToolProgress
from ...view import progress_text
from ...calls import call_line
from ...format import seconds, tokens
from ..format import clip_lines, input_view, one_line, status_icon
from ..messages import OpenTranscript
from ...view import Subagent


class ToolCallEntry(Collapsible):
    """``grep  handle_auth  ✓ 0.1s``; click or enter shows the input and the output."""

    DEFAULT_CSS = """
    ToolCallEntry {
        border-top: none; padding: 0 0 0 2; margin: 0; background: transparent;
        &:focus-within { background-tint: $foreground 4%; }
        CollapsibleTitle { padding: 0; color: $text-muted; width: 1fr; }
        Contents { padding: 0 0 1 2; }
        .tool-input { color: $text-muted; }
        .tool-output { color: $foreground 85%; border-left: vkey $secondary 40%; padding-left: 1; }
        .tool-output.-error { color: $error; }
    }
    """

    def __init__(self, event: ToolCallStarted, *, show_times: bool = True, collapsed: bool = True,
                 max_output_lines: int = 200) -> None:
        self.call = event
        self.show_times = show_times
        self.max_output_lines = max_output_lines
        self.result: ToolCallFinished | None = None
        self.progress = ""
        self._output: Static | None = None  # the body is built when first expanded: most calls never are
        # born with the class a collapsed Collapsible sets on mount, so mounting restyles nothing
        super().__init__(title=self._label(), collapsed=collapsed, classes="-collapsed" if collapsed else None)

    def compose(self) -> ComposeResult:
        yield self._title
        if not self.collapsed:  # a collapsed call is its title alone: its Contents come when first expanded
            with self.Contents():
                yield from self._body()

    def _watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed and self._output is None and self.is_mounted:
            self.mount(self.Contents(*self._body()))
        super()._watch_collapsed(collapsed)

    def _body(self) -> list[Static]:
        self._output = Static(classes="tool-output")
        self._show_output()
        return [Static(input_view(self.call.name, self.call.input), classes="tool-input"), self._output]

    def _show_output(self) -> None:
        if self._output is None:
            return
        event = self.result
        self._output.update(Content("running…" if event is None else
                                    clip_lines(event.output or "(no output)", self.max_output_lines)))
        self._output.set_class(event is not None and event.is_error, "-error")

    def _label(self) -> Content:  # a Content, so brackets in arguments are never read as markup
        name = Content.styled(self.call.name, "bold $secondary")
        summary = Content(one_line(call_line(self.call.name, self.call.input, self.call.summary), 70))
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
        self.title = self._label()  # type: ignore[assignment]

    def finish(self, event: ToolCallFinished) -> None:
        self.result = event
        self.title = self._label()  # type: ignore[assignment]
        self._show_output()


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
        Markdown.-pending { display: none; }
    }
    """

    def __init__(self, event: ToolCallStarted, *, show_times: bool = True) -> None:
        super().__init__()
        self.call = event
        self.show_times = show_times
        self.agent_id: str | None = None
        self.description = str(event.input.get("description", "")) if isinstance(event.input, dict) else ""
        self.subagent_type = str(event.input.get("subagent_type") or "general-purpose") \
            if isinstance(event.input, dict) else "general-purpose"
        self._title = TaskTitle(self._line(None, 0.0))
        from .answer import WrappingMarkdown  # on the first task call: startup does without markdown-it

        self._result = WrappingMarkdown("", classes="-pending")

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._result

    def _line(self, state: Subagent | None, now: float) -> Content:
        head = Content.assemble(Content.styled("task ", "bold $secondary"),
                                Content.styled(one_line(self.description, 60), "bold"))
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
