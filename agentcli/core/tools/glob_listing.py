"""The glob tool's listing: the files ``rg --files`` finds, newest first, ties by path.

rg sorts them itself (``--sortr modified``): it stats each file as it lists it, in Rust, on one thread,
which costs about what its parallel listing does; a stat of each match in Python cost as much again as
rg's whole run (1.8-3 µs each, over 3,000 of them in a repository of 4,000 files). rg breaks a tie by
the order it walked in, so the files the tool shows (``keep``), and any after them with the same time,
are stat'ed once more here and put in order: newest first, then by path, as the tool always printed them.
rg prints once it has sorted, so a listing stopped by the timeout holds only what it printed by then.

rg also reads the ignore files of every folder above the one it lists, and matches each file's absolute path
against them, even when there are none: 3% of its run. When no folder above holds a file it would read
there (``PARENT_IGNORES``), ``--no-ignore-parent`` lists the same files without that.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .rg import _rg, _Stopper

NEWEST_FIRST = ("--sortr", "modified")  # rg's own stat and sort, newest first
# What rg reads in a folder above the one it lists: its own ignore files, .gitignore (without git too, as the
# tools run it), and a .git (a folder or a worktree's file) whose info/exclude it would read.
PARENT_IGNORES = (".rgignore", ".ignore", ".gitignore", ".git")


def nothing_above(real: Path) -> bool:
    """Whether no folder above ``real`` (a folder's real path, as rg resolves the one it lists) holds a file
    rg would read there for its ignore rules (a name this process cannot see, rg, which runs as it, cannot
    read either)."""
    folder = str(real)
    while (above := os.path.dirname(folder)) != folder:
        folder = above
        above = above.rstrip("/")
        if any(os.access(f"{above}/{name}", os.F_OK, follow_symlinks=False) for name in PARENT_IGNORES):
            return False
    return True


@dataclass
class Listing:
    found: list[
        str
    ]  # the first ``keep`` paths that matched (and any of the last one's time), newest first, then by path
    matched: int  # paths that matched
    listed: int  # files rg listed
    returncode: int
    stderr: str
    timed_out: float = 0.0


def list_newest(
    args: list[str],
    cwd: Path,
    timeout: float,
    matcher: re.Pattern[str] | None,
    stopper: _Stopper,
    keep: int,
    prefix: str = "",
    real: Path | None = None,
) -> Listing:
    """Run ``rg --files`` (``args``) newest first and count the paths ``matcher`` matches (all, when None: rg's
    file type said it all, ``glob_patterns.names_say_all``); the first ``keep`` of them in the tool's order, each
    shown with ``prefix`` in front. Past ``timeout`` seconds rg is
    stopped, and what it printed so far is the listing (a line cut off is left out). ``real``: the real path
    of the folder listed, when known, for ``nothing_above``."""
    root = os.open(cwd, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        head = _Head(matcher, root, keep)
        above = ("--no-ignore-parent",) if real is not None and nothing_above(real) else ()
        returncode, stderr, timed_out = _rg([*args, *above, *NEWEST_FIRST], cwd, timeout, head.feed, stopper)
        if head.pending and not timed_out:  # a last line without its newline; one the timeout cut off is left out
            head.feed(b"\n")
        found = head.found()
    finally:
        os.close(root)
    shown = [prefix + path for path in found] if prefix else found
    return Listing(shown, head.matched, head.listed, returncode, stderr, timed_out)


class _Head:
    """rg's lines as they come, newest first: the first ``keep`` matches, with every later one of the same time
    as the last of those, stat'ed as they arrive, while rg still prints the rest (its first piece of output
    holds them, in a listing of thousands); past them the matches are only counted, and when rg's file type
    said it all (no ``matcher``), its lines are counted without being decoded."""

    def __init__(self, matcher: re.Pattern[str] | None, root: int, keep: int) -> None:
        self.matcher, self.root, self.keep = matcher, root, keep
        self.pending = b""
        self.listed = 0
        self.matched = 0
        self.waiting: list[str] = []  # matches not yet stat'ed
        self.head: list[tuple[int, str]] = []  # (minus the time, path) of the first matches
        self.full = False  # the head is complete: a later match's time differs from the last one's

    def feed(self, piece: bytes) -> bool:
        data = self.pending + piece
        end = data.rfind(b"\n") + 1
        self.pending = data[end:]
        if not end:
            return True
        if self.full and self.matcher is None:
            lines = data.count(b"\n", 0, end)
            self.listed += lines
            self.matched += lines
            return True
        paths = data[: end - 1].decode("utf-8", errors="replace").split("\n")  # no newline inside a character
        self.listed += len(paths)
        matches = paths if self.matcher is None else list(filter(self.matcher.match, paths))
        self.matched += len(matches)
        if not self.full:
            self.waiting += matches
            self._stat()
        return True

    def _stat(self) -> None:
        head, root = self.head, self.root
        for path in self.waiting:
            try:
                when = -os.stat(path, dir_fd=root).st_mtime_ns
            except OSError:
                when = 1  # a file gone since rg listed it: after every file that has a time
            if len(head) >= self.keep and (not head or when != head[-1][0]):
                self.full = True
                break
            head.append((when, path))
        self.waiting.clear()

    def found(self) -> list[str]:
        """The first matches (all when fewer than ``keep``), newest first, a tie by path."""
        return [path for _, path in sorted(self.head)]
