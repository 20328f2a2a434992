"""How a test counts the retries of a run, one rule for the events a session emits (``Recorder.warnings`` and
``Recorder.numbered_in_order``, tests/conftest.py) and for the notes `agentcli -p` prints on stderr (``stderr_notes``).

- A retry of a loopback connection that broke before the stand-in server took it ("could not connect") is not
  counted (``counted``): under load one test in about two thousand still meets one, and no test that counts retries
  is about connecting.
- It still takes an attempt's number ("(4/8)"), so the tests check the numbers (``numbered_in_order``): every try
  that failed took the next number of one budget, a hidden one too.
- A test that spends the whole budget counts the requests the server received plus the tries that never reached it
  (``Recorder.unreached_tries``): a reset on the first connection leaves one request fewer (a busy run caught
  test_a_stream_broken_on_every_try_fails_with_one_sentence with two of three).

Its cause is not yet found. What was measured (issue 43, on 2 cores at load 20-29, seven caught): the connection is a
new one (in both caught with the pool's state logged: never a kept-alive one); the request's write fails
(BrokenPipeError under anyio's BrokenResourceError, httpx2's ReadError), the peer having reset it; the stand-in server
never accepted it, while it accepted the retry a few milliseconds later on the same listener; nothing in the process
closed a descriptor meanwhile (os.close logged); and the kernel's listen queue never overflowed (ListenOverflows 0 in
/proc/net/netstat). So the kernel reset a connection it had completed before the server's accept() took it, a TCP
matter on loopback rather than the stand-in server's or agentcli's code.

A double close (a descriptor number closed by code that no longer owned it, after a socket got the number) was
ruled out again, closes from C too: a scratch detector registered every socket and every file object opened with its
descriptor's inode, reported an os.close or os.dup2 onto a descriptor a live object held and a second live owner of
one number, and checked every 5 ms that each live socket and file still had its own inode (it caught a stray
libc close() in a worker within the check). Two whole `make test` runs beside two busy loops (13 and 20 minutes) met
not one, and the os.close, dup2 and pass_fds sites in agentcli/ and tests/ have no path that closes twice. The
web_fetch attacks once failed twice in a row on one worker with "Server disconnected without sending a response", a
clean end of the stream on a new connection to tests/loopback.py's site: its handler then either read the end first
or never took the connection, which ``Site.lines`` (tests/core/test_web_fetch.py) now tells in the failure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

HIDDEN = "could not connect"
NUMBER = re.compile(r"\((\d+)/(\d+)\)")


def counted(note: str) -> bool:
    """Whether a test counts this retry note (not a loopback connection reset before it was accepted)."""
    return HIDDEN not in note


def numbered_in_order(numbers: Sequence[tuple[int, int]], retries: int) -> bool:
    """Whether the (attempt, budget) numbers of every retry note, hidden ones too, are 1, 2, 3… of ``retries``."""
    return list(numbers) == [(n, retries) for n in range(1, len(numbers) + 1)]


def stderr_notes(stderr: str) -> list[str]:
    """The retry notes `agentcli -p` printed on ``stderr``, hidden ones too."""
    return [line for line in stderr.splitlines() if "Retrying in" in line]


def stderr_numbered_in_order(stderr: str, retries: int) -> bool:
    """``numbered_in_order`` for the notes on ``stderr`` (each note's last "(n/m)")."""
    return numbered_in_order(
        [(int(a), int(b)) for line in stderr_notes(stderr) for a, b in NUMBER.findall(line)[-1:]], retries
    )
