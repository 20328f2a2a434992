"""An answer read from a repository's git config, kept while none of the files git read for it changes.

Every sandboxed command and every file-tool write asks which folders ``core.hooksPath`` names
(``protected_paths.hooks_folders``): one or two git processes each time, though the answer changes only
when a config file does. ``remembered`` keeps the answer with a stamp of every file it came from, and
computes it again as soon as the stamp differs: the files git says it read (``git config --list
--show-origin``: the system's, $HOME's, the repository's and the worktree's, and every file they include),
every file an include names (read or not: one made later would be read), and the files that decide which
config and which conditional includes git reads (each ``.git`` from the folder up to ``/``, the git
folder's ``HEAD``, ``commondir``, ``config.worktree``). A stale answer would leave a newly named hooks
folder writable, so the cache fails closed: what git's listing cannot place (an include by ``%(prefix)``,
a config from anywhere but a file), a failed git process, or a file changed less than a second before the
look began (whose change the clock's granularity could hide: git's own "racily clean" rule, on the ctime,
which no command can set back) and the answer is used once and not kept.
"""

from __future__ import annotations

import os
import stat as stat_module
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .git import _run
from .secret_env import command_env

T = TypeVar("T")

_RACY_NS = 1_000_000_000  # a file changed this near the look is not trusted to show a later change
_KEPT = 64  # repositories remembered at once (a session has a few writable folders)
# (path, (device, inode, owner[, size, mtime, ctime])); None: missing.
Stamp = tuple[tuple[str, tuple[int, ...] | None], ...]
_cache: dict[tuple[str, ...], tuple[tuple[str, ...], Stamp, object]] = {}
_lock = threading.Lock()


def remembered(root: Path, compute: Callable[[], T]) -> T:
    """``compute()`` (which reads the git config of the repository ``root`` lies in), or the answer it gave
    before while every config file git read for it, and every one it would read, is as it was. Blocking."""
    env = command_env()
    key = (str(root), env.get("HOME", ""), env.get("XDG_CONFIG_HOME", ""))
    with _lock:
        kept = _cache.get(key)
    if kept is not None and stamp(kept[0]) == kept[1]:
        return kept[2]  # type: ignore[return-value]
    started = time.time_ns()
    files = config_files(root, env)
    before = stamp(files) if files is not None else None
    value = compute()
    with _lock:
        if files is None or before is None or stamp(files) != before or _racy(before, started):
            _cache.pop(key, None)
        else:
            if len(_cache) >= _KEPT:
                _cache.clear()
            _cache[key] = (files, before, value)
    return value


def forget() -> None:
    """Drop every remembered answer."""
    with _lock:
        _cache.clear()


def config_files(root: Path, env: dict[str, str]) -> tuple[str, ...] | None:
    """Every file whose change could change what git's config reader returns for ``root``, absolute;
    None when that cannot be said. Blocking: two git processes."""
    code, out, _ = _run(
        root,
        None,
        "rev-parse",
        "--path-format=absolute",
        "--absolute-git-dir",
        "--git-common-dir",
        "--is-inside-work-tree",
        "--show-cdup",
        timeout=10,
    )
    lines = out.split("\n")
    if code != 0 or len(lines) < 4 or lines[2] not in ("true", "false"):
        return None
    gitdir, common = Path(lines[0]), Path(lines[1])
    # where git works from, which the listing's relative origins start at: the work tree's top, or here
    start = Path(os.path.normpath(root / lines[3])) if lines[2] == "true" else root
    home = Path(env.get("HOME", "/"))
    xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    found = [str(folder / ".git") for folder in (root, *root.parents)]  # which repository git finds
    found += [
        str(path)
        for path in (
            gitdir / "HEAD",
            gitdir / "commondir",
            gitdir / "config.worktree",
            common / "config",
            common / "config.worktree",
            home / ".gitconfig",
            xdg / "git" / "config",
            Path("/etc/gitconfig"),
        )
    ]
    code, out, _ = _run(root, None, "config", "--list", "--show-origin", "--null", timeout=10)
    if code != 0:
        return None
    fields = out.split("\0")
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        if origin.startswith("command line:"):
            continue  # agentcli's own -c settings
        if not origin.startswith("file:"):
            return None
        source = Path(os.path.normpath(start / origin.removeprefix("file:")))
        if not source.is_file():
            return None  # not the file git read: no stamp can be trusted to show its change
        found.append(str(source))
        name, _, value = entry.partition("\n")
        if name.startswith(("include.", "includeif.")) and name.endswith(".path"):
            if value.startswith("%(prefix)"):
                return None
            target = str(home) + value[1:] if value == "~" or value.startswith("~/") else os.path.expanduser(value)
            if target.startswith("~"):
                return None
            found.append(os.path.normpath(source.parent / target))
    return tuple(dict.fromkeys(found))


def stamp(files: tuple[str, ...]) -> Stamp:
    """What each file is now, as far as a change of its content could show: missing, or its device,
    inode, size, times and owner; of a folder (a ``.git``, whose times every git command moves), only
    that it is one, and which, and whose."""
    out: list[tuple[str, tuple[int, ...] | None]] = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            out.append((path, None))
            continue
        if stat_module.S_ISDIR(st.st_mode):
            out.append((path, (st.st_dev, st.st_ino, st.st_uid)))
        else:
            out.append((path, (st.st_dev, st.st_ino, st.st_uid, st.st_size, st.st_mtime_ns, st.st_ctime_ns)))
    return tuple(out)


def _racy(files: Stamp, started: int) -> bool:
    """Whether a file changed so near the look began that a change after it could leave the same stamp."""
    return any(facts is not None and len(facts) > 3 and facts[5] >= started - _RACY_NS for _, facts in files)
