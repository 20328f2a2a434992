"""The input: a multi-line TextArea with history and completion of '@' files and '/' commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from ...slash import SlashCommand
from ..completion import MAX_SHOWN, Candidate, Word, candidates

if TYPE_CHECKING:
    from ....core.door import Mention, WorkspaceFiles


class Completions(OptionList):
    DEFAULT_CSS = """
    Completions {
        height: auto; max-height: 10; border: none; padding: 0 1; background: $surface;
        &.-hidden { display: none; }
    }
    """

    def __init__(self) -> None:
        super().__init__(id="completions", classes="-hidden")
        self.items: list[Candidate] = []
        self.word = Word("", 0)

    @property
    def showing(self) -> bool:
        return not self.has_class("-hidden")

    def offer(self, word: Word, items: list[Candidate]) -> None:
        self.word, self.items = word, items
        self.clear_options()
        self.add_options(
            Option(
                Content.assemble(
                    Content.styled(c.label, "bold"), Content.styled(f"  {c.hint}", "$text-muted") if c.hint else ""
                )
            )
            for c in items
        )
        self.set_class(not items, "-hidden")
        if items:
            self.highlighted = 0

    def hide(self) -> None:
        self.items = []
        self.add_class("-hidden")

    def chosen(self) -> Candidate | None:
        if not self.showing or self.highlighted is None or self.highlighted >= len(self.items):
            return None
        return self.items[self.highlighted]


class PromptInput(TextArea):
    """Enter sends; ctrl+s sends the other way while the agent works (steer or queue); ctrl+j or shift+enter
    breaks the line; up and down at the edges recall history."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; border: tall $primary 50%; padding: 0 1; }
    PromptInput:focus { border: tall $primary; }
    """

    class Submitted(Message):
        def __init__(self, text: str, other_way: bool = False) -> None:
            super().__init__()
            self.text = text
            self.other_way = other_way  # ctrl+s: steer where enter queues, or queue where enter steers

    def __init__(self, *, blink: bool = True) -> None:
        super().__init__(
            id="prompt",
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            highlight_cursor_line=False,
            placeholder="Ask about this repository — @ adds a file, / runs a command, enter sends",
        )
        self.cursor_blink = blink
        self.sent: list[str] = []
        self._recall: int | None = None  # index into history while browsing it
        self._draft = ""
        self.typing = False  # the last key typed text here: keys elsewhere are text too, until tab or a click
        self.to_panel: Callable[[], bool] = lambda: False  # tab on an empty input: the panel, if it has entries

    @property
    def completions(self) -> Completions:
        return self.screen.query_one(Completions)

    async def _on_key(self, event: events.Key) -> None:
        self.typing = event.is_printable or event.key in ("backspace", "delete")
        menu = self.completions
        handled = True
        if menu.showing and event.key in ("up", "down"):
            menu.action_cursor_up() if event.key == "up" else menu.action_cursor_down()
        elif menu.showing and event.key in ("tab", "enter"):
            chosen = menu.chosen()
            self.accept(chosen)
            if event.key == "enter" and chosen is not None and chosen.complete:
                self.submit()  # /help, /cost, ...: nothing more to type
        elif menu.showing and event.key == "escape":
            menu.hide()
        elif event.key in ("enter", "ctrl+s"):
            self.submit(other_way=event.key == "ctrl+s")
        elif event.key == "tab" and not self.text.strip() and self.to_panel():
            pass
        elif event.key in ("ctrl+j", "shift+enter"):
            self.insert("\n")
        elif event.key == "up" and self.cursor_location[0] == 0:
            self.recall(-1)
        elif event.key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            self.recall(+1)
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def submit(self, other_way: bool = False) -> None:
        text = self.text.strip()
        if not text:
            if other_way:  # ctrl+s on an empty input: the queued messages go into the running turn
                self.post_message(self.Submitted("", other_way=True))
            return
        if not self.sent or self.sent[-1] != text:
            self.sent.append(text)
        self._recall = None
        self.typing = False
        self.clear()
        self.completions.hide()
        self.post_message(self.Submitted(text, other_way))

    def recall(self, step: int) -> None:
        if not self.sent:
            return
        if self._recall is None:
            if step > 0:
                return
            self._draft = self.text
            index = len(self.sent) - 1
        else:
            index = self._recall + step
        if index >= len(self.sent):
            self._recall = None
            self.load_text(self._draft)
        else:
            self._recall = max(0, index)
            self.load_text(self.sent[self._recall])
        self.move_cursor(self.document.end)

    def accept(self, candidate: Candidate | None) -> None:
        menu = self.completions
        if candidate is None:
            menu.hide()
            return
        row = self.cursor_location[0]
        self.replace(candidate.replacement, (row, menu.word.start), self.cursor_location)
        menu.hide()


class PromptBar(Vertical):
    """The input and its completion menu. The workspace's files are listed in a worker thread when '@' is
    first typed, and again when the list is stale; the names are matched here, on each key."""

    DEFAULT_CSS = "PromptBar { height: auto; }"

    def __init__(self, root: Path, *, blink: bool = True) -> None:
        super().__init__(id="prompt-bar")
        self.root = root
        self.commands: Callable[[], list[SlashCommand]] = list  # custom commands and MCP prompts, completed
        # after the built-in ones: the session's, read on each key (an MCP server's prompts come when it connects)
        self.mention_choices: Callable[[], list[Mention]] = list  # agent types, subagents, …: the session's
        self.blink = blink
        self.files: WorkspaceFiles | None = None  # made on the first '@' (the engine module loads then)
        self._listing: Worker[WorkspaceFiles] | None = None

    def compose(self) -> ComposeResult:
        yield Completions()
        yield PromptInput(blink=self.blink)

    def mentions(self, typed: str) -> list[Mention]:
        from ....core.door import complete_mentions as complete

        return complete(typed, self.files, self.mention_choices(), MAX_SHOWN)

    @on(TextArea.Changed)
    def _suggest(self, event: TextArea.Changed) -> None:
        area = event.text_area
        row, column = area.cursor_location
        line = area.document.get_line(row)
        word, items = candidates(line, column, row, self.mentions, self.commands())
        if word.text.startswith("@") and (self.files is None or (word.text == "@" and self.files.stale())):
            self.refresh_files()
        self.query_one(Completions).offer(word, items)

    def refresh_files(self) -> None:
        """List the files again in a worker thread (one at a time); the menu follows when it is done."""
        if self._listing is not None and self._listing.state in (WorkerState.PENDING, WorkerState.RUNNING):
            return
        from ....core.door import WorkspaceFiles

        root = self.root
        self._listing = self.run_worker(lambda: WorkspaceFiles(root).read(), thread=True, group="files", exclusive=True)

    @on(Worker.StateChanged)
    def _listed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._listing and event.state == WorkerState.SUCCESS:
            self.files = event.worker.result
            area = self.query_one(PromptInput)
            self._suggest(TextArea.Changed(area))
