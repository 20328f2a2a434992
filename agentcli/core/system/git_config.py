"""The repository's own config and hooks, as workspace trust (trust.py) and the hardening of git run through
bash (``untrusted_git_env``) read them: each through git.py's hardened runner, started at once where a
caller has other work meanwhile, and not at all where no repository can be."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .git import Started, start_git

# git run through bash in a workspace that is not trusted: the settings of git.HARDENING that keep git from
# running the repository's programs, without those that change what commands print or forbid transports
# (a push or fetch the user allowed must still work).
BASH_HARDENING = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("safe.bareRepository", "explicit"),
    ("protocol.ext.allow", "never"),
)


# Settings of the repository's own config (and what it includes) that name a program, and the value that
# runs none: they are replaced by name, as the filter drivers are for the git tools.
REPOSITORY_PROGRAMS = (
    r"^(core\.(fsmonitor|hookspath|pager|editor|sshcommand|gitproxy|askpass)|sequence\.editor"
    r"|diff\.external|diff\..+\.(command|textconv)|filter\..+\.(clean|smudge|process)|merge\..+\.driver"
    r"|gpg\.(.+\.)?program|credential\.(.+\.)?helper|remote\..+\.(uploadpack|receivepack)|alias\..+)$"
)


_NEUTRAL = {
    "core.fsmonitor": "false",
    "core.hookspath": "/dev/null",
    "core.pager": "cat",
    "core.editor": "false",
    "sequence.editor": "false",
    "core.sshcommand": "ssh",
    "uploadpack": "git-upload-pack",
    "receivepack": "git-receive-pack",
    "driver": "false",
    "program": "false",
}


# What in the repository's own config asks for the user's trust (trust.py): every program it names, and
# the files it includes (whose settings git reads as its own).
REPOSITORY_TRUST = REPOSITORY_PROGRAMS[:-2] + r"|include\.path|includeif\..+\.path)$"


def repository_config(root: Path, pattern: str) -> list[tuple[str, str, str]]:
    """The settings of the repository's own config (``.git/config``, ``config.worktree`` and the files they
    include; not the user's global or system files) whose names match ``pattern``, as (file, key, value),
    the file absolute. Reading config runs nothing. Blocking: one or two git processes."""
    return _config_found(root, _start_config(root, pattern))


def repository_hooks(root: Path) -> list[Path]:
    """The hooks the repository's own hooks folder holds (executable files, not the ``.sample`` ones git
    puts there), which git would run on commit, checkout, merge and the like. Blocking: one git process."""
    return _hooks_found(_start_hooks(root))


def repository_trust_reads(root: Path, pattern: str) -> Callable[[], tuple[list[tuple[str, str, str]], list[Path]]]:
    """``repository_config(root, pattern)`` and ``repository_hooks(root)`` started at once, their git processes
    running while the caller reads files: the function returned waits for both (blocking)."""
    config, hooks = _start_config(root, pattern), _start_hooks(root)
    return lambda: (_config_found(root, config), _hooks_found(hooks))


def may_be_in_repository(path: Path) -> bool:
    """Whether git could find a repository from ``path``: a folder from it up holds ``.git`` (a folder, or a file
    naming one elsewhere) or ``HEAD`` (a bare repository's, which the hardening's safe.bareRepository=explicit
    keeps git from using: counted all the same). False only where none is anywhere, an unreadable folder counting
    as one that does: then no git process starts to read a config that cannot be."""
    for folder in (path, *path.absolute().parents):
        for name in (".git", "HEAD"):
            try:
                os.lstat(folder / name)
                return True
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                return True
    return False


def _start_config(root: Path, pattern: str) -> Started:
    if not may_be_in_repository(root):
        return Started(None, "config", 10, failed=(1, b"", ""))
    return start_git(
        root,
        None,
        "config",
        "--null",
        "--show-scope",
        "--show-origin",
        "--includes",
        "--get-regexp",
        pattern,
        timeout=10,
    )


def _config_found(root: Path, started: Started) -> list[tuple[str, str, str]]:
    code, out_bytes, _ = started.result()
    fields = out_bytes.decode("utf-8", errors="replace").split("\0") if code == 0 else []
    found = [
        (origin.removeprefix("file:"), *entry.partition("\n")[::2])
        for scope, origin, entry in zip(fields[::3], fields[1::3], fields[2::3], strict=False)
        if scope in ("local", "worktree")
    ]
    if any(not os.path.isabs(file) for file, _, _ in found):  # relative to the top of the work tree
        code, top_bytes, _ = start_git(
            root, None, "rev-parse", "--path-format=absolute", "--show-toplevel", timeout=10
        ).result()
        top = top_bytes.decode("utf-8", errors="replace")
        base = top.strip() if code == 0 and top.strip() else str(root)
        found = [(os.path.join(base, file), key, value) for file, key, value in found]
    return found


def _start_hooks(root: Path) -> Started:
    if not may_be_in_repository(root):
        return Started(None, "rev-parse", 10, failed=(128, b"", "fatal: not a git repository"))
    return start_git(root, None, "rev-parse", "--path-format=absolute", "--git-common-dir", timeout=10)


def _hooks_found(started: Started) -> list[Path]:
    code, out_bytes, _ = started.result()
    out = out_bytes.decode("utf-8", errors="replace")
    if code != 0 or not out.strip():
        return []
    try:
        entries = sorted(Path(out.strip(), "hooks").iterdir())
    except OSError:
        return []
    return [
        entry
        for entry in entries
        if not entry.name.endswith(".sample") and entry.is_file() and os.access(entry, os.X_OK)
    ]


def untrusted_git_env(root: Path, trusted: bool, env: dict[str, str]) -> dict[str, str]:
    """What to add to the environment of bash (``env``) so that git, run through it in a workspace that
    is not ``trusted``, gets the git tools' hardening: BASH_HARDENING, and every program the repository's
    own config names replaced by one that runs nothing. Through git's environment configuration
    (GIT_CONFIG_COUNT, KEY_n, VALUE_n), which beats every config file and reaches every git the command
    starts; appended to any the user set. {} in a trusted workspace. Blocking: one git process."""
    if trusted:
        return {}
    settings = list(BASH_HARDENING)
    for _, key, _ in repository_config(root, REPOSITORY_PROGRAMS):
        last = key.rsplit(".", 1)[-1]
        settings.append((key, _NEUTRAL.get(key, _NEUTRAL.get(last, ""))))
        if key.startswith("filter."):
            settings.append((key.rsplit(".", 1)[0] + ".required", "false"))
    first = int(env["GIT_CONFIG_COUNT"]) if env.get("GIT_CONFIG_COUNT", "").isdigit() else 0
    added = {"GIT_CONFIG_COUNT": str(first + len(settings))}
    for number, (key, value) in enumerate(settings, start=first):
        added[f"GIT_CONFIG_KEY_{number}"], added[f"GIT_CONFIG_VALUE_{number}"] = key, value
    return added
