"""A subagent's full transcript: the brief, every message, every tool call with input and output, the result.

It is fed the subagent's events so far, then live ones while the child runs.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Footer, Static

from ....core.events import Event
from ...format import seconds, tokens
from ...view import Subagent
from ..format import status_icon
from ..messages import CancelSubagent
from ..widgets.conversation import Conversation
from .layout import OneLayoutScreen


class TranscriptScreen(OneLayoutScreen[None]):
    # Default CSS, not a CSS_PATH: a screen's own stylesheet is added on its first push, and Textual then
    # parses the app's whole stylesheet again and restyles every widget of every screen (a third of the
    # first ctrl+o). A widget class's default CSS is only added.
    DEFAULT_CSS = """
    TranscriptScreen { background: $background; }
    #transcript-header { height: auto; padding: 0 2; background: $panel; border-bottom: hkey $primary 40%; }
    #transcript { padding: 1 2; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("x", "cancel", "Cancel subagent"),
        Binding("end", "follow", "Latest output"),
    ]

    def __init__(
        self, state: Subagent, *, show_times: bool = True, now: Callable[[], float], stall_after: float = 60.0
    ) -> None:
        super().__init__()
        self.state = state
        self.stall_after = stall_after
        self.show_times = show_times
        self.now = now
        self.conversation = Conversation(
            show_times=show_times,
            expand_tools=True,
            brief_label="brief",
            max_widgets=5000,
            follow=False,
            id="transcript",
        )
        self.header = Static(id="transcript-header")  # held: the app's clock tick may refresh it before compose

    @property
    def agent_id(self) -> str:
        return self.state.id

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.conversation
        yield Footer()

    async def on_mount(self) -> None:
        self.refresh_header()
        await self.conversation.replay(list(self.state.events))
        self.conversation.scroll_home(animate=False)  # at the brief; end jumps to the latest output
        self.conversation.focus()

    def refresh_header(self) -> None:
        s = self.state
        facts = [s.state(self.now(), self.stall_after), f"turn {s.turn}/{s.max_turns}", f"{tokens(s.tokens)} tokens"]
        if s.summarized:
            facts.append("summarized after the cut-off")
        if self.show_times:
            facts.append(seconds(s.elapsed(self.now())))
        self.header.update(
            Content.assemble(
                status_icon(s.status),
                " ",
                Content.styled(f"{s.id} · {s.type}", "bold"),
                "  ",
                s.description,
                "\n",
                Content.styled(" · ".join(facts) + "   (esc closes)", "$text-muted"),
            )
        )

    async def apply(self, event: Event) -> None:
        await self.conversation.apply(event)
        self.refresh_header()
        if self.state.finished:
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "cancel" and self.state.finished)  # nothing to cancel: not offered

    def on_key(self, event: events.Key) -> None:
        if event.key == "x" and self.state.finished:  # not offered, but pressed: the app says why
            self.post_message(CancelSubagent(self.state.id))

    def action_close(self) -> None:
        self.dismiss()

    def action_cancel(self) -> None:
        self.post_message(CancelSubagent(self.state.id))

    def action_follow(self) -> None:
        self.conversation.anchor()
