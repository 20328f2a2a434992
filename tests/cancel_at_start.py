"""Cancelling a task inside asyncio's create_subprocess_exec, after the shell already runs: the race a loaded
machine hits now and then, performed on purpose."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until


def cancel_as_popen_returns(monkeypatch: pytest.MonkeyPatch, job_file: Path) -> Callable[[asyncio.Task[Any]], None]:
    """Patch ``subprocess.Popen`` so that, for the command writing ``job_file`` (``> name``), it returns only once
    that file is written (the shell started its background job) and, just before, cancels the task given to the
    returned function; asyncio's own clean-up of a start it was cancelled in then runs."""
    real_popen = subprocess.Popen
    task: list[asyncio.Task[Any]] = []

    def popen_then_cancel(args: Any, *rest: Any, **kwargs: Any) -> Any:
        proc = real_popen(args, *rest, **kwargs)
        if f"> {job_file.name}" in str(args):
            wait_until(lambda: job_file.exists() and job_file.read_text().strip(), "the background job to start")
            task[0].cancel()
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen_then_cancel)
    return task.append
