"""The OS sandbox under the commands a model or a repository makes agentcli run (Linux: bubblewrap).

Permission rules decide *whether* a command runs; the sandbox limits *what it can do* once it
runs, so a gap in the rules is harmless. It holds in every permission mode (``bypassPermissions``
and ``-p`` included): a mode lifts questions, not the sandbox. Only the ``sandbox`` setting turns
it off, and a workspace's own settings can do that only once the user trusted the workspace.

Inside (``bwrap``, Debian's ``bubblewrap``):

- the whole file system read-only; the workspace, the ``--add-dir`` folders (and, for a git
  worktree, its repository's git folder; for an isolated child's, its branch alone) writable, less
  what git, the shell, editors and agentcli run later (``protected_paths``: held read-only there);
- the user's secrets hidden (``hidden_paths``: tokens, keys and shell histories under ``$HOME``, and
  agentcli's own config and data folders): an empty read-only folder, or an empty file, stands in
  their place; ``~`` is still the user's ``$HOME``;
- ``/tmp`` private to the session (one folder of the host's, shared by the session's calls and
  removed with the session), a minimal ``/dev``, an empty ``/run`` (no docker or agent sockets),
  and ``/proc`` of the sandbox's own PID namespace;
- no network (a network namespace of its own, with only its own loopback) unless
  ``sandbox_network`` allows it; with ``sandbox_allowed_hosts``, the listed hosts only, through
  ``HostProxy`` outside the sandbox (a Unix socket bound in, and ``BRIDGE`` inside to reach it: host_proxy.py);
- a seccomp filter (``seccomp.py``): no socket but IP's and netlink's routing (no Unix socket, no AF_VSOCK), no ptrace; bwrap
  installs it where the start can pass it a descriptor (``wrap``'s ``pass_fds``), else a loader inside;
- no capabilities and no new privileges (setuid programs do not raise them), its own PID, IPC and
  UTS namespaces. When the command ends, the kernel kills whatever it left in its PID namespace
  (daemons included, whatever they did to their environment or session), and ``--die-with-parent``
  kills it all when agentcli dies, even by SIGKILL.

A command the sandbox stopped for want of the network, a held path or a write elsewhere may run again with just
that added, when the user says so (``needs``, ``Widening``, ``Permissions.ask_sandbox``).

``sandbox = "auto"`` (the default) uses bwrap where it is installed and works, and otherwise runs
commands as before with one notice saying how to install it; ``"on"`` refuses to run a command
without it; ``"off"`` never uses it. macOS (``sandbox-exec``) is not covered yet.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..vocabulary import SANDBOX_MODES as MODES
from . import processes, protected_paths, seccomp, session_dirs
from .hidden_paths import own_homes, secret_paths
from .host_proxy import BRIDGE, PROXY_FOLDER, PROXY_SOCKET, HostProxy
from .protected_paths import HeldLink, git_writable, linked_git_dirs

INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"

# What a failed command's output says when the sandbox stopped it, and what the result then adds.
_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
    r"Name or service not known|getaddrinfo|ENETUNREACH|EAI_AGAIN|nodename nor servname|"
    r"No address associated with hostname|Failed to establish a new connection|"
    r"Connection refused|ECONNREFUSED",
    re.IGNORECASE,
)
_READ_ONLY = re.compile(r"Read-only file system|EROFS", re.IGNORECASE)
# Also said of a held path: renaming over it (git's lock files do), and writing or making what a placeholder holds.
_HELD = re.compile(r"Device or resource busy|EBUSY|Is a directory|EISDIR|File exists|EEXIST")


# In a failed command's output: a path it could not write (``touch: cannot touch '/x': Read-only file system``,
# ``bash: /x: Read-only file system``, ``OSError: [Errno 30] Read-only file system: '/x'``).
_QUOTED_PATH = re.compile(r"""['"\u2018\u201c`](/[^'"\u2019\u201d`\n]*)['"\u2019\u201d`]""")
_BARE_PATH = re.compile(r"(?:^|\s)(/[^\s:'\"]*):\s*(?:[Cc]annot [^:]*:\s*)?Read-only file system")
_NEVER_WRITABLE = (Path("/proc"), Path("/sys"), Path("/dev"))
MAX_WRITES = 3  # paths one question may name


@dataclass(frozen=True)
class Widening:
    """What a command needed beyond the sandbox, or what the user allowed: the network, and paths to write
    (an existing file, or the folder that would hold a new one)."""

    network: bool = False
    writes: tuple[Path, ...] = ()

    def __bool__(self) -> bool:
        return self.network or bool(self.writes)

    def __or__(self, other: Widening) -> Widening:
        return Widening(self.network or other.network, tuple(dict.fromkeys(self.writes + other.writes)))

    def covers(self, other: Widening) -> bool:
        return (self.network or not other.network) and set(other.writes) <= set(self.writes)

    def describe(self) -> str:
        """``network access``, ``write access to /a/file and /b/`` (a folder ends in /: anything in it), or both."""
        parts = ["network access"] if self.network else []
        if self.writes:
            names = [f"{path}/" if path.is_dir() and path != Path("/") else str(path) for path in self.writes]
            parts.append(
                "write access to " + (names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}")
            )
        return " and ".join(parts)


class SandboxError(Exception):
    """The sandbox is required (``sandbox = "on"``) but cannot be used; the message says why and what to do."""


def writable_dirs(root: Path, extra: Iterable[Path] = (), branch: str = "") -> list[Path]:
    """The folders a command may write: the workspace ``root``, ``extra`` (--add-dir), and, when the
    workspace is a git worktree (``.git`` is a file), the parts of its git folders commits write
    (``protected_paths.git_writable``: for an isolated child's ``branch``, that branch alone)."""
    return [root, *extra, *git_writable(root, branch)]


def readable_dirs(root: Path, branch: str = "") -> list[Path]:
    """What an isolated child's (``branch``) commands read beyond the workspace ``root`` and may not write:
    the main repository's git folder (its objects, refs and config), which ``writable_dirs`` binds only
    its branch's ref of."""
    return [common] if branch and (common := linked_git_dirs(root)[1]) is not None else []


class Sandbox:
    """One session's sandbox: how to wrap a command, and the session's private /tmp."""

    def __init__(
        self,
        mode: str = "auto",
        *,
        network: bool = False,
        bwrap: str | None = None,
        hidden: Sequence[Path] | None = None,
        allowed_hosts: Sequence[str] = (),
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"sandbox must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.network = network
        self.allowed_hosts = tuple(allowed_hosts)  # reached through HostProxy when the network is off
        self._proxy: HostProxy | None = None
        self.bwrap = (
            bwrap if bwrap is not None else (shutil.which("bwrap") if sys.platform.startswith("linux") else None)
        )
        self.home = Path(os.environ.get("HOME") or Path.home())
        # What it hides: ``hidden``, else the secrets under $HOME and the homes the environment places now; the
        # list is made again when used rather than held (about 17 KiB, which a session would hold throughout).
        self._hidden = list(hidden) if hidden is not None else None
        self._homes = own_homes() if hidden is None else []
        self._tmp: Path | None = None
        self._problem: str | None = None  # why bwrap cannot be used here ("" once it worked)
        self._told = False  # the notice that the sandbox is off has been given
        self._lock = threading.RLock()  # usable() tries bwrap through wrap(), which makes the private /tmp

    @property
    def hidden(self) -> list[Path]:
        return self._hidden if self._hidden is not None else secret_paths(self.home, self._homes)

    @classmethod
    def for_setting(cls, mode: str, network: bool = False, allowed_hosts: Sequence[str] = ()) -> Sandbox | None:
        """The sandbox the ``sandbox`` setting asks for; None when it is off."""
        return None if mode == "off" else cls(mode, network=network, allowed_hosts=allowed_hosts)

    # ------------------------------------------------------------ can it run?

    def startup_notice(self) -> str:
        """One notice for the start of a session when bwrap is not installed ("" when it is)."""
        if self.bwrap is not None or not sys.platform.startswith("linux"):
            return ""
        if self.mode == "on":
            return (
                f'sandbox = "on", but bubblewrap (bwrap) is not installed, so bash refuses to run; {INSTALL}, '
                'or set sandbox = "auto".'
            )
        return (
            "Commands run without the OS sandbox: bubblewrap (bwrap) is not installed. To confine bash to the "
            f"workspace, without network or your secrets, {INSTALL}."
        )

    def usable(self) -> bool:
        """Whether commands run inside bwrap. The first call tries bwrap once (blocking: call it in a
        thread). Raises SandboxError when the sandbox is required and cannot be used."""
        with self._lock:
            if self._problem is None:
                self._problem = self._try()
        if not self._problem:
            return True
        if self.mode == "on":
            raise SandboxError(
                f'The sandbox is required (sandbox = "on") but {self._problem}, so the command was '
                f'not run; {INSTALL}, or set sandbox = "auto" or "off".'
            )
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
        if why := seccomp.unsupported():
            return why
        here = Path(tempfile.gettempdir())
        fds: list[int] = []
        try:
            argv = self.wrap(["true"], cwd=here, writable=[], pass_fds=fds)
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=30,
                pass_fds=fds,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap could not be started ({exc})"
        finally:
            processes.close_all(fds)
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            return f"bwrap does not work here ({said[-1] if said else f'exit {done.returncode}'})"
        return ""

    # ------------------------------------------------------------ the command line

    def tmp(self) -> Path:
        """The session's private /tmp, made on first use."""
        with self._lock:
            if self._tmp is None:
                self._tmp = session_dirs.make("agentcli-sandbox-tmp-")
        return self._tmp

    def wrap(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        writable: Iterable[Path],
        new_session: bool = False,
        widen: Widening = Widening(),
        pass_fds: list[int] | None = None,
        readable: Iterable[Path] = (),
    ) -> list[str]:
        """``argv`` as a bwrap command line that runs it in the sandbox, in ``cwd``.

        ``readable``: folders shown read-only even where the private /tmp or a hidden folder would cover
        them (an isolated child's main git folder: ``readable_dirs``).

        ``new_session``: also detach it from agentcli's terminal (for commands not started in a
        session of their own). ``widen``: what the user allowed beyond the sandbox (``needs``), for
        this command only: the network, and files or folders to write. ``pass_fds``: where the start can pass
        descriptors down to bwrap, a list that gets those it must pass (``pass_fds`` of ``subprocess``) and then
        close: the seccomp filter, which bwrap installs then. Without it (an MCP server's start through the SDK),
        or with the bridge to the allowed hosts, the filter's loader runs first inside (``seccomp.py``)."""
        assert self.bwrap is not None
        network = self.network or widen.network
        writable = [*writable, *widen.writes]
        args = [
            self.bwrap,
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            *seccomp.HIDE_INIT,
            "--tmpfs",
            "/run",
        ]
        if network:  # name resolution may go through a socket under /run
            args += ["--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve"]
        args += ["--bind", str(self.tmp()), "/tmp", "--setenv", "TMPDIR", "/tmp"]
        bridge = bool(self.allowed_hosts) and not network
        by_bwrap = pass_fds is not None and not bridge  # the bridge's relay makes Unix sockets before the filter
        if not by_bwrap:
            argv = seccomp.confine(argv)  # no Unix socket, no ptrace (seccomp.py)
        if bridge:  # the allowed hosts through the proxy's socket, and nothing else
            args += ["--ro-bind", str(self.proxy().folder), PROXY_FOLDER]
            argv = [sys.executable, "-I", "-S", "-c", BRIDGE, f"{PROXY_FOLDER}/{PROXY_SOCKET}", *argv]
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
        mounts += [
            (len(folder.parts), 0, ["--ro-bind", str(folder), str(folder)])
            for folder in _resolved(readable)
            if folder.is_dir()
        ]
        given = _resolved(writable)
        for folder in dict.fromkeys(given):
            if any(other in folder.parents for other in given):  # a held path the user allowed: git replaces
                continue  # a file by renaming a new one over it, which a mount point would refuse
            if folder.exists():  # a folder, or a file the user allowed writing
                mounts.append((len(folder.parts), 1, ["--bind", str(folder), str(folder)]))
        # What programs run later, outside, stays read-only even inside a writable folder (protected_paths).
        held = self.holds(writable, widen)
        mounts += [(len(pin.parts), 1, ["--bind", str(pin), str(pin)]) for pin in held.pins]
        mounts += [
            (len(path.parts), 2, ["--ro-bind", str(path), str(path)])
            for path in [*held.read_only, *(path for path, _ in held.placeholders)]
        ]
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
        args += [
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
        ]
        if not network:
            args.append("--unshare-net")
        if new_session:
            args.append("--new-session")
        if by_bwrap:
            assert pass_fds is not None
            pass_fds.append(seccomp.descriptor())  # last: nothing after it can fail and leave it open
            args += ["--seccomp", str(pass_fds[-1])]
        args += ["--chdir", str(cwd), "--", *argv]
        if held.placeholders or held.links:  # made before bwrap binds them, and removed after it; links put back
            made = [
                part
                for path, kind in held.placeholders
                for part in (kind, str(path), str(protected_paths.lock_file(path)))
            ]
            made += [part for path, text in held.links for part in ("link", str(path), text)]
            args = [sys.executable, "-I", "-S", "-c", protected_paths.HOLDER, str(os.getpid()), *made, "--", *args]
        return args

    def holds(self, writable: Iterable[Path], widen: Widening = Widening()) -> protected_paths.Holds:
        """What a command that may write ``writable`` (and ``widen``) may not change there. Raises SandboxError
        when a held path is a symbolic link."""
        try:
            return protected_paths.holds(
                _resolved(writable), self.home.resolve(), _resolved(widen.writes), _resolved(self.hidden)
            )
        except HeldLink as exc:
            raise SandboxError(f"The command was not run: {exc}; remove the link.") from None

    def needs(
        self, output: str, writable: Iterable[Path], given: Widening = Widening(), cwd: Path | None = None
    ) -> Widening:
        """For a command that failed in the sandbox: what its output says the sandbox denied it, beyond what
        it had (``writable``, ``given``). The network, when it could not resolve or reach a host; paths it
        could not write, each as the file itself when it exists (else the nearest folder that does), and
        never a hidden path, anything inside one, ``/`` or ``/proc``, ``/sys`` and ``/dev``: those are not
        offered. Inside the writable folders, a held path (``protected_paths``) the output names, by its
        whole path or relative to ``cwd``, is offered as itself. Read from the output, so a need it does
        not say is missed: then nothing is offered, and the command stays as confined as it was."""
        network = not (self.network or given.network) and bool(_NETWORK.search(output))
        allowed = _resolved([*writable, *given.writes])
        hidden = _resolved(self.hidden)
        writes: list[Path] = []
        try:
            held = self.holds(writable, given).held
        except SandboxError:
            held = ()
        for line in output.splitlines():
            if not _READ_ONLY.search(line) and not _HELD.search(line):
                continue
            writes += [path for path in protected_paths.named(line, held, cwd) if path not in writes]
            if not _READ_ONLY.search(line):
                continue
            for raw in [*_QUOTED_PATH.findall(line), *_BARE_PATH.findall(line)]:
                target = _write_target(raw)
                if (
                    target is None
                    or target in writes
                    or target == Path("/")
                    or any(target == a or a in target.parents for a in allowed)
                    or any(target == h or h in target.parents for h in hidden)
                    or any(target == n or n in target.parents for n in _NEVER_WRITABLE)
                ):
                    continue
                writes.append(target)
        return Widening(network, tuple(writes[:MAX_WRITES]))

    def explain(self, output: str, needed: Widening = Widening(), why_unasked: str = "") -> str:
        """For a command that failed: what the sandbox may have denied it, as a line for its result ("" if
        nothing). ``needed``: what ``needs`` found; ``why_unasked``: why nobody was asked to allow it
        ("" when the user was asked and said no)."""
        if needed:
            how = (
                ["sandbox_network = true (or the host in sandbox_allowed_hosts) in their settings"]
                if needed.network
                else []
            ) + (
                [
                    "--add-dir with the folder (in -p), or in a session in default or acceptEdits mode, where "
                    "agentcli asks"
                ]
                if needed.writes
                else []
            )
            told = (
                f"nobody was asked, as {why_unasked}; the user can allow it with {' or '.join(how)}"
                if why_unasked
                else "the user declined to allow it"
            )
            loopback = (
                " Each call has a loopback of its own, so neither the host's localhost nor a server that "
                "another call started (run_in_background) can be reached; start and query a server in one "
                "call."
                if needed.network
                else ""
            )
            held = (
                " Git, the shell, an editor or agentcli runs what is there later, outside the sandbox, so the "
                "sandbox holds it read-only even in the workspace."
                if any(protected_paths.protected(path) for path in needed.writes)
                else ""
            )
            return (
                f"[The command needed {needed.describe()}, which agentcli's OS sandbox does not give: {told}."
                f"{held}{loopback} Do not retry it as it is.]"
            )
        if not self.network and _NETWORK.search(output):
            return (
                "[The command may have needed the network: it runs in agentcli's OS sandbox, which has no network. "
                "Each call has a loopback of its own, so neither the host's localhost nor a server that another "
                "call started (run_in_background) can be reached; start and query a server in one call. The "
                "user can allow the network with the setting sandbox_network = true; do not retry it as it is.]"
            )
        if _READ_ONLY.search(output):
            return (
                "[The OS sandbox lets commands write only in the workspace, the --add-dir folders and /tmp; "
                "everything else is read-only. Write inside the workspace instead.]"
            )
        return seccomp.explain(output)

    def proxy(self) -> HostProxy:
        """The session's proxy to the allowed hosts, started on first use."""
        with self._lock:
            if self._proxy is None:
                self._proxy = HostProxy(self.allowed_hosts)
        return self._proxy

    def close(self) -> None:
        """Remove the session's private /tmp, and stop its proxy."""
        with self._lock:
            tmp, self._tmp = self._tmp, None
            proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.close()
        if tmp is not None:
            session_dirs.remove(tmp)


def _write_target(raw: str) -> Path | None:
    """What writing ``raw`` needs writable: the file itself when it exists, else the nearest existing folder."""
    try:
        path = Path(os.path.normpath(raw)).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _resolved(folders: Iterable[Path]) -> list[Path]:
    out = []
    for folder in folders:
        try:
            out.append(Path(folder).resolve())
        except (OSError, RuntimeError):
            continue
    return out
