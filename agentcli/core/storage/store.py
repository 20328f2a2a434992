"""The append-only JSONL store of every transcript: writing, locking, reading and finding sessions.

Layout under ``$AGENTCLI_HOME/projects/<workspace slug>/``: ``<session>.jsonl`` holds the main
transcript, ``<session>/subagents/<sa-id>.jsonl`` each child's. Every record is one JSON object on
one line with ``type``, ``ts``, ``agent_id`` and ``parent_tool_use_id``, appended and flushed as it
happens. The main file starts with a ``session_started`` record (id, cwd, model).

While a session is open its process holds an exclusive ``flock`` on the main file, so a second
process that resumes it forks into a copy instead of interleaving writes.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ... import paths
from .. import images
from ..content import typed
from ..events import MAIN, Event, SubagentFinished, SubagentStarted, Usage, event_from_dict
from .records import TOO_DEEP, finite, finite_copy, record_problem

NOT_STORED = (
    "text_delta",
    "thinking_delta",
    "text_reset",
    "raw_stream_event",  # the AssistantMessage holds it all
    "reply_started",  # a wait that is over
    "approvals_waiting",  # the inbox now, for the front ends
    "tool_progress",
    "tool_output",
)  # the call's result holds what it came to
WAITS = ("notice",)  # kept back until the session has something of its own to save (SessionStore)
TORN = "Skipped a torn last line in {name} (the process probably died mid-write)."


class SessionError(Exception):
    """A session that cannot be found, opened or saved; the message is one sentence."""


def new_session_id() -> str:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def projects_home() -> Path:
    return paths.data_home() / "projects"


def project_dir(root: Path) -> Path:
    return projects_home() / paths.project_slug(root)


class SessionStore:
    """Appends each agent's events to its own JSONL file, flushed per record.

    ``header`` holds the fields of the record written before the first main record
    (``session_started`` for a new session, ``session_resumed`` for a resumed one), so an opened session
    that never gets a prompt leaves no file behind. Notices wait too (``WAITS``: what a session says when
    it opens, such as no bubblewrap or declined workspace settings), written once something else comes:
    a start that only said them leaves no file, and a resume that only said them adds none to it.

    When a write fails (a full disk, a folder made read-only), the store turns itself off: that
    write raises SessionError once, and every later one does nothing.
    """

    def __init__(self, project_dir: Path, session_id: str, header: dict[str, Any] | None = None) -> None:
        self.project_dir = project_dir
        self.session_id = session_id
        self.main_path = project_dir / f"{session_id}.jsonl"
        self.subagent_dir = project_dir / session_id / "subagents"
        self.output_dir = project_dir / session_id / "outputs"
        self.checkpoint_dir = project_dir / session_id / "checkpoints"
        self.image_dir = project_dir / session_id / "images"  # each image once, by SHA-256 (core/images.py)
        self._header = header
        self._waiting: list[tuple[str, dict[str, Any]]] | None = []  # notices held back; None once something came
        self._files: dict[str, IO[bytes]] = {}
        self.warnings: list[str] = []  # damage found in files it opened
        self.off = False  # a write failed; nothing more is written
        self.problem = ""  # why it failed ("no space left on device")

    @classmethod
    def for_workspace(cls, root: Path, session_id: str, header: dict[str, Any] | None = None) -> SessionStore:
        return cls(project_dir(root), session_id, header)

    def path_for(self, agent_id: str) -> Path:
        return self.main_path if agent_id == MAIN else self.subagent_dir / f"{agent_id}.jsonl"

    def write(self, event: Event) -> None:
        record = event.to_dict()
        if record["type"] in NOT_STORED:
            return
        record = {"ts": now_iso(), **record}
        if self._waiting is not None and record["type"] in WAITS:
            self._waiting.append((event.agent_id, record))
            return
        self._settle()
        self._append(event.agent_id, record)
        if isinstance(event, (SubagentStarted, SubagentFinished)):
            self._append(MAIN, record)  # the main transcript lists its children too
        if isinstance(event, SubagentFinished):
            self._close(event.agent_id)  # one file per child adds up; a late record opens it again

    def append_record(self, agent_id: str, record: dict[str, Any]) -> None:
        """Append a record that is no event (``ts`` and ids are filled in)."""
        self._settle()
        self._append(
            agent_id,
            {"ts": now_iso(), **record, "agent_id": agent_id, "parent_tool_use_id": record.get("parent_tool_use_id")},
        )

    def lock(self) -> bool:
        """Open the main file and take its exclusive lock; False when another process holds it."""
        try:
            self._open(MAIN)
        except BlockingIOError:
            return False
        except OSError as exc:
            raise SessionError(f"Cannot open {self.main_path} ({_reason(exc)}).") from None
        return True

    def write_header(self) -> None:
        """Write the header now, if it is still pending."""
        if self._header is not None:
            header, self._header = self._header, None
            self._append(MAIN, {"ts": now_iso(), **header})

    def _settle(self) -> None:
        """Something besides notices is written: the notices held back go first."""
        waiting, self._waiting = self._waiting or [], None
        for agent_id, record in waiting:
            self._append(agent_id, record)

    def _append(self, agent_id: str, record: dict[str, Any]) -> None:
        if self.off:
            return
        if agent_id == MAIN:
            self.write_header()
        try:
            record = images.pack(record, self.image_dir)
            f = self._files.get(agent_id) or self._open(agent_id)
            record = record if finite(record) else finite_copy(record)
            try:
                line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode()
            except UnicodeEncodeError:  # a lone surrogate (no UTF-8 can hold it): kept as its JSON escape
                line = (json.dumps(record, default=str) + "\n").encode()
            while line:  # unbuffered: each record is on disk once written, as a flush made it
                written = f.write(line)
                if not written:
                    raise OSError(errno.EIO, "nothing was written")
                line = line[written:]
        except OSError as exc:
            self.off, self.problem = True, _reason(exc)
            self.close()
            self._drop_if_empty()
            raise SessionError(
                f"Could not write {self.path_for(agent_id)} ({self.problem}), so the rest of "
                "this session will not be saved."
            ) from None

    def _drop_if_empty(self) -> None:
        """Remove a main file that holds no whole record after a failed write (a full disk): a session with
        nothing in it to list or resume."""
        try:
            with self.main_path.open("rb") as f:
                whole = b"\n" in f.read(1 << 16)
            if not whole:
                self.main_path.unlink()
        except OSError:
            pass

    def _open(self, agent_id: str) -> IO[bytes]:
        path = self.path_for(agent_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        # unbuffered (each record is written whole at once): a buffer would hold 5 KiB a file for nothing
        f = path.open("ab", buffering=0)
        if agent_id == MAIN:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                raise
        problem = mend_tail(path)  # a torn line from a crash must not swallow the next record
        if problem:
            self.warnings.append(problem)
        self._files[agent_id] = f
        return f

    def _close(self, agent_id: str) -> None:
        f = self._files.pop(agent_id, None)
        try:
            if f is not None:
                f.close()  # closing the main file releases the lock
        except OSError:  # a last flush that failed: the store is off already
            pass

    def close(self) -> None:
        for agent_id in list(self._files):
            self._close(agent_id)


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def writable_folder(folder: Path) -> None:
    """Raise SessionError when sessions cannot be written in ``folder``. Nothing is created: the store makes
    the folder with its first record, so a start that sends no prompt leaves no empty folder behind; the
    nearest folder that exists is checked, as the one the store's mkdir would write into."""
    there = folder
    try:
        while not there.exists() and there != there.parent:
            there = there.parent
        problem = (
            "not a directory" if not there.is_dir() else None if os.access(there, os.W_OK | os.X_OK) else "not writable"
        )
    except OSError as exc:
        problem = _reason(exc)
    if problem:
        raise SessionError(
            f"Cannot save sessions in {folder} ({problem}); make it writable, or set AGENTCLI_HOME to a folder that is."
        )


