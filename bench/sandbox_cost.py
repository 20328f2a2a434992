"""What the OS sandbox costs per bash call: ``python -m bench.sandbox_cost [CALLS]``.

Times ``bash -c true`` three ways, each CALLS times (default 100), and prints the median and the
quartiles in milliseconds: started bare with ``subprocess``, through the bash tool without the
sandbox, and through the bash tool inside bwrap (core/system/sandbox.py). The difference between the last
two is the sandbox's cost. Then ``true`` in bwrap started with ``subprocess`` both ways the seccomp filter
reaches a command (core/system/seccomp.py): installed by bwrap from a descriptor passed down (bash, hooks),
and by the loader inside (an MCP server's start); the difference is the loader's interpreter start.
Not part of ``python -m bench``'s table yet.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentcli.core.system import processes
from agentcli.core.system.sandbox import Sandbox
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.shell import Bash

from .common import TOOLS


class _AllowAll:
    async def authorize(self, tool: object, args: object, ctx: object) -> None:
        return None


def _summary(label: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    q1, median, q3 = statistics.quantiles(ms, n=4)
    return f"{label:<28} median {median:6.1f} ms   quartiles {q1:6.1f} – {q3:6.1f} ms"


async def _tool(root: Path, sandbox: Sandbox | None, calls: int) -> list[float]:
    ctx = ToolContext(
        workspace=Workspace.at(root), emit=lambda e: None, permissions=_AllowAll(), sandbox=sandbox, settings=TOOLS
    )
    await Bash().run({"command": "true"}, ctx)  # the first call tries bwrap once: not counted
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await Bash().run({"command": "true"}, ctx)
        times.append(time.perf_counter() - start)
    return times


def _started(root: Path, sandbox: Sandbox, calls: int, *, by_bwrap: bool) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fds: list[int] | None = [] if by_bwrap else None
        argv = sandbox.wrap(["true"], cwd=root, writable=[root], pass_fds=fds)
        try:
            subprocess.run(argv, check=True, pass_fds=fds or ())
        finally:
            processes.close_all(fds or ())
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    sandbox = Sandbox("on")
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        bare = []
        for _ in range(calls):
            start = time.perf_counter()
            subprocess.run(["bash", "-c", "true"], check=True)
            bare.append(time.perf_counter() - start)
        print(_summary("bash -c true (subprocess)", bare))
        print(_summary("bash tool, no sandbox", asyncio.run(_tool(root, None, calls))))
        try:
            print(_summary("bash tool, in bwrap", asyncio.run(_tool(root, sandbox, calls))))
            print(_summary("true in bwrap, --seccomp fd", _started(root, sandbox, calls, by_bwrap=True)))
            print(_summary("true in bwrap, the loader", _started(root, sandbox, calls, by_bwrap=False)))
        finally:
            sandbox.close()


if __name__ == "__main__":
    main()
