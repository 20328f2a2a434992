"""What known programs do with their words: the options that make them write (or run) files, and the
builtins that change nothing. ``rules.split_command`` adds these to what ``bash_syntax`` reads."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from .bash_commands import SimpleCommand, Word

# Builtins that change nothing: a line needs no rule for them (a redirection still counts as a write).
INERT = {"echo", "true", "false", ":", "pwd"}


def inert(command: SimpleCommand) -> bool:
    if command.writes or command.assignments or not command.words:
        return False
    if command.program in INERT:
        return True
    static = [w or "" for w in command.words]
    return not command.dynamic and (
        command.program in ("[", "test")
        or (command.program == "printf" and not any(w.startswith("-v") for w in static[1:]))
    )


# Options that make a command write (or delete, or run) files named on its command line, so that
# an allow rule written for reading, such as ``bash(git diff *)``, does not cover
# ``git diff --output=/elsewhere``. A rule covers them only when its pattern names what they write
# (``Rule.names_writes``): the option and its value, a tee's files, or the whole command where what is
# written follows from all of it (``sed -i``, ``find -delete``, ``cp``).
# A long option counts in any abbreviation GNU getopt accepts (``--outp`` for ``--output``).
_WRITING_LONG = (
    "output",
    "output-file",
    "output-document",
    "output-directory",
    "out-file",
    "outfile",
    "out",
    "log-file",
    "logfile",
    "in-place",
    "cookie-jar",
    "dump-header",
    "remote-name",
)
_WHOLE_LONG = ("in-place", "remote-name")  # what they write is named by the other words (the files, the URL)
_WRITING_SHORT = {  # command: short options (or find's single-dash words) that write
    "sort": ("-o",),
    "curl": ("-o", "-O", "-D", "-c"),
    "wget": ("-O", "-o", "-a"),
    "sed": ("-i",),
    "perl": ("-i",),
    "cc": ("-o",),
    "gcc": ("-o",),
    "g++": ("-o",),
    "clang": ("-o",),
    "c++": ("-o",),
    "find": ("-fprint", "-fprint0", "-fprintf", "-fls", "-delete", "-exec", "-execdir", "-ok", "-okdir"),
}
_WHOLE_SHORT = {
    "curl": ("-O",),
    "sed": ("-i",),
    "perl": ("-i",),  # as _WHOLE_LONG; find's run or delete
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir"),
}
_GIT_SHORT = {"format-patch": ("-o",), "archive": ("-o",)}  # git subcommand: short options that write
_FILE_WRITERS = ("tee", "cp", "mv")  # every file argument is written (cp's last; mv's sources go)


def writing_options(words: Sequence[Word]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """How a command's words make it write files (``--output``, ``-o``, ``tee``), and which of its words name
    what is written (indexes into ``words``: an option and its value, a tee's files, or every word). Words
    known only when it runs (None) are left out: such a command is never covered by a rule with a pattern."""
    known = [(i, w) for i, w in enumerate(words) if w is not None]
    if not known:
        return (), ()
    program = os.path.basename(known[0][1])
    every = tuple(range(len(words)))
    short, whole_short = _WRITING_SHORT.get(program, ()), _WHOLE_SHORT.get(program, ())
    if program == "git" and len(known) > 1:
        short, whole_short = _GIT_SHORT.get(known[1][1], ()), ()
        if [w for _, w in known[1:3]] == ["bundle", "create"]:
            return ("bundle create",), every
    found: list[str] = []
    places: list[int] = []
    if program == "sed":
        scripts = _sed_scripts_that_write([w for _, w in known[1:]])
        found += scripts
        places += every if scripts else []
    ended = False  # after ``--`` every word is an operand
    for at, (i, word) in enumerate(known[1:], 1):
        value = [known[at + 1][0]] if at + 1 < len(known) else []  # the next word: an option's value
        if ended or word == "-" or not word.startswith("-"):  # an operand
            if program in _FILE_WRITERS:
                found.append(program)
                places += [i] if program == "tee" else every
            elif program == "dd" and word.startswith("of="):
                found.append("of=")
                places.append(i)
        elif word == "--":
            if program not in _FILE_WRITERS:
                break  # the rest are operands, which only the file writers write
            ended = True
        elif word.startswith("--"):
            name = word[2:].split("=", 1)[0]
            if any(long.startswith(name) for long in _WRITING_LONG):
                found.append("--" + name)
                whole = any(long.startswith(name) for long in _WHOLE_LONG)
                places += every if whole else [i] + ([] if "=" in word else value)
        else:
            options = (
                [word]
                if program == "find" and word in short
                else [option for option in short if program != "find" and _sets_short(word, option[1])]
            )
            for option in options:
                found.append(option)
                places += every if option in whole_short else [i] + value
    return tuple(dict.fromkeys(found)), tuple(sorted(set(places)))


def _sets_short(word: str, letter: str) -> bool:
    """Whether ``word`` sets ``-letter``: as its first option (``-ofile``, ``-i.bak``) or in a cluster (``-ni``)."""
    return word[1:2] == letter or (word[1:].isalpha() and letter in word[1:])


def _sed_scripts_that_write(args: list[str]) -> list[str]:
    """sed's scripts that write files (``w FILE``, ``s///w FILE``) or run commands (``e``), as written:
    a rule covers them only when its pattern includes the script. A script file (``-f``) counts too."""
    scripts: list[str] = []
    found: list[str] = []
    i, given = 0, False
    while i < len(args):
        word = args[i]
        if word.startswith("--"):
            name, _, value = word[2:].partition("=")
            if name and "expression".startswith(name):
                scripts.append(value if "=" in word else (args[i + 1] if i + 1 < len(args) else ""))
                i += 0 if "=" in word else 1
                given = True
            elif name and "file".startswith(name):
                found.append(word)
                given = True
        elif word.startswith("-") and len(word) > 1:
            for j, letter in enumerate(word[1:], 1):
                if letter in "ef":
                    value = word[j + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
                    i += 0 if word[j + 1 :] else 1
                    given = True
                    scripts.append(value) if letter == "e" else found.append("-f")
                    break
                if letter in "il":
                    break  # the rest of the word is its value
        elif not given:
            scripts.append(word)
            given = True
        i += 1
    return found + [script for script in scripts if _sed_writes(script)]


def _sed_writes(script: str) -> bool:
    """Whether a sed script uses w, W or e (or anything this cannot read)."""
    i, n = 0, len(script)

    def regex(at: int) -> int:  # index past the closing delimiter
        delim = script[at]
        at += 1
        while at < n and script[at] != delim:
            at += 2 if script[at] == "\\" else 1
        return at + 1

    while i < n:
        ch = script[i]
        if ch in " \t\n;{}!":
            i += 1
            continue
        if ch.isdigit() or ch in "$,~+":
            i += 1
            continue
        if ch == "/":
            i = regex(i)
            continue
        if ch == "\\" and i + 1 < n:
            i = regex(i + 1)
            continue
        if ch in "aic#:btTrR":  # text, a comment, a label, or a file read: to the end of the line
            end = script.find("\n", i)
            if ch in "btT":
                end = min((e for e in (script.find(";", i), end) if e != -1), default=-1)
            i = n if end == -1 else end
            continue
        if ch in "sy":
            if i + 1 >= n or script[i + 1] in "\\\n":
                return True
            i = regex(regex(i + 1) - 1)
            flags = re.match(r"[gpiImMe0-9w]*", script[i:]).group()  # type: ignore[union-attr]
            if ch == "s" and ("w" in flags or "e" in flags):
                return True
            i += len(flags)
            continue
        if ch in "wWe":
            return True
        if ch in "=dDgGhHlnNpPxzqQlLFv":
            i += 1
            continue
        return True
    return False
