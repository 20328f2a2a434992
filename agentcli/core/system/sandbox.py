"""The OS sandbox under the commands a model or a repository makes agentcli run (Linux: bubblewrap).

Permission rules decide *whether* a command runs; the sandbox limits *what it can do* once it
runs, so a gap in the rules is harmless. It holds in every permission mode (``bypassPermissions``
and ``-p`` included): a mode lifts questions, not the sandbox. Only the ``sandbox`` setting turns
it off, and a workspace's own settings can do that only once the user trusted the workspace.

Inside (``bwrap``, Debian's ``bubblewrap``):

- the whole file system read-only; the workspace, the ``--add-dir`` folders (and, for a git
  worktree, its repository's git folder) writable;
- the user's secrets hidden (``SECRET_PATHS`` under ``$HOME``, and agentcli's own config and data
  folders): an empty read-only folder, or an empty file, stands in their place; ``~`` is still the
  user's ``$HOME``;
- ``/tmp`` private to the session (one folder of the host's, shared by the session's calls and
  removed with the session), a minimal ``/dev``, an empty ``/run`` (no docker or agent sockets),
  and ``/proc`` of the sandbox's own PID namespace;
- no network (a network namespace of its own, with only its own loopback) unless
  ``sandbox_network`` allows it;
- no capabilities and no new privileges (setuid programs do not raise them), its own PID, IPC and
  UTS namespaces. When the command ends, the kernel kills whatever it left in its PID namespace
  (daemons included, whatever they did to their environment or session), and ``--die-with-parent``
  kills it all when agentcli dies, even by SIGKILL.

``sandbox = "auto"`` (the default) uses bwrap where it is installed and works, and otherwise runs
commands as before with one notice saying how to install it; ``"on"`` refuses to run a command
without it; ``"off"`` never uses it. macOS (``sandbox-exec``) is not covered yet.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterable, Sequence

from ... import paths

MODES = ("auto", "on", "off")
INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"

# Under $HOME: credentials, keys and tokens of common tools. A folder is replaced by an empty one,
# a file by an empty file. Paths that do not exist are left alone (nothing can create them: the
# file system is read-only, except where a writable folder holds them, such as a workspace at $HOME).
SECRET_PATHS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub", ".config/glab-cli",
    ".netrc", ".git-credentials", ".config/git/credentials", ".docker", ".kube", ".npmrc", ".yarnrc",
    ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml", ".terraform.d",
    ".vault-token", ".password-store", ".local/share/keyrings", ".config/op", ".1password", ".claude",
    ".claude.json", ".config/anthropic", ".config/openai", ".config/rclone", ".s3cfg", ".boto",
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".thunderbird",
)

# What a failed command's output says when the sandbox stopped it, and what the result then adds.
_NETWORK = re.compile(r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
                      r"Name or service not known|getaddrinfo|ENETUNREACH|EAI_AGAIN|nodename nor servname|"
                      r"No address associated with hostname|Failed to establish a new connection|"
                      r"Connection refused|ECONNREFUSED",
                      re.IGNORECASE)
_READ_ONLY = re.compile(r"Read-only file system|EROFS", re.IGNORECASE)


class SandboxError(Exception):
    """The sandbox is required (``sandbox = "on"``) but cannot be used; the message says why and what to do."""


def secret_paths(home: Path | None = None) -> list[Path]:
    """What the sandbox hides: the secrets under ``home`` (default $HOME) and agentcli's own folders."""
    home = home or Path(os.environ.get("HOME") or Path.home())
    return [*(home / name for name in SECRET_PATHS), paths.config_home(), paths.data_home()]


