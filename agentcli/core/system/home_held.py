"""What is held under $HOME (``protected_paths``): the user's start-up and settings files, wherever they are kept.

Two ways a sandboxed command could reach them:

- a writable folder holds $HOME (a workspace at $HOME, or above it): then every dot-entry at the top of
  $HOME, existing or not, is out of reach (its ``.config``, ``.local``, ``.ssh``, ``.vimrc``,
  ``.bash_aliases``, ``.docker``, and whatever else a program reads there later). The sandbox binds $HOME
  read-only and its existing non-dot entries writable again (``home_open``, ``home_pins``), so a new
  dot-entry cannot be made either; the file tools ask (``home_reason``);
- a start-up or settings file (``HOME_HELD``, git's global config files and the files they include) is a
  symbolic link into a writable folder (dotfiles kept in a repository: ``~/.bashrc -> ~/dotfiles/bashrc``),
  or git includes a file there: the file it resolves to is held (``dotfile_targets``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Under $HOME: the shells' start-up files and the settings of programs that run others (git, ripgrep's --pre).
HOME_HELD = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".inputrc",
    ".config/fish",
    ".gitconfig",
    ".config/git",
    ".ripgreprc",
    ".npmrc",
    ".pypirc",
    ".pythonrc",
    ".xprofile",
    ".bash_aliases",
    ".vimrc",
    ".emacs",
    ".tmux.conf",
    ".pam_environment",
    ".ssh/config",
    ".ssh/rc",
)

# In a git config file: ``[include]`` or ``[includeIf "…"]``, then ``path = …``.
_SECTION = re.compile(r"^\s*\[\s*([A-Za-z][\w.-]*)(?:\s+\"[^\"]*\")?\s*\]")
_PATH = re.compile(r"^\s*path\s*=\s*(.*?)\s*$", re.IGNORECASE)


def home_open(folders: list[Path], home: Path) -> bool:
    """Whether one of the writable ``folders`` is $HOME or holds it."""
    return any(folder == home or folder in home.parents for folder in folders)


def home_pins(home: Path) -> list[Path]:
    """The entries at the top of $HOME that stay writable while $HOME is held: the non-dot files and
    folders (a symbolic link is left as it is: what it leads to is as writable as it was)."""
    try:
        entries = list(os.scandir(home))
    except OSError:
        return []
    return [
        Path(entry.path)
        for entry in entries
        if not entry.name.startswith(".")
        and (entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False))
    ]


def under_home_dot(path: Path, home: Path) -> bool:
    """Whether ``path`` is a dot-entry at the top of $HOME, or lies in one."""
    return home in path.parents and path.relative_to(home).parts[0].startswith(".")


def git_global_configs(home: Path) -> list[Path]:
    """git's global config files: ~/.gitconfig and $XDG_CONFIG_HOME/git/config (or ~/.config/git/config)."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return [home / ".gitconfig", Path(xdg) / "git" / "config"]


def _includes(config: Path, depth: int = 0) -> list[Path]:
    """The files the git config file ``config`` includes (``include.path``, ``includeIf.*.path``), and theirs,
    read as text: nothing runs. A relative path is relative to the including file's folder."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found: list[Path] = []
    section = ""
    for line in text.splitlines():
        if match := _SECTION.match(line):
            section = match.group(1).lower()
            line = line[match.end() :]
        if section in ("include", "includeif") and (value := _PATH.match(line)):
            raw = value.group(1).strip('"')
            path = Path(os.path.expanduser(raw))
            try:  # relative to the including file's folder: the link's and its target's, to be sure
                paths = [path] if path.is_absolute() else [config.parent / path, config.resolve().parent / path]
            except (OSError, RuntimeError):
                paths = [config.parent / path]
            found += paths
            if depth < 4:
                for each in paths:
                    found += _includes(each, depth + 1)
    return found


def dotfile_targets(home: Path) -> list[Path]:
    """The files $HOME's start-up and settings paths resolve to, and the files git's global config
    includes, resolved: those in a writable folder are held. Blocking: a few stats and small reads."""
    found: dict[Path, None] = {}
    configs = git_global_configs(home)
    for path in [*(home / name for name in HOME_HELD), *configs]:
        if os.path.islink(path) or any(os.path.islink(part) for part in path.parents if home in part.parents):
            try:
                found[path.resolve()] = None
            except (OSError, RuntimeError):
                continue
    for config in configs:
        for included in _includes(config):
            try:
                found[included.resolve()] = None
            except (OSError, RuntimeError):
                continue
    return list(found)


def home_reason(real: Path, base: Path) -> str:
    """Why the file tools ask before writing ``real`` (resolved) in the workspace folder ``base``: it is a
    dot-entry of $HOME when ``base`` holds $HOME, or a file a start-up or settings path resolves to. "" else."""
    home = Path(os.environ.get("HOME") or Path.home()).resolve()
    if (base == home or base in home.parents) and under_home_dot(real, home):
        return f"~/{real.relative_to(home).parts[0]} is read by other programs later (a dot-entry of $HOME)"
    if real in dotfile_targets(home):
        return f"{real} is a start-up or settings file of $HOME's (through a link or a git include)"
    return ""
