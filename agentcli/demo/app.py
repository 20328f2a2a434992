"""The full-screen app as the demo runs it: it asks the first question itself, then opens the transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import Settings
from ..ui.tui import app as tui_app
from ..ui.tui.app import AgentApp
from ..ui.tui.opening import Opening
from .intro import INTRO, PROMPT


class DemoApp(AgentApp):
    CSS_PATH = Path(tui_app.__file__).with_name("app.tcss")  # type: ignore[assignment]  # Textual takes a Path too; Textual reads it relative to the subclass
    shown_transcript = False

    async def on_ready(self) -> None:
        """The first frame is up: say what this is, and ask the question that delegates (it waits in the
        queue until the session is open)."""
        await self.conversation.add_notice(INTRO.format(root=self.root), block=True)
        await self.submit(PROMPT)
        self.set_interval(0.2, self.show_transcript)

    def show_transcript(self) -> None:
        """Once, when the answer is in: the subagent's transcript, for a look at what it did."""
        if not self.shown_transcript and not self.busy and self.subagents:
            self.shown_transcript = True
            self.open_transcript(next(reversed(self.subagents)))


def make_demo_app(settings: Settings, root: Path, **options: Any) -> DemoApp:
    return DemoApp(Opening(settings.engine(), root, llm=options.pop("llm", None)), **options)
