"""The side panel: one collapsible entry per subagent of this session, newest first, kept after it ends."""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.visual import VisualType
from textual.widgets import Collapsible, Static
from textual.widgets.collapsible import CollapsibleTitle

from ....core.units import dollars
from ...format import WITH, WITHOUT, bar, seconds, tokens
from ...plan import plan_title
from ...view import Subagent
from ..format import one_line, status_icon
from ..messages import CancelSubagent, OpenTranscript, SteerSubagent, WrapUpSubagent
from .plan import plan_content


class EntryTitle(CollapsibleTitle):
    """The one line of an entry. Enter opens the transcript, space expands; on a running subagent, m sends it
    a message, w asks it to wrap up, x cancels it."""

    BINDINGS = [
        Binding("enter", "open", "Transcript"),
        Binding("space", "toggle_collapsible", "Expand"),
        Binding("m", "steer", "Message"),
        Binding("w", "wrap_up", "Wrap up"),
        Binding("x", "cancel", "Cancel subagent"),
    ]
    KEYS = ("space", "x")  # printable keys that are the entry's own, even when they do nothing (m, w: text then)
    finishing = False  # x or w was pressed here: m and w are text from now on, as the keys typed next may be

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        # Textual 8.2.8 caches a widget's box model under a counter that refresh(layout=True) leaves alone
        # while an earlier layout request is still pending (one is, from the labels set before mounting).
        # A label set then kept the old label's height: at 80 columns the line did not wrap, cut off.
        self._box_model_cache.clear()
        super().update(content, layout=layout)

    def action_open(self) -> None:
        self.post_message(OpenTranscript(self._entry_id))

    def action_cancel(self) -> None:
        self.finishing = True
        self.post_message(CancelSubagent(self._entry_id))

    def action_steer(self) -> None:
        self.post_message(SteerSubagent(self._entry_id))

    def action_wrap_up(self) -> None:
        self.finishing = True
        self.post_message(WrapUpSubagent(self._entry_id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A finished subagent has nothing to cancel: the footer does not offer x (keys.route says why). One
        that is finishing (cancelled, or wrapping up) takes no message or wrap-up: m and w are text then."""
        entry = self.parent
        if not isinstance(entry, SubagentEntry):
            return True
        state = entry.state
        if action in ("steer", "wrap_up"):
            return not (self.finishing or state.finished or state.cancelling or state.wrapping_up)
        return not (action == "cancel" and state.finished)

    @property
    def _entry_id(self) -> str:
        entry = self.parent
        return entry.agent_id if isinstance(entry, SubagentEntry) else ""


def budget_use(state: Subagent) -> str:
    """Its tokens, against its budget where it has one: '12.3k tok', '12.3k/50.0k tok', '$0.12/$0.50'."""
    if state.cost_budget:
        return f"{dollars(state.cost)}/{dollars(state.cost_budget)}"
    return (
        f"{tokens(state.tokens)}/{tokens(state.token_budget)} tok"
        if state.token_budget
        else f"{tokens(state.tokens)} tok"
    )


ONE_LINE = 40  # the room an entry's line needs for its one-line form; a narrower panel takes two lines


def fit(description: str, width: int, shared: str = "") -> str:
    """``description`` in ``width`` characters. Cut, it keeps what tells it apart from the other entries:
    what follows ``shared``, their common start (from the word where they differ, when that fits)."""
    width = max(width, 2)
    if len(description) <= width:
        return description
    start = len(shared) if len(shared) >= 4 and len(description) > len(shared) else 0
    word = shared.rfind(" ", 0, start) + 1 if start else 0  # the start of the word they differ in
    if start - word <= width // 2:
        start = word
    return one_line(("…" if start else "") + description[start:], width)


def shared_start(descriptions: list[str]) -> str:
    """What every description begins with (nothing for fewer than two)."""
    return os.path.commonprefix(descriptions) if len(descriptions) > 1 else ""


def wrapped(note: str, numbers: str, width: int) -> str:
    """``note · `` wrapped to ``width`` with ``numbers`` after it (not included), a duration never split."""
    kept = re.sub(r"(?<=\d) (?=[a-z])|(?<=min) (?=\d)", "\xa0", f"{note} ·\x00{numbers}")
    lines = textwrap.wrap(kept, max(width, 8), break_long_words=False, break_on_hyphens=False)
    return "\n    ".join(lines).replace("\xa0", " ").split("\x00")[0]


class SubagentEntry(Collapsible):
    DEFAULT_CSS = """
    SubagentEntry {
        padding: 0; border-top: none; margin: 0; background: $surface;
        EntryTitle { width: 1fr; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
        Contents { padding: 0 1 0 2; }
        .entry-tools { color: $text-muted; }
        .entry-files { color: $success; }
        Markdown { padding: 0; margin: 1 0 0 0; background: transparent; }
        .-pending { display: none; }
    }
    """

    def __init__(
        self, state: Subagent, *, show_times: bool = True, now: Callable[[], float], stall_after: float = 60.0
    ) -> None:
        self.agent_id = state.id
        self.show_times = show_times
        self.now = now
        self.stall_after = stall_after
        self._about_text = self.about(state).plain
        self._about = Static(self.about(state), classes="entry-about")
        self._plan = Static("", classes="entry-plan -pending")
        self._tools = Static("", classes="entry-tools")
        self._files = Static("", classes="entry-files -pending")
        from textual.widgets import Markdown  # on the first subagent: startup does without markdown-it

        from .answer import parser

        self._result = Markdown("", classes="-pending", parser_factory=parser)  # underscores as text
        self._shown_result = ""
        self.state = state
        self.shared = ""  # the start every entry's description has (see fit)
        super().__init__(
            self._about, self._plan, self._tools, self._files, self._result, title="", id=f"entry-{state.id}"
        )
        # Swap in a title whose enter opens the transcript instead of expanding.
        self._title: EntryTitle = EntryTitle(label="", collapsed_symbol="▶", expanded_symbol="▼", collapsed=True)

    @staticmethod
    def about(state: Subagent) -> Content:
        """Its id, type, model and cost so far (where the price is known), then its description."""
        spent = f" · {dollars(state.cost)}" if state.cost else ""
        return Content.assemble(
            Content.styled(state.id, "bold"),
            " · ",
            Content.styled(state.type, "$secondary"),
            f" · {state.model}{spent}" if state.model else spent,
            "\n",
            state.description,
        )

    def line(self, state: Subagent, now: float) -> Content:
        """Status icon, id, type, description, state, turn n/max, tokens and elapsed time.

        On one line where the panel is wide and the description keeps 16 characters (the type only where
        the whole description fits beside it); else on two: the id and the description, then the numbers (after a state the icon does
        not say, such as cancelling…). A description cut short keeps the part that
        tells it from the other entries' (``shared``: the words they all begin with, left out).
        """
        room = (self.size.width or 52) - 2 - 2 - 2  # less the title's padding, the ▶ symbol and the status icon
        word = state.state(now, self.stall_after)
        said = word if word != state.status else ""  # cancelling…, retrying 3/8, no progress for 1m 15s
        offer = f"{said} · w wrap up" if state.stalled_for(now, self.stall_after) is not None else said
        turn = f"{state.turn}/{state.max_turns}"
        took = seconds(state.elapsed(now)) if self.show_times else ""
        count = budget_use(state)
        description = one_line(state.description, 120)
        ident: list[str | Content] = [Content.styled(state.id, "bold $text-muted"), " "]
        tail = " ".join(part for part in (turn, count, took) if part)
        extra = f"  {offer}" if offer else ""  # the stall flag offers to ask it for what it has
        for kind, needs in (
            ((state.type, len(description)), ("", min(len(description), 16))) if room >= ONE_LINE else ()
        ):
            fixed = len(state.id) + 1 + len(kind) + 2 * bool(kind) + len(extra) + 2 + len(tail)
            if fixed + needs <= room:  # the type only beside the whole description
                head: list[str | Content] = [Content.styled(kind, "$secondary"), ": "] if kind else []
                return Content.assemble(
                    status_icon(state.status),
                    " ",
                    *ident,
                    *head,
                    Content.styled(fit(description, room - fixed, self.shared), "bold"),
                    Content.styled(extra, "$warning"),
                    "  ",
                    Content.styled(tail, "$text-muted"),
                )
        first = fit(description, room - len(state.id) - 1, self.shared)
        # The time goes first, then the turn; the offer to wrap up goes to a line of its own: the tokens stay.
        for note, parts in [
            *((offer, parts) for parts in ((turn, count, took), (turn, count), (count,))),
            (said, (count,)),
        ]:
            numbers = " · ".join(part for part in parts if part)
            if 4 + len(note) + 3 * bool(note) + len(numbers) <= room + 2:  # under the ▶ and the icon
                shown = Content.styled(f"{note} · ", "$warning") if note else Content("")
                break
        else:  # at 80 columns a note such as "no progress for 1 min 08 s" wraps (a duration kept whole): no number lost
            shown = Content.styled(f"{wrapped(note, numbers, room)} " if note else "", "$warning")
        return Content.assemble(
            status_icon(state.status),
            " ",
            *ident,
            Content.styled(first, "bold"),
            "\n    ",
            shown,
            Content.styled(numbers, "$text-muted"),
            Content.styled("\n    w wraps it up", "$warning") if note != offer else "",
        )

    def on_resize(self) -> None:
        self.title = self.line(self.state, self.now())  # type: ignore[assignment]  # the line is cut to the width

    async def show(self, state: Subagent, now: float) -> None:
        self.state = state
        self.title = self.line(state, now)  # type: ignore[assignment]
        if (about := self.about(state)).plain != self._about_text:  # its cost grows as it works
            self._about_text = about.plain
            self._about.update(about)
        if state.finished:
            self._title.finishing = False  # a resume runs it again, and takes m and w again
        if (state.finished, state.cancelling or state.wrapping_up) != (
            self.has_class("-finished"),
            self.has_class("-finishing"),
        ):
            self.set_class(state.finished, "-finished")
            self.set_class(state.cancelling or state.wrapping_up, "-finishing")
            self.refresh_bindings()  # no more "x Cancel" (or m, w) in the footer
        if state.plan:
            self._plan.remove_class("-pending")
            self._plan.update(
                Content.assemble(Content.styled(plan_title(state.plan), "$text-muted"), "\n", plan_content(state.plan))
            )
        recent = state.recent_tools()
        lines = [
            Content.assemble(
                status_icon({"ok": "done", "error": "failed"}.get(t.status, "running")),
                " ",
                Content.styled(t.name, "bold"),
                " ",
                one_line(t.summary, 40),
            )
            for t in recent
        ]
        self._tools.update(Content("\n").join(lines) if lines else Content("no tool calls yet"))
        if state.files_changed:
            self._files.remove_class("-pending")
            self._files.update(Content("changed: " + ", ".join(state.files_changed)))
        if state.finished and state.result and state.result != self._shown_result:
            self._shown_result = state.result
            self._result.remove_class("-pending")
            await self._result.update(state.result)


class ContextBars(Static):
    """The panel header's two bars, drawn to the width the panel has when it is drawn."""

    counts: tuple[int, int, int] = (0, 0, 0)  # the main context now, with the children's work, the window

    def render(self) -> Content:
        used, alone, window = self.counts
        labels = (WITH, WITHOUT)  # worded as /cost words them, where the panel is wide enough for bars of 8
        if self.content_size.width - len(WITHOUT) - 12 < 8:  # narrow (80 columns): under "Subagents", shorter
            labels = ("with", "without")
        width = max(4, self.content_size.width - len(labels[1]) - 12)
        return Content.assemble(
            f"{labels[0]:<{len(labels[1])}} ",
            Content.styled(bar(used, window, width), "$primary"),
            f" {tokens(used)} tok\n",
            f"{labels[1]} ",
            Content.styled(bar(alone, window, width), "$warning"),
            f" {tokens(alone)} tok",
        )


class Hint(Static):
    """Phrases joined by " · ", wrapped between phrases (never inside one) to the width it has."""

    def __init__(self, phrases: tuple[str, ...], id: str) -> None:
        super().__init__(id=id)
        self.phrases = phrases

    def render(self) -> Content:
        width, lines = self.content_size.width or 80, [""]
        for phrase in self.phrases:
            joined = f"{lines[-1]} · {phrase}" if lines[-1] else phrase
            if len(joined) <= width or not lines[-1]:
                lines[-1] = joined
            else:
                lines.append(phrase)
        return Content("\n".join(lines))


class SidePanel(Vertical):
    DEFAULT_CSS = """
    SidePanel {
        width: 38%; min-width: 30; max-width: 72; height: 1fr; background: $panel; border-left: vkey $primary 40%;
        &.-hidden { display: none; }
        #panel-title { padding: 0 1; text-style: bold; color: $primary; background: $panel; }
        #panel-hint { padding: 0 1; color: $text-muted; }
        #panel-inbox { padding: 0 1; color: $warning; text-style: bold; }
        #panel-context { padding: 0 1; color: $text-muted; text-wrap: nowrap; &.-empty { display: none; } }
        #entries { margin: 1 0 0 0; }
        #entries { height: 1fr; scrollbar-size-vertical: 1; }
    }
    """

    def __init__(self, *, show_times: bool = True, stall_after: float = 60.0) -> None:
        super().__init__(id="side-panel", classes="-hidden")
        self.show_times = show_times
        self.stall_after = stall_after
        self.entries: dict[str, SubagentEntry] = {}
        self.now: Callable[[], float] = lambda: 0.0

    def compose(self) -> ComposeResult:
        yield Static("Subagents", id="panel-title")
        yield Hint(("enter open", "space expand", "x cancel"), id="panel-hint")
        inbox = Static("", id="panel-inbox")
        inbox.display = False
        yield inbox
        yield ContextBars(id="panel-context", classes="-empty")
        yield VerticalScroll(id="entries")

    @property
    def is_open(self) -> bool:
        return not self.has_class("-hidden")

    def open(self, visible: bool = True) -> None:
        self.set_class(not visible, "-hidden")

    async def show(self, state: Subagent, now: float) -> None:
        """Add or update the entry of one subagent (new ones go on top)."""
        entry = self.entries.get(state.id)
        if entry is None:
            entry = self.entries[state.id] = SubagentEntry(
                state, show_times=self.show_times, now=self.now, stall_after=self.stall_after
            )
            entries = self.query_one("#entries", VerticalScroll)
            await entries.mount(entry, before=0 if entries.children else None)
        await entry.show(state, now)
        self.entries_changed(now)

    def entries_changed(self, now: float) -> None:
        """The title's count; and, when an entry came or went, what tells the entries apart, for each."""
        shared = shared_start([one_line(e.state.description, 120) for e in self.entries.values()])
        for entry in self.entries.values():
            if entry.shared != shared:
                entry.shared = shared
                entry.title = entry.line(entry.state, now)  # type: ignore[assignment]
        self.query_one("#panel-title", Static).update(f"Subagents ({len(self.entries)})")

    async def drop_finished(self) -> None:
        """/clear: finished entries leave the panel (their transcripts stay, through /agents and ctrl+o)."""
        gone = [entry for entry in self.entries.values() if entry.state.finished]
        for entry in gone:
            del self.entries[entry.agent_id]
        await self.query_one("#entries", VerticalScroll).remove_children(gone)
        self.entries_changed(self.now())

    def focused_id(self) -> str | None:
        node: DOMNode | None = self.screen.focused
        while node is not None:
            if isinstance(node, SubagentEntry):
                return node.agent_id
            node = node.parent
        return None

    def focus_newest(self) -> bool:
        """Focus the newest running entry, or else the newest one; False when there is none."""
        entries = [
            child for child in self.query_one("#entries", VerticalScroll).children if isinstance(child, SubagentEntry)
        ]  # newest first
        chosen = next((e for e in entries if not e.state.finished), entries[0] if entries else None)
        if chosen is None:
            return False
        chosen.query_one(EntryTitle).focus()
        return True

    def show_inbox(self, line: str) -> None:
        """The approval inbox: how many wait and for whom ("" hides it)."""
        inbox = self.query_one("#panel-inbox", Static)
        inbox.update(line)
        inbox.display = bool(line)

    def show_context(self, used: int, alone: int, window: int) -> None:
        """Two bars: the main context now, and what it would weigh had it done its subagents' work itself;
        shown once a subagent started, also before its first call reported what it holds."""
        widget = self.query_one("#panel-context", ContextBars)
        widget.set_class((alone <= used and not self.entries) or not window, "-empty")
        if window:
            widget.counts = (used, alone, window)
            widget.refresh()