def in_use(path: Path) -> bool:
    """Whether a process holds the session at ``path`` open now."""
    try:
        with path.open("rb") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)  # released on close
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def header_record(kind: str, session_id: str, cwd: Path, model: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "agent_id": MAIN,
        "parent_tool_use_id": None,
        "session_id": session_id,
        "cwd": str(cwd),
        "model": model,
        "pid": os.getpid(),
        **extra,
    }


def open_store(
    root: Path, model: str, *, session_id: str | None = None, resume: Path | None = None, fork_session: bool = False
) -> tuple[SessionStore, list[str]]:
    """The store of a new session, or of the saved one at ``resume``, locked; and warnings to show.

    When another process has ``resume`` open, or ``fork_session`` asks for it (``--fork-session``), this
    one forks: a new session id with a copy of the history, so the two never write to one file. Raises
    SessionError when the folder cannot be written.
    """
    writable_folder(resume.parent if resume is not None else project_dir(root))
    if resume is None:
        session_id = session_id or new_session_id()
        return SessionStore(
            project_dir(root), session_id, header_record("session_started", session_id, root, model)
        ), []
    store = SessionStore(resume.parent, resume.stem, header_record("session_resumed", resume.stem, root, model))
    if not fork_session and store.lock():
        store.write_header()  # at once: it marks where this process's part of the file begins
        return store, store.warnings
    session_id = new_session_id()
    store = SessionStore(
        resume.parent, session_id, header_record("session_started", session_id, root, model, forked_from=resume.stem)
    )
    warnings = fork(resume, store)
    if fork_session:
        return store, warnings
    return store, warnings + [
        f"Session {resume.stem} is open in another agentcli, so this one continues in a new "
        f"session, {session_id}, with a copy of its history."
    ]


