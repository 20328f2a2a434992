"""Workspace trust: files inside a workspace may widen permissions only once the user said yes.

A cloned repository is written by a stranger. Each *source* below reads one kind of file in the
workspace and returns what in it could widen permissions or start a process (a ``Source``: the
file, one line per thing it asks for, and the widening content itself). One decision covers all
of them: the answer is remembered in the user's own config folder, keyed by the workspace's
resolved path and a hash of the widening content, so a ``git pull`` that changes it asks again.

``.mcp.json`` is one (its servers start only in a trusted workspace), and so is the repository's own
git config where it names programs (git run through bash runs them only in a trusted workspace). A new
source is one more function in ``SOURCES``; what it widens then applies only where ``settle`` said the
workspace is trusted.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import paths
from .config import ConfigError, project_settings_sources
from .core.engine.agents import trust_sources as agent_trust_sources
from .core.engine.custom_commands import trust_sources as command_trust_sources
from .core.engine.skills import trust_sources as skill_trust_sources
from .plugins import trust_sources as plugin_trust_sources


@dataclass(frozen=True)
class Source:
    """One workspace file that would widen what agentcli may do, and what it asks for."""

    path: Path  # the file
    asks: tuple[str, ...]  # what it asks for, one line each, as the prompt shows it
    content: Any  # the widening content, as JSON-able data: what the hash covers


def _git_sources(root: Path) -> list[Source]:
    """The repository's own git config (``.git/config`` and what it includes) where it names a program for
    git to run, or includes another file, and the hooks in its hooks folder: an archive can carry them, and
    git run through bash runs them as configured only in a trusted workspace (``untrusted_git_env``)."""
    return _git_started(root)()


def _git_started(root: Path) -> Callable[[], list[Source]]:
    """``_git_sources`` begun: its git processes run until the function returned is called."""
    from .core.system.git_config import REPOSITORY_TRUST, repository_trust_reads

    reads = repository_trust_reads(root, REPOSITORY_TRUST)
    return lambda: _git_found(reads)


def _git_found(reads: Callable[[], tuple[list[tuple[str, str, str]], list[Path]]]) -> list[Source]:
    config, hooks = reads()
    by_file: dict[str, list[tuple[str, str]]] = {}
    for file, key, value in config:
        by_file.setdefault(file, []).append((key, value))
    found = [
        Source(
            Path(file),
            tuple(
                f"{key} = {value} "
                + (
                    "(git reads that file's settings too)"
                    if ".path" in key and key.startswith("include")
                    else "(git run through bash would run it)"
                )
                for key, value in items
            ),
            [list(item) for item in items],
        )
        for file, items in by_file.items()
    ]
    if hooks:
        digests = []
        for hook in hooks:
            try:
                digests.append([hook.name, hashlib.sha256(hook.read_bytes()).hexdigest()])
            except OSError:
                digests.append([hook.name, ""])
        found.append(
            Source(
                hooks[0].parent,
                tuple(f"hook {hook.name} (git runs it on commit, checkout, merge and the like)" for hook in hooks),
                digests,
            )
        )
    return found


# Each takes the workspace root and returns the sources that ask for something there.
SOURCES: list[Callable[[Path], list[Source]]] = [
    lambda root: [Source(path, tuple(asks), content) for path, asks, content in project_settings_sources(root)],
    lambda root: [Source(path, tuple(asks), content) for path, asks, content in _mcp_sources(root)],
    lambda root: [Source(path, tuple(asks), content) for path, asks, content in command_trust_sources(root)],
    lambda root: [Source(path, tuple(asks), content) for path, asks, content in agent_trust_sources(root)],
    _git_sources,  # request_for starts its git processes first, to run while the files are read
    lambda root: [Source(path, tuple(asks), content) for path, asks, content in skill_trust_sources(root)],
    lambda root: [Source(path, tuple(asks), content) for path, asks, content in plugin_trust_sources(root)],
]


def _mcp_sources(root: Path) -> list[tuple[Path, list[str], Any]]:
    """The workspace's .mcp.json: each server it would start."""
    from .core.mcp.config import McpConfigError, trust_asks

    try:
        return trust_asks(root)
    except McpConfigError as exc:
        raise ConfigError(str(exc)) from None


NEW = "  ← new since you last answered"


@dataclass(frozen=True)
class Request:
    """Everything a workspace's files ask for that needs the user's trust."""

    root: Path  # resolved
    sources: tuple[Source, ...]
    before: tuple[str, ...] = ()  # lines() of an earlier answer for other content: what is new is marked

    @property
    def digest(self) -> str:
        data = [[self.name(s.path), s.content] for s in self.sources]
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()

    def name(self, path: Path) -> str:
        """A file's name as the user knows it: relative to the workspace when inside it."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def lines(self, mark_new: bool = False) -> list[str]:
        """What the files ask for: each file name, then each widening item indented; with ``mark_new``,
        the items an earlier answer did not cover end in ``NEW``."""
        out: list[str] = []
        for source in self.sources:
            out.append(visible(self.name(source.path)))
            items = [f"  {visible(item)}" for item in source.asks]
            out += [f"{line}{NEW}" if mark_new and self.before and line not in self.before else line for line in items]
        return out

    def summary(self) -> str:
        """The files and items on one line, for warnings."""
        return visible(
            "; ".join(f"{self.name(s.path)}: {', '.join(item.split(' (')[0] for item in s.asks)}" for s in self.sources)
        )


def visible(text: str) -> str:
    """``text`` on one line, control characters shown as escapes: a file cannot forge lines of the
    question or send the terminal escape sequences."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def request_for(root: Path) -> Request:
    root = root.resolve()
    git = functools.cache(_git_started(root))  # git's processes run while the files are read
    try:
        return Request(
            root, tuple(source for read in SOURCES for source in (git() if read is _git_sources else read(root)))
        )
    finally:
        git()  # waited for even when a file fails to read: no process is left behind


