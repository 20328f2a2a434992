"""Secrets this process keeps in memory instead of in its environment.

Any process may read the environment its parent started with from ``/proc/<ppid>/environ``
(root may read everyone's), and deleting a variable from ``os.environ`` does not change that
block: the kernel shows the bytes the process was started with, wherever they still are in its
memory. So before anything else runs, ``start_without_secrets`` takes every secret-looking
variable out of ``os.environ`` and, on Linux, overwrites it in that original block with zero
bytes (its address range is in ``/proc/self/stat``), then checks ``/proc/self/environ`` again.
Where that cannot be done (not Linux, the fields unreadable, a block that is not what the
kernel shows), it replaces the process once with the same interpreter and argv, minus the
secrets: the values travel through a pipe that the new image inherits; ``AGENTCLI_SECRETS_FD``
names it as ``pid:fd``, so a copy of that variable in a child's environment is ignored there.
From then on the secrets live only in memory: credentials are resolved from ``environ()``, and
commands get them back only with ``keep_secret_env``. No secret ever goes into argv.

Only the standard library's lightest modules are imported here: this runs on every start.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Mapping

# Environment variables whose names contain one of these (any case) are secrets. HEADERS: headers a client
# sends carry its credentials (OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS hold the
# collector's ``Authorization``, ANTHROPIC_CUSTOM_HEADERS an API gateway's); COOKIE and AUTHORIZATION likewise.
SECRET_MARKERS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "HEADERS",
    "COOKIE",
    "AUTHORIZATION",
)
# ... and so are those with one of these as a whole part between underscores: MYSQL_PWD, SMTP_PASS,
# REDISCLI_AUTH, DOCKER_AUTH_CONFIG (not PWD itself, nor GIT_AUTHOR_NAME or XAUTHORITY).
_SECRET_PART = re.compile(r"(?:^|_)(?:PWD|PASS|AUTH)(?:_|$)")
_MARKER = re.compile("|".join(SECRET_MARKERS))  # one search instead of ten: every child's environment is checked
HANDOVER_VAR = "AGENTCLI_SECRETS_FD"
URL_SETTINGS = ("ANTHROPIC_BASE_URL",)  # a secret when the URL carries user:password@

_held: dict[str, str] = {}
_met: set[str] = set()  # secrets from elsewhere: api_key_helper's key, a bearer token
_USERINFO_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/@\s:]*):[^/@\s]*@")
SHORTEST_SECRET = 8  # characters; a shorter value is replaced only as a URL's password (at least 4)


def is_secret(name: str, value: str) -> bool:
    """Whether a variable is a secret: by its name, or a base URL with credentials in it."""
    if name.startswith("GIT_CONFIG_KEY_"):  # the name of a git setting (its value is GIT_CONFIG_VALUE_n)
        return False
    upper = name.upper()
    if _MARKER.search(upper) or (_SECRET_PART.search(upper) and upper != "PWD"):
        return True
    return name in URL_SETTINGS and "@" in value.partition("://")[2].partition("/")[0]


def held() -> dict[str, str]:
    """The secrets taken out of this process's environment."""
    return dict(_held)


def forget(*names: str) -> None:
    """Drop held secrets (``agentcli --demo`` talks to its own stand-in, never with the user's key)."""
    for name in names:
        _held.pop(name, None)


def remember(value: str | None) -> None:
    """Count ``value`` among the secrets ``redact`` hides (a key that came from no environment variable)."""
    if value and len(value) >= SHORTEST_SECRET:
        _met.add(value)


def redact(text: str) -> str:
    """``text`` with every secret this process holds replaced by ``***``: the held variables' values,
    the keys it met elsewhere, and the password of every URL (``http://user:PASS@host``).

    Every message that reaches a screen or a file from outside (a server's error text, a notice)
    passes through here: a proxy or server that echoes the key must not print or store it.
    """
    text = _USERINFO_PASSWORD.sub(r"\1:***@", text)
    for value in _secret_values():
        if value in text:
            text = text.replace(value, "***")
    return text


def _secret_values() -> list[str]:
    values = {value for value in (*_held.values(), *_met) if len(value) >= SHORTEST_SECRET}
    for name in URL_SETTINGS:
        for url in (_held.get(name), os.environ.get(name)):
            password = _url_password(url or "")
            if password:
                values.add(password)
    return sorted(values, key=len, reverse=True)  # a secret that holds another goes first


def _url_password(url: str) -> str:
    from urllib.parse import unquote, urlsplit

    try:
        password = urlsplit(url).password
    except ValueError:
        return ""
    return unquote(password) if password and len(password) >= 4 else ""


def environ() -> dict[str, str]:
    """The environment as the user gave it: ``os.environ`` plus the held secrets."""
    return {**os.environ, **_held}


def start_without_secrets() -> None:
    """Hold the secrets in memory and wipe them from the environment this process started with.

    Returns at once when there are none (and in a restarted process). Call it before anything
    is read from standard input or written to standard output: where the block cannot be wiped in
    place, the process restarts (the pid, the open files and the terminal stay the same, but the
    interpreter starts over).
    """
    handed = os.environ.pop(HANDOVER_VAR, None)
    if handed is not None:
        _held.update(_take_handover(handed))
    names = [name for name, value in os.environ.items() if is_secret(name, value)]
    if not names:
        return
    for name in names:
        _held[name] = os.environ.pop(name)
    if os.name != "posix" or wiped_in_place():
        return  # no /proc to read them from, or nothing left there; they are out of os.environ too
    if not sys.executable or not getattr(sys, "orig_argv", None):
        return
    import json

    try:
        fd = _pipe_holding(json.dumps(_held).encode())
    except OSError:
        return
    env = {**os.environ, HANDOVER_VAR: f"{os.getpid()}:{fd}"}
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    try:
        os.execve(sys.executable, sys.orig_argv, env)
    except OSError:
        os.close(fd)