def fork(source: Path, store: SessionStore) -> list[str]:
    """Copy a session's transcripts (complete lines only) into ``store``'s new session.

    The process that holds ``source`` wrote the last header in it; when that is a resumer's
    ``session_resumed``, its work in progress from there on stays out of the copy.
    """
    records, warnings = read_records(source)
    headers = [i for i, r in enumerate(records) if r.get("type") in ("session_started", "session_resumed")]
    if headers and records[headers[-1]]["type"] == "session_resumed":
        records = records[: headers[-1]]
    store.write_header()
    for record in records:
        if record.get("type") != "session_started":
            store._append(MAIN, record)
    started = {r.get("agent_id") for r in records if r.get("type") == "subagent_started"}
    children, child_warnings = child_records(source)
    for agent_id, child in children.items():
        for record in child if agent_id in started else []:
            store._append(agent_id, record)
    outputs = source.parent / source.stem / "outputs"
    if outputs.is_dir():
        shutil.copytree(outputs, store.output_dir, dirs_exist_ok=True)
    return warnings + child_warnings


def child_records(main_path: Path) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """Each child's records by id (sa-1, sa-2, … in order), and warnings for damaged lines."""
    folder = main_path.parent / main_path.stem / "subagents"
    files = sorted(folder.glob("*.jsonl"), key=lambda p: (len(p.stem), p.stem)) if folder.is_dir() else []
    children: dict[str, list[dict[str, Any]]] = {}
    warnings: list[str] = []
    for path in files:
        children[path.stem], problems = read_records(path)
        warnings += problems
    return children, warnings


