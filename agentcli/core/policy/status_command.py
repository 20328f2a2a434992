"""The status line's command (Claude Code's ``statusLine`` setting), and one run of it.

Like a hook it runs with ``/bin/sh -c`` in the workspace root, in a process group of its own, with bash's
scrubbed environment (plus ``CLAUDE_PROJECT_DIR``), and gets JSON on stdin; a run that outlives its
``timeout`` is killed with its process group. One from a workspace's own files reaches this module only
when the workspace is trusted (config.py keeps it out otherwise, and marks it with ``WORKSPACE_MARK``),
and then runs in the OS sandbox, as the workspace's hooks do. When it runs, what it gets and how its line
is shown is the front ends' (ui/status_line.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .hooks import WORKSPACE_MARK, launch

if TYPE_CHECKING:
    from ..system.sandbox import Sandbox

DEFAULT_TIMEOUT = 5.0  # seconds
OUTPUT_CAP = 64_000  # bytes of its stdout that are read


@dataclass(frozen=True)
class StatusCommand:
    command: str
    root: Path  # where it runs
    padding: int = 0  # columns of space before its line
    timeout: float = DEFAULT_TIMEOUT
    workspace: bool = False  # from the workspace's own files: runs in the OS sandbox
    sandbox: Sandbox | None = field(default=None, compare=False)
    keep_secret_env: bool = False

    @classmethod
    def from_setting(
        cls, value: Any, root: Path, *, sandbox: Sandbox | None = None, keep_secret_env: bool = False
    ) -> StatusCommand | None:
        """The ``status_line`` setting (as config.py checked it) as a command; None when it names none."""
        if not isinstance(value, dict) or not str(value.get("command") or "").strip():
            return None
        return cls(
            str(value["command"]),
            root,
            int(value.get("padding", 0)),
            float(value.get("timeout", DEFAULT_TIMEOUT)),
            value.get(WORKSPACE_MARK) is True,
            sandbox,
            keep_secret_env,
        )

    def run(self, payload: bytes, started: Callable[[subprocess.Popen[bytes] | None], None]) -> tuple[str | None, str]:
        """One run, blocking (call it in a thread): the first line it printed ("" when it failed or printed
        nothing; None when it timed out, so the line stays as it was) and, when something went wrong that the
        user should hear of, one sentence. ``started`` gets the process while it runs (None once it ended),
        so that a closing front end can kill it."""
        from ..system import processes
        from ..system.sandbox import SandboxError

        try:
            argv, preexec, env, passed = launch(
                self.command,
                self.root,
                sandbox=self.sandbox if self.workspace else None,
                keep_secret_env=self.keep_secret_env,
            )
        except SandboxError as exc:
            return "", f"The status line command {self.command} was not run: {exc}"
        try:
            proc = subprocess.Popen(
                argv,
                cwd=self.root,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=preexec,
                pass_fds=passed,
            )
        except OSError as exc:
            return "", f"Could not start the status line command {self.command}: {exc.strerror or exc}."
        finally:
            processes.close_all(passed)
        processes.direct.add(proc.pid)  # waited for here: not an orphan to reap
        started(proc)
        try:
            stdout, _ = proc.communicate(payload, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return None, (
                f"The status line command {self.command} did not finish within {self.timeout:g} s "
                "and was stopped; the line shows its last output."
            )
        finally:
            if proc.returncode is None:
                processes.kill_group(proc.pid)
                proc.wait()
            processes.direct.discard(proc.pid)
            started(None)
        if proc.returncode != 0:
            return "", ""
        text = stdout[:OUTPUT_CAP].decode("utf-8", errors="replace").lstrip("\n")
        return text.split("\n", 1)[0].rstrip("\r"), ""
