"""The hardened git runner: every git command agentcli runs, found, fixed and fenced against the repository.

Every git command goes through ``_run``, which runs git as a subprocess, in a thread, from the
workspace root, so paths read like the other tools' paths. Nothing here changes the repository:
commands run with GIT_OPTIONAL_LOCKS=0, so even ``status`` does not refresh the index behind the
user's back.

A repository is untrusted input: its config, its submodules' configs and the files its config
includes can name commands for git to run (an fsmonitor hook, textconv, external diff and filter
drivers, a gpg program, a transport for a lazy fetch), or move the work tree (core.worktree) out of
the workspace. The snapshot runs before the user has approved anything. So:

- git gets the environment bash gets, without secrets (``command_env``) and without any GIT_*
  variable from our own environment (GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_* ...);
- settings given with ``-c`` win over every config file, so they switch the hooks off, keep git
  out of submodules and forbid every transport;
- the filter drivers the repository's own config defines are emptied by name;
- the git directory and work tree are found once and then fixed on every command line, and a
  repository whose configured work tree is not the directory holding its ``.git`` is refused.

Why not GitPython, which reads refs and config in Python. Weighed for each place (finding the
repository, HEAD and branches for the snapshot, the common directory and HEAD for worktrees), it
does none of them better than this runner:
- What it reads without git is little: a commit, a tree or the index goes through its default
  object database, ``git cat-file`` run through its own command wrapper, which starts from a copy of
  our whole environment (GIT_DIR, GIT_CONFIG_* and the rest: only added to, never dropped), so
  the hardening would have to be rebuilt around a second runner; its pure-Python object database is
  deprecated by GitPython itself "due to security and performance issues".
- ``Repo()`` takes GIT_COMMON_DIR, GIT_OBJECT_DIRECTORY and GIT_WORK_TREE from our environment,
  which the runner drops (tests/core/test_git_hostile.py), and its config reader follows
  ``include.path``; the files it reads (HEAD, refs, packed-refs, config) are read in our process
  with no timeout and no size bound, where a git that stalls on a FIFO is killed after
  COMMAND_TIMEOUT.
- It costs more than it saves: importing it (it runs ``git version`` as it imports) took 6 to 8
  times as long as the three git processes it would replace in the snapshot (300-420 ms against
  40-85 ms here, measured on a loaded machine), and the snapshot lies on the way to the first
  request.
So every git command, and every read of a repository, stays here, where one runner applies the
hardening above, and GitPython is not a dependency.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from .secret_env import command_env

# GIT_NO_LAZY_FETCH needs git 2.45; before that, forbidding every transport below stops a lazy fetch.
GIT_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "LC_ALL": "C",
    "LANGUAGE": "C",
}


PROTOCOLS = ("file", "git", "ssh", "http", "https", "ext", "fd")


# Before the subcommand, on every command. Command-line settings beat every config file and what it
# includes; git also hands them to any git it starts itself.
HARDENING = (
    "--no-pager",
    "-c",
    "core.quotepath=off",
    "-c",
    "color.ui=never",
    "-c",
    "core.hooksPath=/dev/null",  # worktree add, commit and checkout would run the repository's hooks
    "-c",
    "commit.gpgSign=false",
    "-c",
    "tag.gpgSign=false",
    "-c",
    "core.fsmonitor=false",  # status and diff would start the fsmonitor hook
    "-c",
    "submodule.recurse=false",
    "-c",
    "diff.ignoreSubmodules=all",
    "-c",
    "diff.submodule=short",
    "-c",
    "status.submoduleSummary=false",  # a submodule has its own config: never look inside one
    "-c",
    "log.showSignature=false",  # gpg.program
    "-c",
    "safe.bareRepository=explicit",  # a bare repository committed inside the project
    "-c",
    "gc.auto=0",  # a fetch or commit would start `git gc --auto` in a session of its own, out of every watch
    "-c",
    "maintenance.auto=false",
    "-c",
    "protocol.allow=never",
    *(arg for name in PROTOCOLS for arg in ("-c", f"protocol.{name}.allow=never")),
)


# After the subcommand: no textconv or external diff drivers, no gpg, no submodules.
SUBCOMMAND_OPTIONS = {
    "status": ("--ignore-submodules=all",),
    "diff": ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all"),
    "log": ("--no-ext-diff", "--no-textconv", "--no-show-signature", "--ignore-submodules=all"),
    "blame": ("--no-textconv",),
}


# These run clean or smudge filters on files they read or write (worktrees.py adds, commits and checks out).
READS_WORK_TREE = ("status", "diff", "blame", "add", "commit", "write-tree", "worktree", "checkout", "reset")


FILTER_COMMANDS = ("clean", "smudge", "process")

# A worktree child's own object folder, in its worktree's git folder: where its commands' git writes new
# objects (GIT_OBJECT_DIRECTORY, child_objects.py), agentcli's git reads them (an alternate) until absorbed.
CHILD_OBJECTS = "objects"


COMMAND_TIMEOUT = 60.0  # seconds before a git command is killed


class UnsafeRepository(ToolError):
    """The repository's config points git outside the workspace; the git tools refuse it."""


