"""Safe file I/O: writing a file in place of another through a temporary file and a rename."""

from __future__ import annotations

import contextlib
import os
import re
import secrets

# The name replace_in gives its temporary file: a scan of the tree that runs while another agent writes (a
# checkpoint taken around a bash call) leaves these out, since they are gone again a moment later.
TEMPORARY = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")


def is_temporary(name: str) -> bool:
    """Whether a file name is one of replace_in's temporary files. (A tree scan asks this of every file: the
    suffix test first keeps that cheap.)"""
    return name.endswith(".tmp") and TEMPORARY.fullmatch(os.path.basename(name)) is not None


def replace_in(dir_fd: int, name: str, data: bytes, mode: int | None) -> None:
    """Write ``data`` to ``name`` in ``dir_fd`` through a temporary file and a rename.

    The temporary file is created in that same directory (exclusively, never through a link);
    ``mode`` None gives a new file the usual 0o666 minus umask.
    """
    tmp = f".{name[:200]}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
