"""What a child process that should have ended was doing, for the failure message of the test that waited for it.

Two tests once waited in vain, in the same minute of one loaded run, for an agentcli that had been sent SIGINT
(tests/e2e/test_plugin_question.py, tests/e2e/test_plugin_stop.py); neither failed again in hundreds of runs. What
they said then was only that it had not ended. So a child that such a test starts runs with Python's fault handler
on (``FAULT_HANDLER``), and when it has not ended, ``described`` reads what the kernel says of it (its signals:
pending, blocked, ignored, caught; each thread's state and what it waits in) and then sends SIGABRT, on which the
fault handler prints every thread's Python stack on the child's stderr, for the test to show.
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
