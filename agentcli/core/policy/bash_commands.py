"""What a bash command line runs, as ``bash_syntax.parse`` reads it: its simple commands and their words.

Permission rules (rules.py) and the effects of known programs (bash_effects.py) work on these values;
how a line is read into them is in bash_syntax.py.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cached_property

Word = str | None  # None: known only when bash runs the command


@dataclass(frozen=True)
class SimpleCommand:
    text: str  # as written, whitespace between words collapsed, with its redirections
    bare: str  # the same without leading VAR=value assignments
    words: tuple[Word, ...] = ()  # its words after quote removal, without assignments and redirections
    assignments: tuple[str, ...] = ()  # leading VAR=value, as written
    redirects: tuple[str, ...] = ()  # as written: "> out.log", "2>&1"
    writes: tuple[str, ...] = ()  # how it writes files: ">" for a redirection, or the options, e.g. "--output"
    dynamic: str = ""  # the first part whose value is known only when it runs, as written; "" when none
    stdin: bool = False  # a heredoc or here-string feeds it text written on the line
    globs: tuple[int, ...] = ()  # which words are file name patterns (``src/*.py``), kept as written
    spelled: tuple[str, ...] = ()  # each word as written (``text`` is assignments, these, redirections)
    written: tuple[int, ...] = ()  # the words that name what it writes: ``--output=x``, a tee's files
    written_redirects: tuple[int, ...] = ()  # the redirections that write a file
    writes_around: bool = False  # a redirection of the group around it writes (``{ ls; } > f``), not its own

    @property
    def writes_file(self) -> bool:
        """It writes to a file it names: a redirection (not to /dev/null or a descriptor), or an option."""
        return bool(self.writes)

    @property
    def program(self) -> str:
        return self.words[0] or "" if self.words else ""

    @cached_property
    def canonical(self) -> str:
        """The command as a shell would quote it (``grep 'a b' x``); "" when it is dynamic."""
        if self.dynamic:
            return ""
        return " ".join([*self.assignments, quote_words(self.words), *self.redirects]).strip()

    def spellings(self) -> tuple[str, ...]:
        """Every way to write it that a deny or ask rule is checked against."""
        found = [self.text, self.bare]
        if self.canonical:
            found += [self.canonical, " ".join([quote_words(self.words), *self.redirects])]
        return tuple(dict.fromkeys(s for s in found if s))

    def marked_spellings(self) -> tuple[str, ...]:
        """The command as written and as a shell would quote it, each character of what it writes (the
        words and redirections that name it) preceded by ``WRITTEN``, so that a rule can require those
        characters to be matched by its own text, not by a ``*``: ``Rule.names_writes``."""
        if self.dynamic:
            return ()
        redirects = [WRITTEN * bool(i in self.written_redirects) + r for i, r in enumerate(self.redirects)]
        found = []
        for words in (self.spelled, [quote_words([w]) for w in self.words]):
            if len(words) == len(self.words):
                marked = [WRITTEN * bool(i in self.written) + w for i, w in enumerate(words)]
                found.append(" ".join(_mark([*self.assignments, *marked, *redirects])))
        return tuple(dict.fromkeys(found))

    def static_prefix(self) -> str:
        """Its words up to the first one known only when it runs, quoted as a shell would."""
        static: list[str] = []
        for word in self.words:
            if word is None:
                break
            static.append(word)
        return quote_words(static)


WRITTEN = "\0"  # marks a character that names what a command writes (bash passes no NUL in a command line)


def _mark(pieces: list[str]) -> list[str]:
    """Pieces whose leading WRITTEN says "all of me is written": WRITTEN before each of their characters."""
    return [WRITTEN + WRITTEN.join(p[1:]) if p.startswith(WRITTEN) else p for p in pieces if p]


_PLAIN = re.compile(r"[\w@%+=:,./-][\w@%+=:,./#-]*")


def quote_words(words: tuple[Word, ...] | list[Word] | list[str]) -> str:
    """Words as a shell would read them back: quoted only where they need it (``grep 'a b' x``)."""
    return " ".join(w if w and _PLAIN.fullmatch(w) else shlex.quote(w or "") for w in words)


@dataclass(frozen=True)
class CommandLine:
    commands: tuple[SimpleCommand, ...]  # every simple command, those inside $(...) and backticks too
    substitution: bool  # $(...), backticks, <(...) or >(...)
    unknown: str = ""  # why agentcli cannot tell what the line runs, as a clause ("it defines a function")

    @cached_property
    def writes_file(self) -> bool:
        return any(c.writes_file for c in self.commands)