@dataclass(frozen=True)
class Repository:
    """Where git runs (the workspace root) and what it reads: the git directory and the work tree."""

    root: Path
    git_dir: Path
    work_tree: Path


def find_repository(root: Path) -> Repository | None:
    """The repository ``root`` lies in, or None outside one (or in a bare one). Blocking.

    Raises UnsafeRepository when the repository's config moves its work tree (core.worktree) away
    from the directory that holds its ``.git``: git would then read files outside the workspace.
    """
    # One git for both answers where it gives both (a work tree); else each asked alone, for a bare repository's
    # answer or the error that says why there is no top (a git start saved on every look, the @ menu's first too)
    code, out, err = _run(root, None, "rev-parse", "--absolute-git-dir", "--show-toplevel")
    both = [line.strip() for line in out.strip().split("\n")] if code == 0 else []
    if len(both) != 2:
        code, out, _ = _run(root, None, "rev-parse", "--absolute-git-dir")
        both = [out.strip()] if code == 0 else []
    if not both or not both[0]:
        return None
    git_dir = Path(both[0]).resolve()
    work_tree = _checkout_of(root, git_dir)
    if work_tree is None:
        return None
    if len(both) == 2:
        top = both[1]
    else:
        code, out, err = _run(root, None, "rev-parse", "--show-toplevel")
        top = out.strip() if code == 0 else ""
    configured = Path(top).resolve() if top else None
    if configured != work_tree:
        where = f"to {configured}" if configured else f"somewhere git cannot use ({_first_error(err)})"
        raise UnsafeRepository(
            f"This repository's git config (core.worktree) moves its work tree {where}, away from {work_tree} "
            "where its .git is, so the git tools refuse it: they only read the workspace."
        )
    return Repository(root, git_dir, work_tree)


def _checkout_of(root: Path, git_dir: Path) -> Path | None:
    """The nearest folder at or above ``root`` whose ``.git`` (a directory, or a file naming one) is ``git_dir``."""
    start = root.resolve()
    for folder in (start, *start.parents):
        entry = folder / ".git"
        try:
            if entry.is_dir():
                found = entry
            elif entry.is_file():
                line = entry.read_text(encoding="utf-8", errors="replace").partition("\n")[0]
                if not line.startswith("gitdir:"):
                    continue
                found = folder / line.removeprefix("gitdir:").strip()
            else:
                continue
            if found.resolve() == git_dir:
                return folder
        except OSError:
            continue
    return None


def is_git_repo(root: Path) -> bool:
    """Whether ``root`` or a folder above it has a ``.git``: a look at the disk, no git process, so
    startup stays quick. The tools find the repository on use, and say why when they refuse one."""
    start = root.resolve()
    return any(os.path.lexists(folder / ".git") for folder in (start, *start.parents))


def run_git(repo: Repository, *args: str, timeout: float = COMMAND_TIMEOUT) -> tuple[int, str, str]:
    """Run one git command on ``repo``, hardened: (exit status, stdout, stderr). Blocking."""
    return _run(repo.root, repo, *args, timeout=timeout)


def run_git_bytes(repo: Repository, *args: str, timeout: float = COMMAND_TIMEOUT) -> tuple[int, bytes, str]:
    """Like run_git, with stdout as bytes (file contents). Blocking."""
    return start_on(repo, *args, timeout=timeout).result()


def start_on(repo: Repository, *args: str, timeout: float = COMMAND_TIMEOUT) -> Started:
    """``run_git`` started and not waited for (``Started.text``): several such run at once, not one after another."""
    return start_git(repo.root, repo, *args, timeout=timeout)