def writable_dirs(root: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """The folders a command may write: the workspace ``root``, ``extra`` (--add-dir), and, when the
    workspace is a git worktree (``.git`` is a file), the git folders it names (commits write there)."""
    found = [root, *extra]
    dot_git = root / ".git"
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace") if dot_git.is_file() else ""
    except OSError:
        text = ""
    if text.startswith("gitdir:"):
        gitdir = (root / text.removeprefix("gitdir:").strip()).resolve()
        found.append(gitdir)
        try:
            common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
            found.append(common)
        except OSError:
            pass
    return found


class Sandbox:
    """One session's sandbox: how to wrap a command, and the session's private /tmp."""

    def __init__(self, mode: str = "auto", *, network: bool = False, bwrap: str | None = None,
                 hidden: Sequence[Path] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"sandbox must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.network = network
        self.bwrap = bwrap if bwrap is not None else (shutil.which("bwrap") if sys.platform.startswith("linux")
                                                      else None)
        self.hidden = list(hidden) if hidden is not None else secret_paths()
        self.home = Path(os.environ.get("HOME") or Path.home())
        self._tmp: Path | None = None
        self._problem: str | None = None  # why bwrap cannot be used here ("" once it worked)
        self._told = False  # the notice that the sandbox is off has been given
        self._lock = threading.RLock()  # usable() tries bwrap through wrap(), which makes the private /tmp

    @classmethod
    def for_setting(cls, mode: str, network: bool = False) -> "Sandbox | None":
        """The sandbox the ``sandbox`` setting asks for; None when it is off."""
        return None if mode == "off" else cls(mode, network=network)

    # ------------------------------------------------------------ can it run?

    def startup_notice(self) -> str:
        """One notice for the start of a session when bwrap is not installed ("" when it is)."""
        if self.bwrap is not None or not sys.platform.startswith("linux"):
            return ""
        if self.mode == "on":
            return (f'sandbox = "on", but bubblewrap (bwrap) is not installed, so bash refuses to run; {INSTALL}, '
                    'or set sandbox = "auto".')
        return ("Commands run without the OS sandbox: bubblewrap (bwrap) is not installed. To confine bash to the "
                f"workspace, without network or your secrets, {INSTALL}.")

    def usable(self) -> bool:
        """Whether commands run inside bwrap. The first call tries bwrap once (blocking: call it in a
        thread). Raises SandboxError when the sandbox is required and cannot be used."""
        with self._lock:
            if self._problem is None:
                self._problem = self._try()
        if not self._problem:
            return True
        if self.mode == "on":
            raise SandboxError(f'The sandbox is required (sandbox = "on") but {self._problem}, so the command was '
                               f'not run; {INSTALL}, or set sandbox = "auto" or "off".')
        return False

    def take_notice(self) -> str:
        """Once, when ``usable()`` found bwrap installed but not working: the sentence saying so."""
        if self._told or not self._problem or self.bwrap is None:
            return ""
        self._told = True
        return f"Commands run without the OS sandbox: {self._problem}."

    def _try(self) -> str:
        if not sys.platform.startswith("linux"):
            return "the OS sandbox exists only on Linux for now"
        if self.bwrap is None:
            return "bubblewrap (bwrap) is not installed"
        here = Path(tempfile.gettempdir())
        try:
            done = subprocess.run(self.wrap(["true"], cwd=here, writable=[]), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap could not be started ({exc})"
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            return f"bwrap does not work here ({said[-1] if said else f'exit {done.returncode}'})"
        return ""

    # ------------------------------------------------------------ the command line

    def tmp(self) -> Path:
        """The session's private /tmp, made on first use."""
        with self._lock:
            if self._tmp is None:
                self._tmp = Path(tempfile.mkdtemp(prefix="agentcli-sandbox-tmp-"))
                _made.append(self._tmp)
        return self._tmp

    def wrap(self, argv: Sequence[str], *, cwd: Path, writable: Iterable[Path], new_session: bool = False) -> list[str]:
        """``argv`` as a bwrap command line that runs it in the sandbox, in ``cwd``.

        ``new_session``: also detach it from agentcli's terminal (for commands not started in a
        session of their own)."""
        assert self.bwrap is not None
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"]
        if self.network:  # name resolution may go through a socket under /run
            args += ["--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve"]
        args += ["--bind", str(self.tmp()), "/tmp", "--setenv", "TMPDIR", "/tmp"]
        # Mounts go shallowest first, so a writable workspace inside a hidden folder (a subagent's
        # worktree in the data folder) shows again, and a secret inside a workspace ($HOME) stays hidden.
        # At the same depth, writable beats read-only, and hiding comes last: it wins. $HOME is bound
        # again in case it lies under /tmp, which the private /tmp would cover.
        mounts: list[tuple[int, int, list[str]]] = []
        for home in _resolved([self.home]):
            if home.is_dir() and len(home.parts) > 1 and home != Path("/tmp"):
                mounts.append((len(home.parts), 0, ["--ro-bind", str(home), str(home)]))
        # Likewise the Python environment and code agentcli runs from, when they lie under /tmp (a clone
        # there, as in CI): hooks and servers that run `python -m …` from them keep finding them, read-only.
        own = [Path(sys.prefix), Path(sys.base_prefix)] + [Path(entry) for entry in sys.path if entry]
        for program in dict.fromkeys(_resolved(own)):
            if program.is_dir() and Path("/tmp") in program.parents:
                mounts.append((len(program.parts), 0, ["--ro-bind", str(program), str(program)]))
        for folder in dict.fromkeys(_resolved(writable)):
            if folder.is_dir():
                mounts.append((len(folder.parts), 1, ["--bind", str(folder), str(folder)]))
        read_only: list[str] = []
        for secret in dict.fromkeys(_resolved(self.hidden)):
            if secret.is_dir():
                mounts.append((len(secret.parts), 2, ["--tmpfs", str(secret)]))
                read_only += ["--remount-ro", str(secret)]
            elif secret.exists():
                mounts.append((len(secret.parts), 2, ["--ro-bind", "/dev/null", str(secret)]))
        for _, _, mount in sorted(mounts, key=lambda m: (m[0], m[1])):
            args += mount
        args += read_only  # after every mount made inside them
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent",
                 "--cap-drop", "ALL"]
        if not self.network:
            args.append("--unshare-net")
        if new_session:
            args.append("--new-session")
        args += ["--chdir", str(cwd), "--", *argv]
        return args

    def explain(self, output: str) -> str:
        """For a command that failed: what the sandbox may have denied it, as a line for its result ("" if nothing)."""
        if not self.network and _NETWORK.search(output):
            return ("[The command may have needed the network: it runs in agentcli's OS sandbox, which has no network. "
                    "Each call has a loopback of its own, so neither the host's localhost nor a server that another "
                    "call started (run_in_background) can be reached; start and query a server in one call. The "
                    "user can allow the network with the setting sandbox_network = true; do not retry it as it is.]")
        if _READ_ONLY.search(output):
            return ("[The OS sandbox lets commands write only in the workspace, the --add-dir folders and /tmp; "
                    "everything else is read-only. Write inside the workspace instead.]")
        return ""

    def close(self) -> None:
        """Remove the session's private /tmp."""
        with self._lock:
            tmp, self._tmp = self._tmp, None
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
            if tmp in _made:
                _made.remove(tmp)


def _resolved(folders: Iterable[Path]) -> list[Path]:
    out = []
    for folder in folders:
        try:
            out.append(Path(folder).resolve())
        except (OSError, RuntimeError):
            continue
    return out


_made: list[Path] = []  # private /tmp folders still to remove: at exit, whatever happened


@atexit.register
def _remove_tmp() -> None:
    for tmp in list(_made):
        shutil.rmtree(tmp, ignore_errors=True)
