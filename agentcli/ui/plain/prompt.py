"""The input line: completion of /commands and @paths, keys for new lines, and the history file."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import in_terminal
from prompt_toolkit.application.current import get_app
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.history import FileHistory, History
from prompt_toolkit.key_binding import KeyBindings, KeyPress, KeyPressEvent
from prompt_toolkit.keys import Keys

from ... import paths
from ...core.door import MODES, Mention, WorkspaceFiles, complete_mentions
from .. import slash

MAX_MATCHES = 40


def history_path() -> Path:
    return paths.data_home() / "plain-history"


def file_history() -> History:
    path = history_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileHistory(str(path))


def continuation(width: int, line_number: int, soft_wrap: int) -> str:
    """The margin of the second and later lines of a message (none where a long line wraps)."""
    return "" if soft_wrap else " " * (width - 2) + "┆ "


async def prompt_line(session: PromptSession[str], message: AnyFormattedText, **options: Any) -> str:
    """What is typed at ``session``'s prompt. Line mode's every prompt reads through here, so that none installs
    prompt-toolkit's handler of the loop's unhandled errors: that handler prints the error, then waits for enter
    ("Press ENTER to continue...") with the prompt's keys taken from it, so one stray error in the background
    would stop a question, or the next message, from ever being read."""
    return await session.prompt_async(message, set_exception_handler=False, **options)


def typed_text(keys: list[KeyPress]) -> str:
    """Roughly what the prompt will show once these keys reach it."""
    text = ""
    for key in keys:
        if key.key in (Keys.Backspace, Keys.ControlH):
            text = text[:-1]
        elif key.key in (Keys.ControlM, Keys.ControlJ):
            text += "\n"
        elif key.key == Keys.BracketedPaste or (len(key.data) == 1 and key.data.isprintable()):
            text += key.data
    return text


class FileIndex:
    """The workspace's files for '@' (core/engine/mentions.py's ``WorkspaceFiles``), listed again in a thread
    when stale; completion matches against the latest list."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.listed = WorkspaceFiles(root)
        self._reading: asyncio.Task[None] | None = None

    @property
    def files(self) -> list[str]:
        return self.listed.files

    def refresh(self) -> None:
        """Read the file list again in the background when it is stale."""
        if not self.listed.stale() or (self._reading and not self._reading.done()):
            return
        self._reading = asyncio.get_running_loop().create_task(self.read())

    async def read(self) -> None:
        self.listed = await asyncio.to_thread(WorkspaceFiles(self.root).read)


class PlainCompleter(Completer):
    """'/' at the start completes commands (and some arguments); '@' anywhere what core's complete_mentions
    offers: the session's names (agent types, subagents, …), then paths."""

    def __init__(
        self,
        files: FileIndex,
        transcripts: Callable[[], list[tuple[str, str]]],
        custom: Callable[[], list[slash.SlashCommand]] = list,
        mentions: Callable[[], list[Mention]] = list,
    ) -> None:
        self.files = files
        self.mentions = mentions  # the names '@' completes besides files: agent types, subagents, …
        self.transcripts = transcripts  # (number, label) of this session's subagents
        self.custom = custom  # the session's custom commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and "\n" not in before:
            head, space, arg = before.partition(" ")
            if not space:
                for command in slash.complete(head, "plain", self.custom()):
                    yield Completion(f"/{command.name}", start_position=-len(before), display_meta=command.help)
                return
            yield from self._argument(head[1:].lower(), arg)
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            for mention in complete_mentions(word[1:], self.files.listed, self.mentions(), MAX_MATCHES):
                meta = (
                    ""
                    if mention.kind == "file"
                    else f"{mention.kind} · {mention.hint}"
                    if mention.hint
                    else mention.kind
                )
                yield Completion(f"@{mention.name}", start_position=-len(word), display=mention.name, display_meta=meta)

    def _argument(self, command: str, arg: str) -> Iterable[Completion]:
        if " " in arg:
            return
        if command == "permissions":
            options = [(mode, "") for mode in MODES]
        elif command == "transcript":
            options = self.transcripts()
        else:
            return
        for value, meta in options:
            if value.startswith(arg):
                yield Completion(value, start_position=-len(arg), display_meta=meta)


def key_bindings(
    on_clear: Callable[[], None], show_outputs: Callable[[], Awaitable[None]], terminal: bool = True
) -> KeyBindings:
    """meta+enter and ctrl+j add a line; ctrl+c clears what is typed (on an empty line it quits, twice);
    ctrl+o shows the whole output of the latest request's tool calls, above the prompt.

    When the input is not a terminal, a newline ("ctrl+j") ends the line, as piped text expects."""
    kb = KeyBindings()

    @kb.add("escape", "enter")
    @kb.add("c-j", filter=Condition(lambda: terminal))
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("c-c", filter=Condition(lambda: bool(get_app().current_buffer.text)))
    def _clear(event: KeyPressEvent) -> None:
        event.current_buffer.reset()
        on_clear()

    @kb.add("c-o")
    def _outputs(event: KeyPressEvent) -> None:
        async def show() -> None:
            async with in_terminal():
                await show_outputs()

        event.app.create_background_task(show())

    return kb
