"""@-mentions: what ``@`` completes in a prompt, and what a mentioned name adds to the message sent.

Completion offers the workspace's files (``WorkspaceFiles``: git's tracked files and the untracked ones it
does not ignore; ``rg --files`` outside git) and the names of every ``MentionSource``: agent types
(``@explore``), this session's subagents (``@sa-3``) and the MCP servers' resources (``@server:uri``);
``Session.mention_sources`` lists them. Listing the files is blocking and runs in a worker
(a thread); matching what was typed against the list is done where the keys are, in a few milliseconds
for 100,000 files (bench/mentions.py).

When the prompt is sent, ``expand`` turns each ``@name`` into blocks: a source's own blocks for one of its
names, else a file of the workspace, attached as read_file reads it (``read_confined``: confined to the
workspace with no symlink followed out of it, regular files only, so a FIFO never blocks, capped), an image
as an image.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .. import images
from ..content import agentcli_note, quoted
from ..events import SubagentReport
from ..mcp.remote import RemoteResource
from ..system.git import UnsafeRepository, find_repository, run_git
from ..system.secret_env import command_env
from ..system.workspace import Workspace
from ..tools.file_access import Unreadable, _digest, count_lines, decode_bytes, is_binary, read_confined
from ..tools.rg import COMMON_RG_ARGS, rg_path
from ..units import turns

MAX_FILES = 500_000  # paths listed for completion; a repository with more completes the first ones only
LIST_TIMEOUT = 30.0  # seconds before listing the files gives up
STALE_AFTER = 10.0  # seconds before the list is read again even when git's index did not change
TIER_CAP = 2_000  # matches of one kind looked at before ranking them
FILE_CAP = 50_000  # characters of one mentioned file in the message
TOTAL_CAP = 200_000  # characters of all mentioned files of one message
MENTION = re.compile(r"(?<![\w@])@([^\s@`'\"()<>\[\]{},;]+)")  # @name, not an e-mail address's @


@dataclass(frozen=True)
class Mention:
    """One completion choice: what follows ``@``, its kind, and a hint for the menu."""

    name: str
    kind: str  # "file", "folder", "agent", "subagent", or a later source's own ("resource")
    hint: str = ""


class MentionSource(Protocol):
    """Names besides files that ``@`` completes, and what each adds to a message."""

    def choices(self) -> Sequence[Mention]:
        """Every name it offers now; quick (no I/O): it runs on each key typed."""

    def expand(self, name: str) -> list[dict[str, Any]] | None:
        """The blocks a mention of ``name`` adds to the message; None when ``name`` is not one of its own."""


# ---------------------------------------------------------------- the workspace's files


def list_files(root: Path, tracked: Callable[[list[str]], object] = lambda files: None) -> list[str]:
    """The workspace's files, relative to ``root``, sorted: in a git repository what git tracks plus the
    untracked files it does not ignore (the hardened runner); elsewhere ``rg --files`` (.gitignore still
    honoured, hidden files in). Blocking; [] when neither can list.

    In git the index is read while another git walks the work tree for the untracked files (the walk is most of
    the time: 100,000 files take it about as long as rg's whole listing), and ``tracked`` is handed the tracked
    files meanwhile, so a caller can index them while the walk goes on; the list returned is that same list
    when nothing is untracked."""
    try:
        repo = find_repository(root)
    except UnsafeRepository:
        repo = None
    if repo is not None:
        walked: list[tuple[int, str, str]] = []
        walk = threading.Thread(
            target=lambda: walked.append(
                run_git(repo, "ls-files", "-z", "--others", "--exclude-standard", "--", timeout=LIST_TIMEOUT)
            ),
            daemon=True,
        )
        walk.start()
        code, out, _ = run_git(repo, "ls-files", "-z", "--cached", "--", timeout=LIST_TIMEOUT)
        files = _sorted_once(out.split("\0"))[:MAX_FILES] if code == 0 else []
        if code == 0:
            tracked(files)
        walk.join()
        if code == 0 and walked and walked[0][0] == 0:
            untracked = walked[0][1].split("\0")
            return _sorted_once(files + untracked)[:MAX_FILES] if any(untracked) else files
    rg = rg_path()
    if rg is None:
        return []
    try:
        done = subprocess.run(
            [rg, "--files", *COMMON_RG_ARGS],
            cwd=root,
            capture_output=True,
            timeout=LIST_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=command_env(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return sorted(done.stdout.decode("utf-8", errors="replace").splitlines())[:MAX_FILES]


def _sorted_once(paths: list[str]) -> list[str]:
    """``paths`` sorted, each once, without the empty one. git prints them in two sorted runs (the untracked, then
    the index), which ``sorted`` merges in one pass (a set first would shuffle them: 50 ms more for 100,000 files);
    a path is there twice only when the index holds it unmerged."""
    paths.sort()
    while paths and not paths[0]:
        del paths[0]
    if any(map(operator.eq, paths, itertools.islice(paths, 1, None))):
        paths = [path for path, _ in itertools.groupby(paths)]
    return paths


def folders_of(files: Iterable[str]) -> list[str]:
    """Every folder the files lie in, each ending in '/', sorted."""
    found: set[str] = set()
    for path in files:
        cut = path.rfind("/")
        while cut > 0:
            folder = path[:cut]
            if folder in found:
                break
            found.add(folder)
            cut = folder.rfind("/")
    return sorted(f"{folder}/" for folder in found)


class WorkspaceFiles:
    """The workspace's files and folders for completion, listed in a worker and matched where keys are typed.

    ``read()`` is the blocking part (a worker thread calls it); ``stale()`` is the cheap look that says
    whether to list again: git's index changed, or ``STALE_AFTER`` seconds passed (untracked files)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: list[str] = []
        self.folders: list[str] = []
        self.listed_at = float("-inf")
        self._index = self._index_stamp()
        self._names = Names([])  # every folder and file, matched against what is typed

    def _index_stamp(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.root / ".git" / "index")
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    def stale(self) -> bool:
        return (time.monotonic() - self.listed_at >= STALE_AFTER) or self._index_stamp() != self._index

    def read(self) -> WorkspaceFiles:
        """Read the list again (blocking: in a worker); returns itself, for a worker's result."""
        index = self._index_stamp()
        early: list[tuple[list[str], list[str], Names]] = []  # the tracked files, indexed while git walks

        def index_tracked(files: list[str]) -> None:
            folders = folders_of(files)
            early.append((files, folders, Names([*folders, *files])))

        files = list_files(self.root, index_tracked)
        if early and early[0][0] is files:
            self.files, self.folders, self._names = early[0]
        else:
            folders = folders_of(files)
            self.files, self.folders, self._names = files, folders, Names([*folders, *files])
        self.listed_at, self._index = time.monotonic(), index
        return self

    def match(self, typed: str, limit: int = 8) -> list[str]:
        """Paths (folders end in '/') for what follows '@': those starting with it, then those whose name
        does, then those containing it, then those holding its characters in order (fuzzy); shorter first
        within each kind."""
        return fuzzy(typed, self._names, limit)


class Names:
    """Names (paths), one a line in one lower-cased string, matched against what was typed in C: each kind of
    match is one regular expression that starts with a literal, which ``re`` finds with a fast search, so
    100,000 names take milliseconds (bench/mentions.py); the fuzzy one is possessive (``[^c]*+c``) and never
    backtracks."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        joined = "\n".join(names)
        self.low = "\n" + joined.lower()  # each name follows a "\n"; lowered at once
        if len(self.low) != len(joined) + 1:  # str.lower() changed a length: the offsets come from the lowered names
            names = [name.lower() for name in names]
            self.low = "\n" + "\n".join(names)
        # where each name's "\n" is in ``low``: the lengths and the "\n" after each added up in C, not a loop of Python's
        self.starts = list(itertools.accumulate(map(operator.add, map(len, names), itertools.repeat(1)), initial=0))[
            :-1
        ]

    def hits(self, pattern: str) -> list[int]:
        """Indexes of the names ``pattern`` matches in (at most TIER_CAP, each once, in order)."""
        found: list[int] = []
        compiled, pos = re.compile(pattern), 0
        while len(found) < TIER_CAP:
            match = compiled.search(self.low, pos)
            if match is None:
                break
            index = bisect.bisect_right(self.starts, match.start()) - 1
            found.append(index)
            pos = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.low)
        return found


def fuzzy(typed: str, names: Names, limit: int) -> list[str]:
    """Names that match ``typed`` (see WorkspaceFiles.match), best first, case-insensitive."""
    if not names.names or not typed:
        return names.names[:limit]
    low = typed.lower()
    q = re.escape(low)
    tiers = [rf"\n{q}", rf"/{q}[^/\n]*+/?(?=\n|\Z)", q]  # a name at the top that starts so is a prefix
    if len(low) > 1:
        tiers.append(re.escape(low[0]) + "".join(f"[^{re.escape(c)}\n]*+{re.escape(c)}" for c in low[1:]))
    found: list[str] = []
    seen: set[int] = set()
    for tier in tiers:
        hits = sorted((i for i in names.hits(tier) if i not in seen), key=lambda i: (len(names.names[i]), i))
        for index in hits[: limit - len(found)]:
            found.append(names.names[index])
            seen.add(index)
        if len(found) >= limit:
            break
    return found


def complete(typed: str, files: WorkspaceFiles | None, others: Sequence[Mention], limit: int = 8) -> list[Mention]:
    """What the menu offers for ``@typed``: the sources' names that start with it (agents, subagents, …),
    then the files and folders."""
    low = typed.lower()
    named = [m for m in others if m.name.lower().startswith(low)][:limit]
    paths = files.match(typed, limit - len(named)) if files is not None and limit > len(named) else []
    return named + [Mention(p, "folder" if p.endswith("/") else "file") for p in paths]


# ---------------------------------------------------------------- the sources of other names


class AgentTypes:
    """``@explore``: asks the main agent to hand the request to that agent type."""

    def __init__(self, types: Callable[[], dict[str, Any]]) -> None:
        self.types = types  # name → AgentType, as the task tool offers them now

    def choices(self) -> list[Mention]:
        return [Mention(name, "agent", _first_line(t.description)) for name, t in self.types().items()]

    def expand(self, name: str) -> list[dict[str, Any]] | None:
        if name not in self.types():
            return None
        return [
            agentcli_note(
                f"The user mentioned the agent type @{name}: delegate this request (or the part of "
                f'it that fits) with the task tool, subagent_type "{name}", and a complete brief.'
            )
        ]


class McpResources:
    """``@server:uri``: the resources the ready MCP servers list. Sending attaches them
    (``mcp.bridge.attach_resources``, which reads them); here they are only named, so nothing is attached twice."""

    def __init__(self, resources: Callable[[], Sequence[RemoteResource]]):
        self.resources = resources

    def choices(self) -> list[Mention]:
        return [
            Mention(f"{r.server}:{r.uri}", "resource", _first_line(r.description) or r.name) for r in self.resources()
        ]

    def expand(self, name: str) -> list[dict[str, Any]] | None:
        return [] if any(f"{r.server}:{r.uri}" == name for r in self.resources()) else None


class SubagentReceipts:
    """``@sa-3``: the receipt of one of this session's subagents, running or finished."""

    def __init__(self, records: Callable[[], dict[str, Any]]) -> None:
        self.records = records  # id → SubagentRecord

    def choices(self) -> list[Mention]:
        return [
            Mention(ident, "subagent", f"{record.status} · {_first_line(record.description)}")
            for ident, record in self.records().items()
        ]

    def expand(self, name: str) -> list[dict[str, Any]] | None:
        record = self.records().get(name)
        if record is None:
            return None
        head = f"The user mentioned subagent @{name} ({record.type}: {_first_line(record.description)})"
        report: SubagentReport | None = record.report
        if record.running or report is None:
            return [
                agentcli_note(
                    f"{head}. It is {record.status} ({turns(record.turns)} so far); its receipt comes with its result."
                )
            ]
        return [agentcli_note(f"{head}. {report.receipt()}\n{report.footer}")]


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:80]