def mend_tail(path: Path) -> str | None:
    """End the file with a newline: keep a last line that parses, cut one torn by a crash (and say so)."""
    with path.open("rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return None
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return None
        f.seek(0)
        data = f.read()  # rare: only after a crash
        start = data.rfind(b"\n") + 1
        try:
            json.loads(data[start:])
            f.write(b"\n")
            return None
        except RecursionError:  # whole, but too deep to read: kept, for the readers to report
            f.write(b"\n")
            return None
        except ValueError:
            f.truncate(start)
            return TORN.format(name=path.name)


def read_records(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The records of one JSONL file, and a warning for each line that was skipped.

    Every reader of session files comes through here, so each record is checked once
    (``records.record_problem``): a line that does not parse, or whose fields have the wrong
    types, is left out, and everything else is still read.
    """
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [], [f"Could not read {path}: {exc.strerror or exc}."]
    lines = data.split(b"\n")
    images_at = image_folder(path)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record, problem = parse_record(line, images_at)
        if record is not None:
            records.append(record)
        elif problem == NOT_AN_OBJECT and number == len(lines):
            warnings.append(TORN.format(name=path.name))
        else:
            warnings.append(f"Skipped line {number} of {path}: {problem}.")
    return records, warnings


NOT_AN_OBJECT = "it is not a JSON object"


def parse_record(line: bytes, folder: Path) -> tuple[dict[str, Any] | None, str]:
    """One JSONL line of a session file: its record, checked (``records.record_problem``) and its images read
    from ``folder``, or None and why it is skipped."""
    try:
        record = json.loads(line)
    except ValueError:
        return None, NOT_AN_OBJECT
    except RecursionError:
        return None, TOO_DEEP
    if not isinstance(record, dict):
        return None, NOT_AN_OBJECT
    if problem := record_problem(record):
        return None, problem
    return images.unpack(record, folder), ""


def record_event(line: bytes, folder: Path) -> tuple[dict[str, Any], Event] | None:
    """One line as its record and the event it stores (``parse_record``), or None for a line the engine skips."""
    record, _ = parse_record(line, folder)
    event = event_from_dict(record) if record is not None else None
    return None if record is None or event is None else (record, event)


def image_folder(path: Path) -> Path:
    """Where the images of the session whose transcript (main or a child's) is ``path`` are kept."""
    session = path.parent.parent if path.parent.name == "subagents" else path.parent / path.stem
    return session / "images"


@dataclass
class SessionInfo:
    """What `agentcli sessions list` shows of one session."""

    id: str
    path: Path
    cwd: str = ""
    started: str = ""  # ISO time, UTC
    updated: float = 0.0  # last write, seconds since the epoch
    model: str = ""
    first_prompt: str = ""
    turns: int = 0
    subagents: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    forked_from: str | None = None
    warnings: list[str] = field(default_factory=list)  # lines of its files that were skipped

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "cwd": self.cwd,
            "started": self.started,
            "updated": datetime.datetime.fromtimestamp(self.updated, datetime.UTC).isoformat(timespec="seconds"),
            "model": self.model,
            "first_prompt": self.first_prompt,
            "turns": self.turns,
            "subagents": len(self.subagents),
            "usage": self.usage.to_dict(),
            "forked_from": self.forked_from,
        }


def session_info(path: Path) -> SessionInfo:
    """Summarize one main transcript (and, for children that never finished, their files)."""
    records, warnings = read_records(path)
    info = SessionInfo(id=path.stem, path=path, updated=last_write(path), warnings=warnings)
    main_usage = Usage()
    finished: dict[str, Usage] = {}
    for record in records:
        kind, agent = record.get("type"), record.get("agent_id", MAIN)
        if kind == "session_started" and not info.started:
            info.cwd, info.model = record.get("cwd", ""), record.get("model", "")
            info.started, info.forked_from = record.get("ts", ""), record.get("forked_from")
        elif kind == "subagent_started" and agent not in info.subagents:
            info.subagents.append(agent)
        elif kind == "subagent_finished":
            finished[agent] = Usage.from_dict(record.get("usage"))
        elif agent != MAIN:
            continue
        elif kind == "user_message" and not info.first_prompt:
            info.first_prompt = typed(record.get("content")).strip()
        elif kind == "turn_started":
            info.turns = max(info.turns, int(record.get("turn") or 0))
        elif kind == "usage_updated":
            main_usage = Usage.from_dict(record.get("total"))
    info.started = info.started or (records[0].get("ts", "") if records else "")
    info.usage = main_usage
    for child in info.subagents:
        info.usage = info.usage + (finished.get(child) or child_usage(path, child, info.warnings))
    return info


def child_usage(main_path: Path, child: str, warnings: list[str]) -> Usage:
    """The running total of a child that never finished, from its own file (adding to ``warnings``)."""
    total = Usage()
    records, problems = read_records(main_path.parent / main_path.stem / "subagents" / f"{child}.jsonl")
    warnings += problems
    for record in records:
        if record.get("type") == "usage_updated":
            total = Usage.from_dict(record.get("total"))
    return total


def last_write(path: Path) -> float:
    """When the session last changed: its main file or any child's."""
    times = [path.stat().st_mtime]
    children = path.parent / path.stem / "subagents"
    if children.is_dir():
        times += [p.stat().st_mtime for p in children.glob("*.jsonl")]
    return max(times)


def session_files(root: Path | None) -> list[Path]:
    """Main transcripts of one workspace, or of every workspace when ``root`` is None.

    A workspace's sessions from before folder names had a hash are found in the old folder,
    which paths that read alike (/x/a-b, /x/a/b) shared: there, only those started in ``root``
    count. Raises SessionError when the folders cannot be read.
    """
    if root is None:
        return [p for d in folder_entries(projects_home()) if d.is_dir() for p in transcripts_in(d)]
    legacy = projects_home() / paths.legacy_project_slug(root)
    return transcripts_in(project_dir(root)) + [p for p in transcripts_in(legacy) if started_in(p, root)]


def transcripts_in(folder: Path) -> list[Path]:
    return [p for p in folder_entries(folder) if p.suffix == ".jsonl" and p.is_file()]


def folder_entries(folder: Path) -> list[Path]:
    """What ``folder`` holds (nothing when it does not exist yet); SessionError when it cannot be read."""
    try:
        return sorted(Path(entry.path) for entry in os.scandir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SessionError(
            f"Cannot read sessions in {folder} ({_reason(exc)}); make it readable, or set "
            "AGENTCLI_HOME to a folder that is."
        ) from None


def started_in(path: Path, root: Path) -> bool:
    """Whether the session at ``path`` was started in the workspace ``root`` (by its first record)."""
    try:
        with path.open("rb") as f:
            return Path(json.loads(f.readline())["cwd"]).resolve() == root.resolve()
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return True  # no header to tell by: keep it findable


def list_sessions(root: Path | None) -> list[SessionInfo]:
    """Sessions of one workspace (every workspace when ``root`` is None), most recently used first."""
    return sorted((session_info(p) for p in session_files(root)), key=lambda s: s.updated, reverse=True)


def find_session(root: Path, text: str, *, everywhere: bool = False) -> Path:
    """The main file of the session whose id is ``text`` or starts with it (a unique prefix)."""
    text = text.strip().removesuffix(".jsonl")
    scopes: list[Path | None] = [root, None] if everywhere else [root]
    for scope in scopes:
        files = session_files(scope)
        exact = [p for p in files if p.stem == text]
        matches = exact or [p for p in files if text and p.stem.startswith(text)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            ids = ", ".join(sorted(p.stem for p in matches)[:3])
            raise SessionError(
                f"'{text}' matches {len(matches)} sessions ({ids}{', …' if len(matches) > 3 else ''}); "
                "give more of the id."
            )
    elsewhere = [] if everywhere else [p for p in session_files(None) if p.stem.startswith(text) and text]
    if len(elsewhere) == 1:
        cwd = session_info(elsewhere[0]).cwd or "another workspace"
        raise SessionError(f"Session {elsewhere[0].stem} belongs to {cwd}; run agentcli from there to resume it.")
    if everywhere:
        raise SessionError(f"No session '{text}'; 'agentcli sessions list --all' shows them.")
    raise SessionError(f"No session '{text}' in this workspace; 'agentcli sessions list' shows them.")


def latest_session(root: Path) -> Path:
    files = session_files(root)
    if not files:
        raise SessionError("No session to continue in this workspace; start one with agentcli.")
    return max(files, key=last_write)


def resume_target(root: Path, resume: str | None, continue_: bool) -> str | None:
    """The full id that ``--resume ID`` (a unique prefix will do) or ``--continue`` means, if any."""
    if resume:
        return find_session(root, resume).stem
    return latest_session(root).stem if continue_ else None
