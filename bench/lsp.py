"""The lsp tool's references against `grep -w` of the name, on this repository itself (agentcli/ and tests/):
how many lines each answer holds, how many bytes of tool result, and the first (cold) and later (warm) answers'
times beside rg's. pylsp (jedi) serves; its answer is not checked by hand here, so the rows count grep's lines
the server did not list (comments, strings, other things of the same name, or places jedi missed) rather than
claim a precision."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

from agentcli.core.lsp.server import LanguageServers
from agentcli.core.lsp.specs import ServerSpec
from agentcli.core.lsp.tool import LspTool
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.secret_env import command_env
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.rg import rg_path

from .common import REPO_ROOT, TOOLS
from .stats import Section

# (file, name): functions and methods, some with names other things share (grep's noise), some unique
SYMBOLS = (("agentcli/core/engine/subagent_record.py", "report_of"), ("agentcli/core/tools/caps.py", "cap_output"),
           ("agentcli/core/system/secret_env.py", "command_env"), ("agentcli/core/content.py", "quoted"),
           ("agentcli/core/system/git.py", "is_git_repo"), ("agentcli/core/tools/on_demand.py", "brief"),
           ("agentcli/core/system/workspace.py", "relative"), ("agentcli/core/tools/base.py", "check_input"))


def _definition_line(path: Path, name: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith(f"def {name}("):
            return number
    raise LookupError(f"no def {name} in {path}")


def _grep(name: str) -> tuple[list[str], float]:
    started = time.perf_counter()
    done = subprocess.run([rg_path() or "rg", "-n", "-w", "--no-heading", "--sort", "path", "--max-columns", "500",
                           "--max-columns-preview", name, "agentcli", "tests"],  # as the grep tool shows lines
                          cwd=REPO_ROOT, capture_output=True, text=True)
    return done.stdout.splitlines(), time.perf_counter() - started


async def _measure(section: Section) -> None:
    pylsp = Path(sys.executable).parent / "pylsp"
    servers = LanguageServers([ServerSpec("pylsp", (str(pylsp),), ("python",), ("*.py",))], REPO_ROOT, command_env(),
                              None, timeout=120)
    tool = LspTool(servers)
    ctx = ToolContext(workspace=Workspace.at(REPO_ROOT), emit=lambda e: None, permissions=Permissions.from_settings("default", {}, False),
                      settings=TOOLS)
    totals = {"lsp": 0, "grep": 0, "lsp_bytes": 0, "grep_bytes": 0, "missing": 0}
    times: list[float] = []
    try:
        for path, name in SYMBOLS:
            line = _definition_line(REPO_ROOT / path, name)
            started = time.perf_counter()
            answer = await tool.run({"operation": "references", "path": path, "line": line, "symbol": name}, ctx)
            times.append(time.perf_counter() - started)
            places = answer.splitlines()[1:]
            grepped, grep_seconds = _grep(name)
            listed = {p.split(": ", 1)[0] for p in places}
            not_listed = [g for g in grepped if g.split(":", 2)[0] + ":" + g.split(":", 2)[1] not in listed]
            totals["lsp"] += len(places)
            totals["grep"] += len(grepped)
            totals["lsp_bytes"] += len(answer.encode())
            grep_bytes = len("\n".join(grepped).encode())
            totals["grep_bytes"] += grep_bytes
            totals["missing"] += len(not_listed)
            section.row(f"references of `{name}`", f"{len(places)} lines, {len(answer.encode()):,} B",
                        f"grep -w: {len(grepped)} lines, {grep_bytes:,} B", "",
                        note=f"{len(not_listed)} of grep's lines not listed by the server; lsp "
                             f"{times[-1] * 1000:.0f} ms, rg {grep_seconds * 1000:.0f} ms")
    finally:
        await servers.stop()
    section.row(f"references of {len(SYMBOLS)} symbols, total", f"{totals['lsp']} lines, {totals['lsp_bytes']:,} B",
                f"grep -w: {totals['grep']} lines, {totals['grep_bytes']:,} B",
                f"{totals['grep_bytes'] / max(totals['lsp_bytes'], 1):.1f}× fewer bytes",
                note=f"first answer (cold start of pylsp) {times[0]:.1f} s, later ones {min(times[1:]) * 1000:.0f} to "
                     f"{max(times[1:]) * 1000:.0f} ms")


def run(work: Path) -> Section:
    section = Section("Language server references")
    asyncio.run(_measure(section))
    section.notes.append("pylsp (python-lsp-server with jedi) on agentcli's own source (agentcli/ and tests/), outside "
                         "the sandbox; grep is `rg -n -w NAME agentcli tests`. The server's list was not checked "
                         "by hand: 'not listed' counts grep's lines that are comments, strings, other things of "
                         "the same name, or places jedi missed.")
    return section