# ---------------------------------------------------------------- what a sent prompt's mentions add


def mentioned(text: str) -> list[str]:
    """The names a prompt mentions with ``@``, in order, each once (trailing punctuation left off)."""
    names: list[str] = []
    for match in MENTION.finditer(text):
        name = match.group(1).rstrip(".:!?")
        if name and name not in names:
            names.append(name)
    return names


@dataclass
class Expanded:
    """What a prompt's mentions add: blocks for the message, warnings for the user, the files attached."""

    blocks: list[dict[str, Any]]
    warnings: list[str]
    files: list[Path]  # the real paths attached, so a typed image path is not attached twice


def expand(
    text: str,
    workspace: Workspace,
    sources: Sequence[MentionSource],
    agent_id: str = "main",
    denied: Callable[[Path], str] = lambda path: "",
) -> Expanded:
    """The blocks the ``@`` mentions of ``text`` add, in the order mentioned, then the workspace's image files
    it names by path. Blocking (files are read). A mention that names nothing is left as text; a file that
    cannot go is a warning, and so is one a read deny rule covers (``denied`` gives the rule's text): the rule
    holds against the user's own hand too."""
    out = Expanded([], [], [])
    room = TOTAL_CAP
    for name in mentioned(text):
        blocks = next((b for b in (s.expand(name) for s in sources) if b is not None), None)
        if blocks is not None:
            out.blocks += blocks
            continue
        path = Path(name)
        absolute = path if path.is_absolute() else workspace.root / path
        if not os.path.lexists(absolute) or name.endswith("/"):
            continue  # not a file here: an ordinary word that starts with @ (or a folder)
        rule = denied(absolute)
        if rule:
            out.warnings.append(f"Not attached: @{name} is denied by the rule `{rule}`.")
            continue
        try:
            blocks, used = _file_blocks(workspace, absolute, name, min(FILE_CAP, room), agent_id, out.files)
        except (Unreadable, images.ImageError) as exc:
            out.warnings.append(f"Not attached: @{name}: {str(exc).rstrip('.')}.")  # one full stop, the name as typed
            continue
        except OSError as exc:
            out.warnings.append(f"Not attached: @{name} cannot be read ({exc.strerror or exc}).")
            continue
        room -= used
        out.blocks += blocks
    for path in images.named_images(text, workspace.root):
        if path not in out.files:
            _add_image(out, path, workspace.relative(path), denied(path))
    return out


