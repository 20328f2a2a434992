"""A real terminal to time full-screen apps in: tmux on a private socket, polled with capture-pane.

Everything runs on one tmux server of our own (``-L``), which ``close()`` kills, so no session or
process outlives the benchmark.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

WIDTH, HEIGHT = 120, 40


class Tmux:
    def __init__(self) -> None:
        self.socket = f"agentcli-bench-{os.getpid()}"
        self.count = 0
        self.pids: list[int] = []
        # One idle session keeps the server up between runs (it exits with its last session otherwise).
        self.tmux("new-session", "-d", "-s", "keep", "-x", str(WIDTH), "-y", str(HEIGHT), "exec cat")
        keeper = self.pid("keep")
        if keeper:
            self.pids.append(keeper)
        self.socket_path = self.tmux("display-message", "-p", "-t", "keep", "#{socket_path}").strip()

    def tmux(self, *args: str) -> str:
        proc = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10)
        return proc.stdout

    def launch(self, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, float]:
        """Start ``argv`` in a fresh 120×40 window; returns (session name, monotonic start time)."""
        self.count += 1
        name = f"b{self.count}"
        command = "exec " + " ".join(shlex.quote(a) for a in argv)
        env_args = [arg for k, v in env.items() for arg in ("-e", f"{k}={v}")]
        started = time.monotonic()
        self.tmux(
            "new-session", "-d", "-s", name, "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(cwd), *env_args, command
        )
        pid = self.tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip()
        if pid.isdigit():
            self.pids.append(int(pid))
        return name, started

    def screen(self, name: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", name)

    def wait_for(self, name: str, marker: str | re.Pattern[str], timeout: float = 30.0) -> float:
        """Poll the pane until ``marker`` shows (a substring, or a pattern searched in the whole screen);
        returns the monotonic time it was first seen."""

        def found(screen: str) -> bool:
            return bool(marker.search(screen)) if isinstance(marker, re.Pattern) else marker in screen

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if found(self.screen(name)):
                return time.monotonic()
            time.sleep(0.005)
        shown = marker.pattern if isinstance(marker, re.Pattern) else marker
        raise TimeoutError(f"{shown!r} did not appear within {timeout:.0f} s; the screen was:\n{self.screen(name)}")

    def pid(self, name: str) -> int | None:
        pid = self.tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip()
        return int(pid) if pid.isdigit() else None

    def kill(self, name: str) -> None:
        self.tmux("kill-session", "-t", name)

    def close(self) -> None:
        """Kill our tmux server, then any app process that ignored the hangup."""
        self.tmux("kill-server")
        if self.socket_path:
            Path(self.socket_path).unlink(missing_ok=True)
        deadline = time.monotonic() + 3
        for pid in self.pids:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            if _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