def _run(
    cwd: Path, repo: Repository | None, *args: str, timeout: float = COMMAND_TIMEOUT, transports: tuple[str, ...] = ()
) -> tuple[int, str, str]:
    """Every git command, run from ``cwd``: on ``repo`` when given, else on the repository git finds."""
    return start_git(cwd, repo, *args, timeout=timeout, transports=transports).text()


@dataclass
class Started:
    """A git command started and not yet waited for: the caller does other work while it runs."""

    process: subprocess.Popen[bytes] | None  # None: it could not start, ``failed`` says why
    subcommand: str
    timeout: float
    stdin: bytes | None = None
    failed: tuple[int, bytes, str] = (127, b"", "")

    def result(self) -> tuple[int, bytes, str]:
        """Waits for it: (exit status, stdout as bytes, stderr). Blocking."""
        if self.process is None:
            return self.failed
        try:
            out, err = self.process.communicate(self.stdin, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            return 124, b"", f"fatal: git {self.subcommand} took longer than {self.timeout:g} seconds"
        return self.process.returncode, out, err.decode("utf-8", errors="replace")

    def text(self) -> tuple[int, str, str]:
        """``result`` with stdout as text, as ``run_git`` gives it. Blocking."""
        code, out, err = self.result()
        return code, out.decode("utf-8", errors="replace"), err


def start_git(
    cwd: Path,
    repo: Repository | None,
    *args: str,
    timeout: float = COMMAND_TIMEOUT,
    objects: dict[str, str] | None = None,
    stdin: bytes | None = None,
    transports: tuple[str, ...] = (),
    own_group: bool = False,
    in_child: Callable[[], None] | None = None,
) -> Started:
    """Start one git command, hardened. ``own_group``: in a process group (a session) of its own, which is stopped
    whole. ``in_child``: run in the child before git (a watched clone's limits: ``clones.py``)."""
    env = {key: value for key, value in command_env().items() if not key.startswith("GIT_")}
    env.update(GIT_ENV)
    if objects is not None:
        env.update(objects)
    elif repo is not None and (repo.git_dir / "commondir").is_file() and (repo.git_dir / CHILD_OBJECTS).is_dir():
        env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(repo.git_dir / CHILD_OBJECTS)  # a worktree child's own
    executable = shutil.which("git", path=env.get("PATH"))
    if executable is None:
        return Started(None, args[0], timeout, failed=(127, b"", "git is not installed"))
    location = (f"--git-dir={repo.git_dir}", f"--work-tree={repo.work_tree}") if repo else ()
    settings: list[str] = []  # leading "-c key=value" pairs: the caller's own settings (a commit identity)
    while len(args) > 2 and args[0] == "-c":
        settings += args[:2]
        args = args[2:]
    subcommand, *rest = args
    if repo is not None and subcommand in READS_WORK_TREE:
        env.update(_no_repository_filters(repo))
    if repo is not None and subcommand == "blame":
        _check_ignore_revs_files(repo)
    allowed = [arg for name in transports for arg in ("-c", f"protocol.{name}.allow=always")]  # after: they win
    command = [
        executable,
        *location,
        *settings,
        *HARDENING,
        *allowed,
        subcommand,
        *SUBCOMMAND_OPTIONS.get(subcommand, ()),
        *rest,
    ]
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=own_group,
            preexec_fn=in_child,
        )
    except OSError as exc:
        return Started(None, subcommand, timeout, failed=(127, b"", f"fatal: cannot run git: {exc.strerror or exc}"))
    return Started(process, subcommand, timeout, stdin)


def origin(folder: Path) -> tuple[str, str]:
    """Where a clone came from: (its origin's URL, the branch it is on, "" when none). Raises ToolError when
    ``folder`` is not a clone."""
    repo = find_repository(folder)
    code, url, _ = run_git(repo, "config", "--get", "remote.origin.url") if repo else (1, "", "")
    if repo is None or repo.work_tree != folder.resolve() or code != 0 or not url.strip():
        raise ToolError(f"{folder} is not a clone of a git repository")
    code, branch, _ = run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
    return url.strip(), branch.strip() if code == 0 else ""