def _add_image(out: Expanded, path: Path, shown: str, rule: str) -> None:
    """An image file the prompt names by path, as blocks, or a warning that says why it is not attached."""
    if rule:
        out.warnings.append(f"Not attached: {shown} is denied by the rule `{rule}`.")
        return
    try:
        with path.open("rb") as handle:
            image = images.load_image(handle.read(images.MAX_IMAGE_BYTES + 1), shown)
    except images.ImageError as exc:
        out.warnings.append(f"Not attached: {exc}")
        return
    except OSError as exc:
        out.warnings.append(f"Not attached: {shown} cannot be read ({exc.strerror}).")
        return
    if image is not None:
        out.blocks += image.blocks()


def _file_blocks(
    workspace: Workspace, path: Path, name: str, cap: int, agent_id: str, attached: list[Path]
) -> tuple[list[dict[str, Any]], int]:
    """One file's blocks and the characters they hold. Raises Unreadable, ImageError or OSError."""
    if os.path.isdir(path):
        raise Unreadable("it is a folder; mention the files in it that matter")
    bases = (workspace.root, *workspace.extra_dirs)
    data, size = read_confined(path, bases, max(cap * 4, images.MAX_IMAGE_BYTES) + 1)
    real = path.resolve()
    shown = workspace.relative(real)
    if real in attached:
        return [], 0
    attached.append(real)
    image = images.load_image(data, shown)
    if image is not None:
        return image.blocks(), 0
    if is_binary(data):
        raise Unreadable("it looks like a binary file (it contains NUL bytes)")
    if cap <= 0:
        return [
            agentcli_note(
                f"@{shown} was not attached: this message's attachments are full "
                f"({TOTAL_CAP:,} characters); read it with read_file."
            )
        ], 0
    cut = size > len(data)
    text = data.decode("utf-8", errors="replace") if cut else decode_bytes(data)[0]
    # numbered as read_file numbers a file, so the model can cite path:line and knows to leave the numbers out of
    # edit_file's old_string; the cap holds for what is sent, numbers included
    numbered = "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(text.rstrip("\n").split("\n"), 1))
    if not cut and len(numbered) <= cap:  # the model has seen all of it: it may edit it without reading it first
        workspace.files.saw(agent_id, real, _digest(data))
        lines = count_lines(text)
        note = (
            f"The user attached {shown} with @{name} ({lines} line{'s' * (lines != 1)}, numbered as read_file "
            "numbers them):"
        )
    else:
        kept = numbered[:cap]
        if "\n" in kept:  # whole lines only
            numbered = kept.rsplit("\n", 1)[0]
            shown_lines = numbered.count("\n") + 1
            part = (
                f"only its first {shown_lines:,} lines fit here (it has {size:,} bytes): read_file with "
                f"offset={shown_lines + 1} shows the rest"
            )
        else:
            numbered = kept
            part = f"only the start of its first line fits here (it has {size:,} bytes): read_file shows the rest"
        note = f"The user attached {shown} with @{name}; {part}."
    # the file and its path are the repository's words: neither opens or closes a note of agentcli's or this fence
    return [
        {
            "type": "text",
            "text": f'{quoted(note, "file")}\n<file path="{quoted(shown, "file")}">\n'
            f"{quoted(numbered, 'file')}\n</file>",
        }
    ], len(numbered)
