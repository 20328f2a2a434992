"""The input line: completion of /commands and @paths, keys for new lines, and the history file."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from typing import Awaitable, Callable, Iterable

from prompt_toolkit.application import in_terminal
from prompt_toolkit.application.current import get_app
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from ... import paths
from ...core.session import MODES
from ...core.tools.rg import COMMON_RG_ARGS, rg_path
from ...core.system.secret_env import command_env
from .. import slash

MAX_FILES = 50_000
MAX_MATCHES = 40
STALE_AFTER = 10.0  # seconds before the file list is read again


def history_path() -> Path:
    return paths.data_home() / "plain-history"


class FileIndex:
    """The workspace's files as ripgrep lists them: .gitignore honoured, hidden files in, .git out."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: list[str] = []
        self.dirs: list[str] = []
        self.read_at = float("-inf")
        self._reading: asyncio.Task[None] | None = None

    def refresh(self) -> None:
        """Read the file list again in the background when it is stale."""
        if time.monotonic() - self.read_at < STALE_AFTER or (self._reading and not self._reading.done()):
            return
        self._reading = asyncio.get_running_loop().create_task(self.read())

    async def read(self) -> None:
        files = await asyncio.to_thread(self._list)
        dirs = {str(Path(f).parent) for f in files} - {"."}
        for d in list(dirs):
            dirs.update(str(p) for p in Path(d).parents if str(p) != ".")
        self.files, self.dirs, self.read_at = files, sorted(f"{d}/" for d in dirs), time.monotonic()

    def _list(self) -> list[str]:
        rg = rg_path()
        if rg is None:
            return []
        try:
            done = subprocess.run([rg, "--files", *COMMON_RG_ARGS], cwd=self.root, capture_output=True, text=True,
                                  timeout=10, stdin=subprocess.DEVNULL, env=command_env())
        except (OSError, subprocess.TimeoutExpired):
            return []
        return sorted(done.stdout.splitlines()[:MAX_FILES])

    def match(self, typed: str) -> list[str]:
        """Paths for what follows '@': prefix matches first, then by file name, then anywhere."""
        needle = typed.lower()
        ranked: list[tuple[int, int, str]] = []
        for path in self.dirs + self.files:
            low = path.lower()
            name = low.rstrip("/").rsplit("/", 1)[-1]
            if low.startswith(needle):
                rank = 0
            elif name.startswith(needle):
                rank = 1
            elif needle in low:
                rank = 2
            else:
                continue
            ranked.append((rank, len(path), path))
        return [path for _, _, path in sorted(ranked)[:MAX_MATCHES]]


class PlainCompleter(Completer):
    """'/' at the start completes commands (and some arguments); '@' anywhere completes paths."""

    def __init__(self, files: FileIndex, transcripts: Callable[[], list[tuple[str, str]]],
                 custom: Callable[[], list[slash.SlashCommand]] = list) -> None:
        self.files = files
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
            for path in self.files.match(word[1:]):
                yield Completion(f"@{path}", start_position=-len(word), display=path,
                                 display_meta="folder" if path.endswith("/") else "")

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


def key_bindings(on_clear: Callable[[], None], show_outputs: Callable[[], Awaitable[None]],
                 terminal: bool = True) -> KeyBindings:
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