# ------------------------------------------------------------------ remembered answers


def store_path() -> Path:
    return paths.config_home() / "trusted-workspaces.json"


def remembered() -> dict[str, dict[str, Any]]:
    """Every remembered answer by workspace path. An unreadable or damaged file counts as none:
    agentcli then asks again, which is the safe side."""
    try:
        data = json.loads(store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    workspaces = data.get("workspaces") if isinstance(data, dict) else None
    return {k: v for k, v in workspaces.items() if isinstance(v, dict)} if isinstance(workspaces, dict) else {}


def _save(workspaces: dict[str, dict[str, Any]]) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".trusted-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"workspaces": workspaces}, f, indent=2, sort_keys=True)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def answer_for(request: Request) -> bool | None:
    """The remembered answer for exactly this content: True (trusted), False (not), None (never asked)."""
    entry = remembered().get(str(request.root))
    if entry is None or entry.get("digest") != request.digest:
        return None
    return entry.get("trusted") is True


def remember(request: Request, trusted: bool) -> None:
    workspaces = remembered()
    workspaces[str(request.root)] = {
        "trusted": trusted,
        "digest": request.digest,
        "asks": request.lines(),
        "decided": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    try:
        _save(workspaces)
    except OSError as exc:
        raise ConfigError(f"Cannot save the trust answer to {store_path()}: {exc.strerror or exc}.") from None


def revoke(path: Path) -> bool:
    """Forget the answer for the workspace at ``path``; False when none was remembered."""
    workspaces = remembered()
    key = next((k for k in (str(path.expanduser().resolve()), str(path)) if k in workspaces), None)
    if key is None:
        return False
    del workspaces[key]
    try:
        _save(workspaces)
    except OSError as exc:
        raise ConfigError(f"Cannot update {store_path()}: {exc.strerror or exc}.") from None
    return True


# ------------------------------------------------------------------ the decision


@dataclass(frozen=True)
class Outcome:
    """Whether the workspace's widening settings apply, and a line to show about it."""

    trusted: bool  # the workspace's widening settings apply
    notice: str = ""  # one line to show: what was ignored, or that the answer could not be saved


def settle(
    root: Path, *, flag: bool = False, ask: Callable[[Request], bool | None] | None = None, headless: bool = False
) -> Outcome:
    """Whether this workspace's widening settings apply to this run.

    Trusted when nothing asks for trust, with ``--trust-workspace`` (``flag``, this run only), or
    when the user trusted this exact content before. Otherwise ``ask`` (the front end's prompt)
    asks, and a yes or no is remembered; None from it means no answer (nothing is remembered).
    """
    request = request_for(root)
    if not request.sources or flag:
        return Outcome(True)
    answer = answer_for(request)
    unsaved = ""
    if answer is None and ask is not None:
        earlier = remembered().get(str(request.root), {}).get("asks")
        if isinstance(earlier, list):
            request = dataclasses.replace(request, before=tuple(map(str, earlier)))
        answer = ask(request)
        if answer is not None:
            try:
                remember(request, answer)
            except ConfigError as exc:  # the answer holds for this run all the same
                unsaved = f"{exc} agentcli asks again next time."
    if answer:
        return Outcome(True, unsaved)
    how = (
        "pass --trust-workspace to apply it"
        if headless
        else f"'agentcli trust revoke {request.root}' asks again"
        if answer is False and not unsaved
        else "start agentcli here to review it"
    )
    return Outcome(
        False,
        f"This workspace is not trusted, so agentcli ignores what widens permissions in "
        f"{request.summary()}; {how}.{' ' + unsaved if unsaved else ''}",
    )


# ------------------------------------------------------------------ agentcli trust list|revoke


def run_trust_command(action: str, path: str | None, out: Any, err: Any) -> int:
    if action == "list":
        workspaces = remembered()
        if not workspaces:
            print(
                "No trust answers are remembered yet; agentcli asks in each workspace whose files "
                "ask for wider permissions.",
                file=out,
            )
            return 0
        for key in sorted(workspaces):
            entry = workspaces[key]
            verdict = "trusted" if entry.get("trusted") is True else "not trusted"
            print(visible(f"{key}  {verdict} ({entry.get('decided', 'date unknown')})"), file=out)
            for line in entry.get("asks", []):
                print(f"    {visible(str(line))}", file=out)
        return 0
    assert path is not None
    if not revoke(Path(path)):
        print(f"agentcli: no trust answer is remembered for {path}; 'agentcli trust list' shows them.", file=err)
        return 1
    print(f"Forgot the trust answer for {path}; agentcli will ask again there.", file=out)
    return 0
