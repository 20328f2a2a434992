"""What the input completes: workspace files after '@' (honouring .gitignore), commands after '/'."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..slash import SlashCommand, complete as complete_command

MAX_FILES = 50_000
MAX_SHOWN = 8


@dataclass(frozen=True)
class Candidate:
    replacement: str  # what replaces the word being typed
    label: str  # what the menu shows
    hint: str = ""
    complete: bool = False  # enter on it sends at once (a command whose argument is optional, or already typed)


@dataclass(frozen=True)
class Word:
    """The word being completed: its text and where it starts on the cursor's line."""

    text: str
    start: int


def list_files(root: Path) -> list[str]:
    """Files of the workspace that git would not ignore, via ``rg --files`` (blocking; run it in a thread)."""
    from ...core.tools.rg import rg_path
    from ...core.system.secret_env import command_env

    rg = rg_path()
    if rg is None:
        return []
    try:
        done = subprocess.run([rg, "--files", "--hidden", "--glob", "!.git"], cwd=root, capture_output=True,
                              text=True, timeout=20, stdin=subprocess.DEVNULL, env=command_env())
    except (OSError, subprocess.TimeoutExpired):
        return []
    return sorted(done.stdout.splitlines()[:MAX_FILES])


def word_at(line: str, column: int) -> Word:
    before = line[:column]
    start = max(before.rfind(" "), before.rfind("\t")) + 1
    return Word(before[start:], start)


def candidates(line: str, column: int, row: int, files: list[str], commands: list[SlashCommand] | None = None
               ) -> tuple[Word, list[Candidate]]:
    """Completions for the word before the cursor: '/cmd' at the very start, '@path' anywhere."""
    word = word_at(line, column)
    if row == 0 and word.start == 0 and word.text.startswith("/"):
        return word, [Candidate(f"/{c.name} ", f"/{c.name} {c.args}".rstrip(), c.help,
                                complete=not c.args or c.args.startswith("[") or word.text.lower() == f"/{c.name}")
                      for c in complete_command(word.text, "tui", commands or ())]
    if word.text.startswith("@"):
        return word, [Candidate(f"@{path} ", path) for path in match_files(word.text[1:], files)]
    return word, []


def match_files(typed: str, files: list[str], limit: int = MAX_SHOWN) -> list[str]:
    """Paths starting with what was typed first, then paths whose file name does, then any containing it."""
    needle = typed.lower()
    prefix, name, inside = [], [], []
    for path in files:
        low = path.lower()
        if low.startswith(needle):
            prefix.append(path)
        elif low.rsplit("/", 1)[-1].startswith(needle):
            name.append(path)
        elif needle in low:
            inside.append(path)
        if len(prefix) >= limit:
            break
    return (prefix + name + inside)[:limit]