PR_SET_DUMPABLE = 4  # prctl(2) option numbers (linux/prctl.h)
PR_GET_DUMPABLE = 3


def undumpable() -> bool:
    """Mark this process not dumpable (Linux): other processes of the same user can then no longer read
    its memory (``/proc/<pid>/mem``, where the API key is), nor its ``environ`` and ``cmdline`` (an inline
    ``--mcp-config`` may hold a bearer token), and it writes no core dump. Processes it starts are
    dumpable again once they exec. True when the flag is set; False elsewhere or when it failed.

    Call it after ``start_without_secrets``: a restart would clear the flag, and without it a process
    of an unprivileged user can no longer read its own ``/proc/self/environ`` to check the wipe.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import _ctypes  # a fraction of a millisecond; the ctypes package costs several

        prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")  # type: ignore[arg-type]  # None: the program itself, as CDLL(None)
        if _ctypes.call_function(prctl, (PR_SET_DUMPABLE, 0, 0, 0, 0)) != 0:
            return False
        return bool(_ctypes.call_function(prctl, (PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0)
    except (ImportError, AttributeError, OSError):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            return bool(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 and libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
        except (ImportError, AttributeError, OSError):
            return False


def wiped_in_place() -> bool:
    """Overwrite each secret in this process's original environment block with zero bytes (Linux).

    True once ``/proc/self/environ`` holds no secret; False where the block's address range cannot
    be read, the block there is not what the kernel shows, or a secret is still there afterwards
    (the caller then restarts the process instead).
    """
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()  # the command name may hold spaces and ')'
        env_start, env_end = int(fields[47]), int(fields[48])  # fields 50 and 51 of proc(5); 3 is fields[0]
        block = _read_environ_block()
    except (OSError, ValueError, IndexError):
        return False
    if not block or env_end - env_start != len(block):
        return False
    wipes, offset = [], 0
    for entry in block.split(b"\0"):
        name, _, value = entry.partition(b"=")
        if is_secret(name.decode(errors="replace"), value.decode(errors="replace")):
            wipes.append((offset, len(entry)))
        offset += len(entry) + 1
    if not wipes:
        return True
    try:
        _zero(env_start, wipes)
        block = _read_environ_block()
    except (OSError, ValueError, ImportError):
        return False
    return not any(
        is_secret(name.decode(errors="replace"), value.decode(errors="replace"))
        for name, _, value in (entry.partition(b"=") for entry in block.split(b"\0"))
    )


def _zero(start: int, spans: list[tuple[int, int]]) -> None:
    """Zero each (offset, length) span from address ``start`` of this process's memory: through
    ``/proc/self/mem`` (no import), or with ctypes where that file cannot be written (the ctypes
    package costs about 2 ms to import, on every start)."""
    try:
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            for at, length in spans:
                mem.seek(start + at)
                if mem.write(bytes(length)) != length:
                    raise OSError("short write")
        return
    except OSError:
        pass
    import ctypes

    for at, length in spans:
        ctypes.memset(start + at, 0, length)


def _read_environ_block() -> bytes:
    with open("/proc/self/environ", "rb") as f:
        return f.read()


def _pipe_holding(data: bytes) -> int:
    """The read end of a pipe that holds ``data`` and whose write end is closed."""
    read_fd, write_fd = os.pipe()
    try:
        if len(data) >= 65_536:
            import fcntl

            fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, len(data) + 1)
        os.set_blocking(write_fd, False)  # never hang: all of it fits, or we give up
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    os.set_inheritable(read_fd, True)
    return read_fd


def _take_handover(value: str) -> dict[str, str]:
    """The secrets an earlier image of this process left in the pipe ``value`` names; {} if none."""
    pid, _, number = value.partition(":")
    if pid != str(os.getpid()) or not number.isdigit() or int(number) < 3:
        return {}  # not handed to this process: inherited from an agentcli further up
    fd = int(number)
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return {}
    except OSError:
        return {}
    import json

    chunks: list[bytes] = []
    try:
        os.set_blocking(fd, False)  # the writer closed its end, so this reads to the end or fails
        while chunk := os.read(fd, 65_536):
            chunks.append(chunk)
        secrets = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return {}
    finally:
        os.close(fd)
    if not isinstance(secrets, dict):
        return {}
    return {k: v for k, v in secrets.items() if isinstance(k, str) and isinstance(v, str)}


def without_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` minus its secrets."""
    return {name: value for name, value in env.items() if not is_secret(name, value)}


def command_env(keep_secrets: bool = False, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for every process agentcli starts: ``base`` (default os.environ) without secrets.

    A variable is a secret when its name contains one of ``SECRET_MARKERS`` (KEY, TOKEN, SECRET,
    PASSWORD, HEADERS…) or a part PWD, PASS or AUTH, ignoring case, or it is ANTHROPIC_BASE_URL
    with a user:password@ in it. With ``keep_secrets`` they stay, and without ``base`` the secrets held
    in memory come back too.
    """
    if base is None:
        env = environ() if keep_secrets else dict(os.environ)
    else:
        env = dict(base)
    if not keep_secrets:
        env = without_secrets(env)
    env.pop(HANDOVER_VAR, None)
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password nobody can type
    return env
