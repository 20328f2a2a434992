"""What the OS sandbox costs per bash call: ``python -m bench.sandbox_cost [CALLS]``.

Times ``bash -c true`` three ways, each CALLS times (default 100), and prints the median and the
quartiles in milliseconds: started bare with ``subprocess``, through the bash tool without the
sandbox, and through the bash tool inside bwrap (core/system/sandbox.py). The difference between the last
two is the sandbox's cost. Not part of ``python -m bench``'s table yet.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentcli.core.system.sandbox import Sandbox
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.shell import Bash
from agentcli.core.system.workspace import Workspace


class _AllowAll:
    async def authorize(self, tool: object, args: object, ctx: object) -> None:
        return None


def _summary(label: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    q1, median, q3 = statistics.quantiles(ms, n=4)
    return f"{label:<28} median {median:6.1f} ms   quartiles {q1:6.1f} – {q3:6.1f} ms"


async def _tool(root: Path, sandbox: Sandbox | None, calls: int) -> list[float]:
    ctx = ToolContext(workspace=Workspace.at(root), emit=lambda e: None, permissions=_AllowAll(), sandbox=sandbox)
    await Bash().run({"command": "true"}, ctx)  # the first call tries bwrap once: not counted
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await Bash().run({"command": "true"}, ctx)
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
        finally:
            sandbox.close()


if __name__ == "__main__":
    main()
