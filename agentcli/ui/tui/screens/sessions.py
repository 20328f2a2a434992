"""/resume: pick an earlier session of this workspace; the app then reopens on it."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from ....core.door import SessionInfo, list_sessions
from ...escapes import visible
from ...format import tokens, turns
from ..format import one_line
from .dialog import Dialog


class SessionPicker(Dialog[str | None]):
    """The workspace's sessions, most recent first; enter picks one, esc keeps the current session."""

    DEFAULT_CSS = """
    #sessions {
        max-height: 80%;
    }

    #sessions-hint {
        color: $text-muted;
        margin: 0 0 1 0;
    }

    #sessions-list {
        height: auto;
        max-height: 20;
        border: none;
    }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Keep this session")]

    def __init__(self, root: Path, current: str) -> None:
        super().__init__()
        self.root = root
        self.current = current
        self._listing: Worker[list[SessionInfo]] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions", classes="dialog"):
            yield Static(Content.styled("Resume a session", "bold"), id="sessions-title")
            yield Static("Reading this workspace's sessions…", id="sessions-hint")
            yield OptionList(id="sessions-list")

    def on_mount(self) -> None:
        self._listing = self.run_worker(lambda: list_sessions(self.root), thread=True, group="sessions")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._listing or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        sessions = [s for s in (event.worker.result or []) if s.id != self.current]
        hint = self.query_one("#sessions-hint", Static)
        if not sessions:
            hint.update("No other session of this workspace to resume. esc goes back.")
            return
        hint.update("enter resumes the session · esc keeps this one")
        options = self.query_one("#sessions-list", OptionList)
        options.add_options(
            Option(
                Content.assemble(
                    Content.styled(s.id, "bold"),
                    "  ",
                    Content.styled(
                        f"{s.started[:16].replace('T', ' ')}  {turns(s.turns)}  {tokens(s.usage.total_tokens)} tok",
                        "$text-muted",
                    ),
                    "\n  ",
                    one_line(visible(s.first_prompt) or "(no prompt)", 100),
                ),
                id=s.id,
            )
            for s in sessions
        )
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