def head_commit(folder: Path) -> str:
    """The commit a clone is at, or ""."""
    repo = find_repository(folder)
    code, out, _ = run_git(repo, "rev-parse", "HEAD") if repo is not None else (1, "", "")
    return out.strip() if code == 0 else ""


def absorb_child_objects(repo: Repository) -> None:
    """Copy the objects a worktree child added (in its own folder, ``CHILD_OBJECTS`` in its worktree's git
    folder ``repo.git_dir``: the sandbox keeps the common objects read-only) into the common folder, as a
    pack git unpacks there: git names each by the hash of its content and never replaces one it has, so a
    child's object file named after another's content adds at most an object of its own. Raises
    UnsafeRepository (one sentence) when git fails."""
    store = repo.git_dir / CHILD_OBJECTS
    if store.is_symlink() or os.path.lexists(store / "info" / "alternates"):
        raise UnsafeRepository(
            f"The worktree {repo.work_tree} has its objects folder made a link or naming "
            "other object folders (objects/info/alternates), so agentcli does not copy them."
        )
    if not store.is_dir():
        return
    own = {"GIT_OBJECT_DIRECTORY": str(store), "GIT_ALTERNATE_OBJECT_DIRECTORIES": ""}
    code, out, err = start_git(
        repo.root, repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)", objects=own
    ).result()
    if code == 0 and out.strip():
        code, out, err = start_git(repo.root, repo, "pack-objects", "--stdout", "-q", objects=own, stdin=out).result()
        if code == 0:
            code, _, err = start_git(repo.root, repo, "unpack-objects", "-q", objects={}, stdin=out).result()
    if code != 0:
        raise UnsafeRepository(
            f"Could not copy the objects of the worktree {repo.work_tree} into the repository: {_first_error(err)}."
        )


def _check_ignore_revs_files(repo: Repository) -> None:
    """Refuse blame when blame.ignoreRevsFile names a file outside the workspace.

    Blame reads that file and quotes a line it cannot parse in its error, so it could show any file on
    disk; no command-line setting drops the configured files before git 2.41.
    """
    code, out, _ = _run(repo.root, repo, "config", "--type=path", "--get-all", "blame.ignoreRevsFile", timeout=10)
    for name in out.splitlines() if code == 0 else []:
        try:
            inside = (repo.work_tree / name).resolve().is_relative_to(repo.root)
        except (OSError, RuntimeError):  # a symlink loop
            inside = False
        if name and not inside:
            raise UnsafeRepository(
                f"git config (blame.ignoreRevsFile) names {name}, outside the workspace, "
                "so git_blame refuses to run: git would read that file."
            )


def _no_repository_filters(repo: Repository) -> dict[str, str]:
    """Environment that empties the filter drivers the repository's own config defines.

    A clean filter runs on every changed file that status, diff or blame looks at. The user's own
    drivers (git-lfs in ~/.gitconfig) stay; those the repository sets (its .git/config and what that
    includes) are replaced by nothing, through GIT_CONFIG_COUNT, which takes any driver name.
    """
    code, out, _ = _run(repo.root, repo, "config", "--null", "--show-scope", "--get-regexp", r"^filter\.", timeout=10)
    if code not in (0, 1):  # 1: no filter is set
        return {}
    fields = out.split("\0")
    drivers = {
        key.split("\n", 1)[0][len("filter.") :].rpartition(".")[0]
        for scope, key in zip(fields[::2], fields[1::2], strict=False)
        if scope in ("local", "worktree")
    }
    settings = [(f"filter.{name}.{key}", "") for name in sorted(drivers) if name for key in FILTER_COMMANDS]
    settings += [(f"filter.{name}.required", "false") for name in sorted(drivers) if name]
    overrides = {"GIT_CONFIG_COUNT": str(len(settings))}
    for number, (key, value) in enumerate(settings):
        overrides[f"GIT_CONFIG_KEY_{number}"], overrides[f"GIT_CONFIG_VALUE_{number}"] = key, value
    return overrides if settings else {}


def _workspace_git(root: Path, *args: str) -> tuple[int, str, str]:
    """Run one git command on the repository the workspace lies in, found afresh. Blocking."""
    repo = find_repository(root)
    if repo is None:
        raise ToolError("The workspace is no longer in a git repository.")
    return run_git(repo, *args)


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        line = line.strip()
        if line.startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip().rstrip(".")
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[0].rstrip(".") if lines else "unknown error"
