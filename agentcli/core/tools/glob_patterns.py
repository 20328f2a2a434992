"""Glob patterns, as the search tools read them: the glob tool's pattern matched in Python (``compile_glob``: ``**``
crosses folders, ``*`` and ``?`` stay within one, ``{a,b}`` alternatives, a pattern without a slash matches at any
depth) and the names rg may list for it (``name_globs``); and a gitignore-style pattern relative to the workspace
root (a ``glob`` argument, a deny rule) rewritten for rg running in a folder below it (``rebased_globs``)."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path


def rebased_globs(pattern: str, root: Path, searched: Path) -> list[str]:
    """rg globs for a search run in ``searched`` that match what ``pattern`` matches there, where
    ``pattern`` is gitignore-style and relative to ``root`` (or absolute: ``/``, ``~``, ``..``, as
    rules write them). A pattern without a slash matches at any depth and stays as it is. [] when it
    can match nothing under ``searched``; ``["**"]`` when ``searched`` lies in what it matches."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    while body.startswith("./"):
        body = body[2:]
    if "/" not in body.rstrip("/") and not body.startswith(("~", "..")):
        try:
            above = searched.relative_to(root).parts
        except ValueError:
            above = ()
        if any(fnmatch.fnmatchcase(part, body.rstrip("/")) for part in above):
            return ["!**" if negated else "**"]  # the search lies in a folder it names: all of it
        return [pattern]
    dir_only = body.endswith("/")
    body = body.rstrip("/")
    anchored = (
        os.path.normpath(root / os.path.expanduser(body))
        if body.startswith(("/", "~", ".."))
        else os.path.normpath(root) + "/" + body.lstrip("/")
    )
    wanted = [part for part in anchored.split("/") if part]
    place = [part for part in str(searched).split("/") if part]
    found: list[str] = []

    def walk(p: int, t: int) -> None:
        if len(found) > 64:
            return
        if t == len(place):  # the searched folder reached: the rest of the pattern applies below it
            rest = wanted[p:]
            found.append("**" if not rest or rest == ["**"] else "/" + "/".join(rest) + ("/" if dir_only else ""))
            return
        if p == len(wanted):  # the pattern matched a folder the search lies in: all of it
            found.append("**")
            return
        if wanted[p] == "**":
            walk(p + 1, t)
            walk(p, t + 1)
        elif fnmatch.fnmatchcase(place[t], wanted[p]):
            walk(p + 1, t + 1)

    walk(0, 0)
    if len(found) > 64:
        found = ["**"]  # too many ways to match: the whole folder, which is the safe side for a denial
    globs = list(dict.fromkeys(found))
    return [("!" + g if negated else g) for g in globs]


def _expand_braces(pattern: str, limit: int = 256) -> list[str]:
    """Expand {a,b} alternatives (nested too): 'src/*.{ts,tsx}' -> ['src/*.ts', 'src/*.tsx']."""
    depth = 0
    start = -1
    for i, ch in enumerate(pattern):
        if ch == "\\":
            continue
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                body = pattern[start + 1 : i]
                options, level, current = [], 0, ""
                for c in body:
                    if c == "," and level == 0:
                        options.append(current)
                        current = ""
                        continue
                    level += c == "{"
                    level -= c == "}"
                    current += c
                options.append(current)
                if len(options) < 2:
                    continue
                results: list[str] = []
                for option in options:
                    results.extend(_expand_braces(pattern[:start] + option + pattern[i + 1 :], limit))
                    if len(results) >= limit:
                        break
                return results[:limit]
    return [pattern]


def _translate(pattern: str) -> str:
    """A regex for one glob: ** crosses directories, * and ? stay within one, [..] is a class."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            if pattern.startswith("**", i):
                i += 2
                while i < n and pattern[i] == "*":
                    i += 1
                if i < n and pattern[i] == "/":
                    out.append("(?:.*/)?")  # zero or more directories
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _alternatives(pattern: str) -> list[str]:
    """The glob's alternatives, each relative to the search directory: braces expanded, and a
    pattern without a slash made to match file names at any depth ('*.py' is '**/*.py')."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    alternatives = []
    for alt in _expand_braces(pattern):
        alt = alt.lstrip("/") if alt.startswith("/") else alt
        if "/" not in alt.rstrip("/"):
            alt = "**/" + alt
        alternatives.append(alt.rstrip("/") if alt.endswith("/") else alt)
    return alternatives


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A compiled matcher for paths relative to the search directory.

    A pattern without a slash matches file names at any depth ('*.py' is '**/*.py').
    """
    return re.compile("(?:" + "|".join(_translate(alt) for alt in _alternatives(pattern)) + r")\Z", re.DOTALL)


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.*?-]+\Z")  # means the same to rg's file types as in a glob's last part


def name_globs(pattern: str) -> list[str] | None:
    """Globs for the last part of each of the pattern's alternatives, for rg to list only files whose
    names match one (a file type: ``--type-add``, ``--type``); None when a last part is not a plain
    name ('**', classes). rg checks types after .gitignore, so a type never lists a file .gitignore
    leaves out, as a ``--glob`` would (it overrides .gitignore); the whole pattern is still matched
    in Python."""
    names = []
    for alt in _alternatives(pattern):
        name = alt.rsplit("/", 1)[-1]
        if "**" in name or not _PLAIN_NAME.match(name):
            return None
        names.append(name)
    return names


def names_say_all(pattern: str) -> bool:
    """Whether ``name_globs`` says all the pattern does: each alternative is a name at any depth ('*.py',
    '**/test_*.py'), which rg's file type checks as the whole pattern would, so nothing is left to match in
    Python."""
    return name_globs(pattern) is not None and all(
        alt.startswith("**/") and "/" not in alt[3:] for alt in _alternatives(pattern)
    )
