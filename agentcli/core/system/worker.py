"""Work on hostile input that may take too long, in a Python process of its own: killed when its time is
up or its call is cancelled. A thread cannot be stopped, and a converter or a regular expression that runs
for minutes would keep a core busy after its call had ended; a process can be stopped.

The child is this module run with ``python -P`` (the workspace, its cwd in the parent, is not on its
path, so a repository's ``json.py`` is never imported) in ``/``, in a session of its own, with an empty
environment but for where agentcli is installed. It imports one function of agentcli's, named by the
parent's code (never by input), reads its argument as JSON on stdin, and writes the result as JSON on
stdout. A result of ``{"error": "…"}`` says what the function raised.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import processes

_HOME = str(Path(__file__).resolve().parents[3])  # the folder holding the agentcli package, the child's path


class WorkerError(Exception):
    """The work did not finish: the message says why, in words for the sentence the caller writes."""


class WorkerTimeout(WorkerError):
    """The work took longer than it was given, and was stopped."""


async def run_in_worker(function: str, argument: Any, seconds: float) -> Any:
    """``function`` (``"agentcli.module:name"``) applied to ``argument`` in a child process, which is
    killed after ``seconds`` (WorkerTimeout) or when the caller is cancelled; WorkerError when it failed."""
    data = json.dumps(argument).encode()
    proc = await processes.start_in_session(
        sys.executable,
        "-P",
        "-m",
        __name__,
        function,
        cwd="/",
        env={"PYTHONPATH": _HOME},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=processes.die_with_parent(),
    )
    processes.direct.add(proc.pid)  # waited for here: not an orphan to reap
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), seconds)
    except TimeoutError:
        raise WorkerTimeout(f"it did not finish within {seconds:g} seconds and was stopped") from None
    finally:  # timed out, cancelled or done: nothing of it runs on
        if proc.returncode is None:
            processes.kill_group(proc.pid)
            await proc.wait()
        processes.direct.discard(proc.pid)
    try:
        reply = json.loads(out)
    except ValueError:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        raise WorkerError(f"it failed ({last[0][:200]})") from None
    if "error" in reply:
        raise WorkerError(str(reply["error"]))
    return reply.get("result")


def main() -> None:
    module, _, name = sys.argv[1].partition(":")
    if not module.startswith("agentcli."):
        sys.exit(f"{sys.argv[1]} is not agentcli's")
    function = getattr(importlib.import_module(module), name)
    argument = json.loads(sys.stdin.buffer.read())
    try:
        reply = {"result": function(argument)}
    except Exception as exc:  # noqa: BLE001 - the parent says what failed, in one sentence
        reply = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    sys.stdout.write(json.dumps(reply))
    sys.stdout.flush()
    os._exit(0)  # no clean-up of a big parsed page: the parent waits for the exit


if __name__ == "__main__":
    main()
