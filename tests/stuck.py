"""What a child process that should have ended was doing, for the failure message of the test that waited for it.

A child that such a test starts runs with Python's fault handler on (``FAULT_HANDLER``), and when it has not ended,
``described`` reads what the kernel says of it (its signals: pending, blocked, ignored, caught; each thread's state
and what it waits in) and then sends SIGABRT, on which the fault handler prints every thread's Python stack on the
child's stderr, for the test to show. It found its first cause on 6 December: two tests that send agentcli SIGINT
waited in vain in runs started in the background of a script, and the kernel's view showed SIGINT ignored, as such
a run passes it on to every child (tests/e2e/terminal.py's ``as_a_foreground_command``).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

FAULT_HANDLER = {"PYTHONFAULTHANDLER": "1"}  # the child's environment: SIGABRT prints each thread's stack
SIGNALS = ("State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")


def described(pid: int) -> str:
    """The kernel's view of ``pid`` and its threads; then SIGABRT, so that its stderr gets its Python stacks."""
    lines = [f"process {pid}, as the kernel sees it:"]
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.split(":")[0] in SIGNALS:
                lines.append(f"  {line}")
        for task in sorted(Path(f"/proc/{pid}/task").iterdir()):
            status = dict(line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line)
            wchan = (task / "wchan").read_text()
            lines.append(
                f"  thread {task.name} {status.get('Name', '?')}: {status.get('State', '?')}, waits in {wchan or '-'}, "
                f"blocks {status.get('SigBlk', '?')}"
            )
    except OSError as exc:
        lines.append(f"  (gone, or not readable: {exc})")
    try:
        os.kill(pid, signal.SIGABRT)
    except OSError:
        pass
    return "\n".join(lines)
