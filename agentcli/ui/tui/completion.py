"""What the input completes: after '@' the workspace's files, agent types and subagents; commands after '/'."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..slash import SlashCommand
from ..slash import complete as complete_command

if TYPE_CHECKING:
    from ...core.door import Mention

MAX_SHOWN = 8


@dataclass(frozen=True)
class Candidate:
    """One entry of the completion menu: what it puts in the prompt and what the menu shows."""

    replacement: str  # what replaces the word being typed
    label: str  # what the menu shows
    hint: str = ""
    complete: bool = False  # enter on it sends at once (a command whose argument is optional, or already typed)


@dataclass(frozen=True)
class Word:
    """The word being completed: its text and where it starts on the cursor's line."""

    text: str
    start: int


def word_at(line: str, column: int) -> Word:
    before = line[:column]
    start = max(before.rfind(" "), before.rfind("\t")) + 1
    return Word(before[start:], start)


def candidates(
    line: str,
    column: int,
    row: int,
    mentions: Callable[[str], list[Mention]],
    commands: list[SlashCommand] | None = None,
) -> tuple[Word, list[Candidate]]:
    """Completions for the word before the cursor: '/cmd' at the very start, '@name' anywhere (``mentions``
    gives the names for what follows the '@': core/engine/mentions.py)."""
    word = word_at(line, column)
    if row == 0 and word.start == 0 and word.text.startswith("/"):
        return word, [
            Candidate(
                f"/{c.name} ",
                f"/{c.name} {c.args}".rstrip(),
                c.help,
                complete=not c.args or c.args.startswith("[") or word.text.lower() == f"/{c.name}",
            )
            for c in complete_command(word.text, "tui", commands or ())
        ]
    if word.text.startswith("@"):
        return word, [
            Candidate(
                f"@{m.name}" + ("" if m.kind == "folder" else " "),
                m.name,
                m.hint or ("" if m.kind == "file" else m.kind),
            )
            for m in mentions(word.text[1:])
        ]
    return word, []
