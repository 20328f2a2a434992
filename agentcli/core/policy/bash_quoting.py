"""Bash's quoting undone on the text of one word, as bash 5 reads it: '...', "...", $'...' and heredoc delimiters.

bash_syntax.py's walker finds the words with tree-sitter and hands their text here.
"""

from __future__ import annotations

import re


def _heredoc_delimiter(text: str) -> str:
    """A heredoc's delimiter as bash reads it: quotes and backslashes removed."""
    return re.sub(
        r"""\\(.)|'([^']*)'|"((?:\\.|[^"\\])*)"|(.)""",
        lambda m: next(g for g in m.groups() if g is not None),
        text,
        flags=re.DOTALL,
    )


def _quoted_length(text: str, start: int, quote: str) -> int:
    """Where bash ends a quoted string that opens before ``start``: a backslash escapes the next character."""
    i = start
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _double_quoted(text: str) -> str:
    """Inside "...": a backslash escapes only $ ` " \\ and a newline (which it removes)."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(text: str) -> str | None:
    """The value of $'text', as bash 5 decodes it; None for what this does not decode exactly."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
            continue
        if match := re.match(r"[0-7]{1,3}", text[i + 1 :]):
            code = int(match.group(), 8) & 0xFF
            i += 1 + len(match.group())
        elif match := re.match(r"x([0-9a-fA-F]{1,2})", text[i + 1 :]):
            code = int(match.group(1), 16)
            i += 1 + len(match.group())
        else:
            return None  # \u, \U, \c and unknown escapes depend on the locale or read subtly
        if code == 0 or code > 0x7F:
            return None  # NUL ends the word; bytes above 127 are not characters on their own
        out.append(chr(code))
    return "".join(out)
