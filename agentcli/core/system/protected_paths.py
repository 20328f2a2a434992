"""The held paths: what other programs read and run later, outside the sandbox, held even inside a writable folder.

A command in the sandbox may write the workspace, but not the places that git, the shell, direnv, an
editor, Claude Code or agentcli itself will read and run later with the user's network and secrets: a
hook or an fsmonitor planted there would run at the user's next ``git status``, outside any sandbox.
Anthropic's sandbox runtime for Claude Code keeps such a list ("mandatory deny"); this is agentcli's:

- in every git folder the sandbox may write: ``GIT_HELD`` (its config, hooks and the rest), and in
  each of its linked worktrees' folders ``ADMIN_HELD``; ``worktrees`` and a submodule's folder (``modules/…``) likewise,
  and no new one can be made;
- the folder ``core.hooksPath`` names (read with git's config reader, which runs nothing);
- at the top of each writable folder, ``WORKSPACE_HELD`` (agentcli's and Claude Code's project
  settings, ``.mcp.json``, ``.envrc``, the editors' folders), and ``.git`` unless it is a git folder (a
  linked worktree's ``.git`` file; a ``.git`` that does not exist, which would be the repository the
  user's git finds there);
- ``HOME_HELD`` under ``$HOME``, when a writable folder holds it (a workspace at ``$HOME``).

The same list makes the file tools ask (``Permissions``): ``protected`` below.

How the sandbox holds them (``Holds``): a path that exists is bound read-only onto itself, and each
folder between it and its writable folder is bound onto itself, so it cannot be renamed away and
rebuilt. A path that does not exist yet cannot be made only if something stands in its place: the
``HOLDER`` process, outside the sandbox, makes an empty *placeholder* (``_kind``: a folder, which git
leaves out of ``git add -A``; in a git folder a file) before bwrap binds it read-only, and removes it
when the command ends, unless another sandbox still uses it: each holds a shared lock per placeholder
(in agentcli's data folder, which the sandbox hides) while it runs, a placeholder another command made
included, since removing a mount point detaches the mount in every other namespace. A placeholder a
killed run left behind is taken over and removed by the next command that holds it.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from ... import paths
from . import config_stamp
from .git import _run, is_git_repo
from .home_held import HOME_HELD, dotfile_targets, home_open, home_pins, under_home_dot

# In a git folder (the main one, or a submodule's): what git reads as settings or runs as programs.
# ``modules`` and ``worktrees`` are held as a whole; each submodule's folder and each linked worktree's in
# them is writable again (``Holds``) with the same (``ADMIN_HELD``) held inside it, so a new submodule or
# worktree, with a config or a ``commondir`` of the command's making, cannot be made.
GIT_HELD = ("config", "config.worktree", "commondir", "hooks", "info", "modules", "worktrees")
# In a git folder or a linked worktree's, when they exist: a rebase or cherry-pick stopped halfway, whose
# todo list git runs (its ``exec`` lines) at the user's ``--continue``. Not held while missing: git reads
# any file or folder there as a rebase in progress, so a placeholder would stop every git command.
STOPPED_HELD = ("rebase-merge", "rebase-apply", "sequencer")
# In a linked worktree's own folder (``.git/worktrees/NAME``): where its common folder is, its own settings.
ADMIN_HELD = ("commondir", "config.worktree", "gitdir")
# At the top of each writable folder: agentcli's and Claude Code's project settings, commands, agents,
# skills and hooks; MCP servers Claude Code starts; direnv's script; the editors' tasks and settings.
WORKSPACE_HELD = (".agentcli", ".claude", ".mcp.json", ".envrc", ".vscode", ".idea")
# And when git has a hook installed there (not a ``.sample``): the hook managers' scripts and settings, which
# those hooks run (husky's .husky, lefthook's, pre-commit's). Only then, as each missing one is a placeholder.
HOOK_MANAGERS_HELD = (
    ".husky",
    ".lefthook",
    ".lefthook-local",
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    *(
        f"{dot}lefthook{local}.{ext}"
        for dot in ("", ".")
        for local in ("", "-local")
        for ext in ("yml", "yaml", "json", "toml")
    ),
)
# The same hook managers' files by pattern, for the file tools (which see every name they write).
_HOOK_MANAGERS = re.compile(r"\.?lefthook[\w.-]*|\.pre-commit-config\.ya?ml|\.husky")


class HeldLink(Exception):
    """A held path, or a folder on the way to one, is a symbolic link: a mount cannot hold its name."""


@dataclass(frozen=True)
class Holds:
    """What one sandboxed command may not change inside its writable folders, as mounts."""

    pins: tuple[Path, ...] = ()  # folders on the way to a held path: bound writable onto themselves
    read_only: tuple[Path, ...] = ()  # held paths that exist: bound read-only onto themselves
    placeholders: tuple[tuple[Path, str], ...] = ()  # held paths that do not: ("file", "dir" or "commondir")
    held: tuple[Path, ...] = field(default=(), compare=False)  # every held path, for ``needs``
    links: tuple[tuple[Path, str], ...] = ()  # held paths that are symbolic links, and what they say: put back


def protected(rel: PurePath) -> str:
    """Why the file tools ask before writing ``rel`` (relative to a workspace folder, or the name of a
    path), by name alone: a git folder, a ``WORKSPACE_HELD`` name or a ``HOME_HELD`` path at any depth.
    "" when none. (The ``core.hooksPath`` folder is found by ``hooks_folders``.)"""
    names = [part.lower() for part in rel.parts]
    for index, name in enumerate(names):
        if name == ".git" or name in WORKSPACE_HELD or _HOOK_MANAGERS.fullmatch(name) or name in HOOK_MANAGERS_HELD:
            inside = index < len(names) - 1
            return f"files in {rel.parts[index]}/ are protected" if inside else f"{rel.parts[index]} is protected"
    for entry in HOME_HELD:
        parts = PurePath(entry).parts
        for start in range(len(names) - len(parts) + 1):
            if tuple(names[start : start + len(parts)]) == parts:
                return f"{entry} is a protected start-up or settings file"
    return ""


def hooks_folders(root: Path) -> list[Path]:
    """The folders ``core.hooksPath`` names for the repository ``root`` lies in (any config scope),
    absolute. Read with git's config reader, which runs nothing; kept while no config file git read
    changes (``config_stamp``). Blocking: a few stats, and git processes when a config file changed."""
    return list(config_stamp.remembered(root, lambda: _hooks_folders(root)))


def _hooks_folders(root: Path) -> list[Path]:
    code, out, _ = _run(root, None, "config", "--null", "--type=path", "--get-all", "core.hooksPath", timeout=10)
    values = [value for value in out.split("\0") if value and value != "/dev/null"] if code == 0 else []
    if any(not os.path.isabs(value) for value in values):  # relative to the top of the work tree
        code, top, _ = _run(root, None, "rev-parse", "--path-format=absolute", "--show-toplevel", timeout=10)
        root = Path(top.strip()) if code == 0 and top.strip() else root
    found = [Path(os.path.normpath(root / value)) for value in values]
    return [
        *found,
        *(folder.parent for folder in found if folder.name == "_"),
    ]  # husky's _/pre-commit runs ../pre-commit


def in_hooks_folder(real: Path, base: Path) -> str:
    """Why the file tools ask before writing ``real`` (resolved) in the workspace folder ``base``: git runs
    the hooks in the folder core.hooksPath names; "" elsewhere. Blocking: a git process or two, in a repository."""
    for folder in hooks_folders(base) if is_git_repo(base) else []:
        try:
            where = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if real == where or where in real.parents:
            return f"git runs the hooks in {where} (core.hooksPath)"
    return ""


def git_writable(root: Path, branch: str = "") -> list[Path]:
    """When the workspace ``root`` is a linked git worktree (``.git`` is a file): the parts of its git
    folders its commands may write. Its own folder (``.git/worktrees/NAME``), and the common folder; or,
    with ``branch`` (an isolated child's), of the common folder only that branch's ref (the folder of it
    and of its log: a commit replaces the ref through a lock file beside it); its new objects go to a
    folder of its own (``child_objects``), the common ones being read-only, so none can be replaced. That folder
    must hold the branch alone (worktrees names them ``agentcli/<session>/<id>/work``): one that holds other
    refs is not bound, and commits in the sandbox fail rather than let the child move another branch."""
    gitdir, common = linked_git_dirs(root)
    if gitdir is None:
        return []
    found = [gitdir]
    if common is None:
        return found
    if not branch:
        return [*found, common]
    ref = PurePath("refs", "heads", branch)
    if ".." in ref.parts or len(ref.parts) < 4:
        return found
    return [
        *found,
        *(folder for folder in (common / ref.parent, common / "logs" / ref.parent) if _holds_only(folder, ref.name)),
    ]


def linked_git_dirs(root: Path) -> tuple[Path | None, Path | None]:
    """A linked worktree's own git folder (``.git/worktrees/NAME``, from its ``.git`` file) and the common
    one it names; (None, None) for a workspace that is not a linked worktree, (folder, None) when the
    common folder cannot be read."""
    dot_git = root / ".git"
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace") if dot_git.is_file() else ""
    except OSError:
        text = ""
    if not text.startswith("gitdir:"):
        return None, None
    gitdir = (root / text.removeprefix("gitdir:").strip().partition("\n")[0]).resolve()
    try:
        return gitdir, (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return gitdir, None


def _holds_only(folder: Path, name: str) -> bool:
    """Whether ``folder`` is a real folder with nothing in it but the ref ``name`` (and its lock file)."""
    try:
        return (
            folder.is_dir()
            and not folder.is_symlink()
            and all(entry.name in (name, f"{name}.lock") for entry in folder.iterdir())
        )
    except OSError:
        return False


def holds(writable: Iterable[Path], home: Path, allowed: Iterable[Path] = (), hidden: Iterable[Path] = ()) -> Holds:
    """What to hold inside the ``writable`` folders (resolved), for a command that may also write
    ``allowed`` (what the user let it have: a held path named there, or itself one of the writable
    folders, as ``--add-dir`` can name one, is not held). ``hidden``: the secrets the sandbox hides; one
    that does not exist is held, so that it cannot be made. Raises HeldLink.
    Blocking: a few stats, and a git process or two per repository (``hooks_folders``)."""
    folders = [Path(folder) for folder in writable]
    given = len(folders)
    let = [Path(path) for path in allowed]
    wanted: list[tuple[Path, str]] = []  # (path, what stands in its place while it does not exist)
    for folder in folders[:given]:
        if not _in_git_folder(folder):  # a work tree's top: its project settings, and its .git; one that
            wanted += [(folder / name, _kind(name)) for name in (*WORKSPACE_HELD, ".git")]  # does not exist
            # yet cannot be made either: a new repository there would be the one the user's git finds
        for gitdir in _git_folders(folder):
            wanted += _held_in_git(gitdir, folders)
        if folder.name == "objects" and (folder.parent / "HEAD").is_file():  # an isolated child's: not where
            wanted.append((folder / "info", "dir"))  # more objects are (alternates)
        hooks = hooks_folders(folder) if is_git_repo(folder) else []
        wanted += [(each, "dir") for each in hooks]
        gitdirs = [*_git_folders(folder), *git_writable(folder)[1:2]]  # its own, or a linked worktree's common one
        if not _in_git_folder(folder) and _hooks_installed([*hooks, *(git / "hooks" for git in gitdirs)]):
            wanted += [(folder / name, "dir") for name in HOOK_MANAGERS_HELD]
    wanted += [(target, "dir") for target in dotfile_targets(home)]  # dotfiles kept in a writable folder (a
    # missing one: an empty folder, which git add -A leaves out)
    wanted += [(secret, "dir") for secret in hidden if not secret.exists()]  # nor can a secret be made
    at_home = home_open(folders[:given], home) and not any(home == a or a in home.parents for a in let)
    if at_home:  # $HOME's dot-entries, all of them, through $HOME held and its other entries writable again
        wanted = [(path, kind) for path, kind in wanted if not under_home_dot(path, home)]
    pins: dict[Path, None] = {}
    read_only: dict[Path, None] = {}
    placeholders: dict[Path, str] = {}
    held: dict[Path, None] = {}
    links: dict[Path, str] = {}
    queue = list(dict(reversed(wanted)).items())
    while queue:
        path, kind = queue.pop(0)
        base = _writable_base(path, folders)
        if (
            base is None
            or path in folders[:given]
            or any(path == a or a in path.parents for a in let)
            or path.name == ".git"
            and path.is_dir()
            and not path.is_symlink()
            and not is_placeholder(path)
        ):
            continue  # (a repository's own .git: what is held is inside it)
        held[path] = None
        missing = None
        for step in reversed(path.relative_to(base).parents[:-1]):  # the folders on the way, outermost first
            folder = base / step
            if folder.is_symlink():
                raise HeldLink(
                    f"{folder} is a symbolic link on the way to {path}, which the sandbox holds "
                    "read-only, and a mount cannot hold a link's name"
                )
            if not folder.exists() or is_placeholder(folder):  # another command's placeholder is held as
                missing = folder  # this one's too: its lock keeps the one that made it from removing it
                break
            pins[folder] = None
        if missing is not None:
            placeholders.setdefault(missing, "dir")
        elif path.is_symlink():  # a mount holds what it leads to, not its name: HOLDER puts the link back
            try:
                links[path], target = os.readlink(path), path.resolve()
            except (OSError, RuntimeError, ValueError):
                raise HeldLink(f"{path} is a symbolic link the sandbox cannot follow") from None
            if target not in held and all(target != queued for queued, _ in queue):
                queue.append((target, kind))  # held where it lies, when that is in a writable folder
        elif path.exists() and not is_placeholder(path):
            read_only[path] = None
        else:
            placeholders[path] = kind
    if at_home:
        read_only[home] = None
        held.update((home / name, None) for name in HOME_HELD)
        pins.update((entry, None) for entry in home_pins(home))
        pins.update((path, None) for path in [*folders, *let] if home in path.parents and path.exists())
    for path in [*read_only, *placeholders]:
        pins.pop(path, None)
    pins.update((module, None) for module in folders[given:])  # submodules' folders: writable again
    return Holds(tuple(pins), tuple(read_only), tuple(placeholders.items()), tuple(held), tuple(links.items()))


def _hooks_installed(folders: list[Path]) -> bool:
    """Whether one of the hooks ``folders`` holds a hook git runs (anything but git's ``.sample`` files)."""
    for folder in folders:
        try:
            if any(not entry.name.endswith(".sample") for entry in os.scandir(folder)):
                return True
        except OSError:
            continue
    return False


def _writable_base(path: Path, folders: list[Path]) -> Path | None:
    """The deepest writable folder ``path`` lies in (not the folder itself), or None."""
    inside = [folder for folder in folders if folder in path.parents]
    return max(inside, key=lambda folder: len(folder.parts)) if inside else None


def _in_git_folder(folder: Path) -> bool:
    """Whether a writable folder is a git folder or lies in one (an isolated child's objects, its ref)."""
    return any(
        place.name == ".git" or ((place / "HEAD").is_file() and (place / "objects").is_dir())
        for place in (folder, *folder.parents)
    )


def _git_folders(folder: Path) -> list[Path]:
    """The git folders a writable folder is, or holds at its top (``.git``)."""
    found = [folder / ".git"] if (folder / ".git").is_dir() and not (folder / ".git").is_symlink() else []
    if (folder / "HEAD").is_file() and ((folder / "objects").is_dir() or (folder / "commondir").is_file()):
        found.append(folder)
    return found


def _kind(name: str) -> str:
    """What stands in for a held path while it does not exist: an empty folder, which git leaves out of
    ``git add -A`` (an empty file would be committed); in a git folder, where git reads the name as a
    file, an empty file, and for ``commondir`` one that says "." (the git folder itself: git refuses an
    empty one, and reads one that exists)."""
    return "commondir" if name == "commondir" else "file" if name in ("config", "config.worktree", "gitdir") else "dir"


def _held_in_git(gitdir: Path, folders: list[Path]) -> list[tuple[Path, str]]:
    """What is held in one git folder: a linked worktree's own folder holds ADMIN_HELD; a common one
    GIT_HELD, each linked worktree's ADMIN_HELD, and each submodule's folder, found under ``modules``
    (added to ``folders``: writable again inside the held ``modules``)."""
    stopped = [(gitdir / name, "dir") for name in STOPPED_HELD if os.path.lexists(gitdir / name)]
    if (gitdir / "commondir").is_file() and gitdir.parent.name == "worktrees":
        return [*stopped, *((gitdir / name, _kind(name)) for name in ADMIN_HELD)]
    found = [*stopped, *((gitdir / name, _kind(name)) for name in GIT_HELD)]
    try:
        admins = [entry for entry in (gitdir / "worktrees").iterdir() if entry.is_dir() and not entry.is_symlink()]
    except OSError:
        admins = []
    folders += admins
    found += [entry for admin in admins for entry in _held_in_git(admin, folders)]
    for module in _submodule_folders(gitdir / "modules"):
        folders.append(module)
        found += _held_in_git(module, folders)
    return found


def _submodule_folders(modules: Path, depth: int = 0) -> list[Path]:
    """The git folders under ``modules`` (a submodule named a/b lives in modules/a/b)."""
    found: list[Path] = []
    try:
        entries = [entry for entry in modules.iterdir() if entry.is_dir() and not entry.is_symlink()]
    except OSError:
        return found
    for entry in entries:
        if (entry / "HEAD").is_file():
            found.append(entry)
        elif depth < 8:
            found += _submodule_folders(entry, depth + 1)
    return found


# What a placeholder is (made by HOLDER, never by anyone else): an empty file of mode 0400 (``commondir``'s
# says ".") or an empty folder of mode 0500. One test, run here and in HOLDER, which imports nothing of agentcli.
PLACEHOLDER_TEST = r"""
import os, stat
def is_placeholder(path):
    try:
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o400:
            with open(path, "rb") as f:
                return f.read(3) in (b"", b".\n")
        return stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o500 and not os.listdir(path)
    except OSError:
        return False
"""
_test: dict[str, Any] = {}
exec(PLACEHOLDER_TEST, _test)  # agentcli's own text, above: the same code HOLDER runs


def is_placeholder(path: Path) -> bool:
    """Whether ``path`` is a placeholder ``HOLDER`` made (``PLACEHOLDER_TEST``)."""
    return bool(_test["is_placeholder"](path))


def lock_file(path: Path) -> Path:
    """The lock that says a sandbox uses the placeholder at ``path`` (in agentcli's data folder, hidden
    from the sandbox); its folder is made here."""
    folder = paths.data_home() / "held"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder / (hashlib.sha256(os.fsencode(path)).hexdigest()[:32] + ".lock")


# Outside the sandbox, before bwrap and after it: makes the placeholders, runs bwrap (argv after "--"),
# removes them, and puts back the held links the command replaced. argv: PPID [KIND PATH LOCK]... -- BWRAP...
# (KIND "link": PATH and what the link says, in LOCK's place); its exit status is bwrap's. When agentcli
# (PPID) dies it kills bwrap (and bwrap, with --die-with-parent, the sandbox); signals that stop it reach
# bwrap. Small and quick to start: os, fcntl, select and signal only.
HOLDER = (
    PLACEHOLDER_TEST
    + r"""
import fcntl, select, signal, sys
ppid, end = int(sys.argv[1]), sys.argv.index("--")
held = [tuple(sys.argv[i:i + 3]) for i in range(2, end, 3)]
links = [(path, text) for kind, path, text in held if kind == "link"]
held = [entry for entry in held if entry[0] != "link"]
def fail(path, exc):
    sys.stderr.write("agentcli's OS sandbox could not hold %s (%s), so the command was not run\n"
                     % (path, exc.strerror or exc))
    sys.exit(126)
try:
    parent = os.pidfd_open(ppid)
except (AttributeError, OSError):
    parent = None
if os.getppid() != ppid:
    sys.exit(125)
locks = []
for kind, path, lock in held:
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        fail(lock, exc)
    fcntl.flock(fd, fcntl.LOCK_SH)
    locks.append(fd)
    try:
        if kind == "dir":
            os.mkdir(path, 0o500)
            os.chmod(path, 0o500)
        else:
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o400)
            os.write(f, b".\n" if kind == "commondir" else b"")
            os.close(f)
            os.chmod(path, 0o400)
    except FileExistsError:
        pass
    except OSError as exc:
        fail(path, exc)
argv = sys.argv[end + 1:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
def forward(number, frame):
    try:
        os.kill(pid, number)
    except OSError:
        pass
stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
for number in stops:
    signal.signal(number, forward)
poller = select.poll()
child = os.pidfd_open(pid)
poller.register(child, select.POLLIN)
if parent is not None:
    poller.register(parent, select.POLLIN)
while True:
    ready = [fd for fd, _ in poller.poll(None if parent is not None else 1000)]
    if child in ready:
        break
    if parent in ready or os.getppid() != ppid:
        forward(signal.SIGKILL, None)
        break
code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
for number in stops:
    signal.signal(number, signal.SIG_IGN)
for (kind, path, lock), fd in zip(held, locks):
    fcntl.flock(fd, fcntl.LOCK_UN)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        continue
    if is_placeholder(path):
        try:
            (os.rmdir if os.path.isdir(path) else os.unlink)(path)
        except OSError:
            pass
    fcntl.flock(fd, fcntl.LOCK_UN)
for path, text in links:  # a held link the command replaced is put back; what it made is kept aside
    try:
        if os.readlink(path) == text:
            continue
    except OSError:
        pass
    aside, n = "", 0
    try:
        if os.path.lexists(path):
            aside = path + ".replaced"
            while os.path.lexists(aside):
                n += 1
                aside = "%s.replaced%d" % (path, n)
            os.rename(path, aside)
        os.symlink(text, path)
        sys.stderr.write("agentcli put back the link %s, which the command replaced%s\n"
                         % (path, " (what it made there is now %s)" % aside if aside else ""))
    except OSError as exc:
        sys.stderr.write("agentcli could not put back the link %s (%s)\n" % (path, exc.strerror or exc))
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""
)


def named(line: str, held: Iterable[Path], cwd: Path | None = None) -> list[Path]:
    """The held paths a line of a command's output names (``could not write config file .git/config``),
    by the whole path or relative to ``cwd``, itself or a path inside it; the deepest first."""
    found: list[Path] = []
    for path in sorted(held, key=lambda p: -len(p.parts)):
        names = [str(path)]
        if cwd is not None and cwd in path.parents:
            names.append(str(path.relative_to(cwd)))
        for name in names:
            if re.search(r"(?:^|[\s'\"`(:=])(?:\./)?" + re.escape(name) + r"(?=$|[/\s'\"`:),]|\.lock\b)", line):
                if not any(path in other.parents for other in found):
                    found.append(path)
                break
    return found
