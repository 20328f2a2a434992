"""The lsp tool's references against `grep -w` of the name, on a real Python repository of 1,000+ files and a
TypeScript one, for chosen symbols whose true references were checked by hand once. Python: the anthropic SDK's
source as this environment installed it (3,201 files; unpacked from site-packages into the bench's folder, nothing
fetched), 20 symbols (``lsp_references_anthropic.json``), pylsp. TypeScript: zod 4.6.7's src/ without its tests (134
files) as npm installed it for tests/mcp_everything, with a tsconfig.json (zod's repository has one; its package
leaves it out), 17 of util.ts's exports (``lsp_references_zod.json``), typescript-language-server as
tests/lsp_typescript installs it; and the same without the tsconfig.json. Per symbol and in all: the precision and
recall of the server's answer and of grep's lines, the bytes of tool result each takes, and the first (cold) and
later (warm) answers' times beside rg's for the same name."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import anthropic

from agentcli.core.lsp.server import LanguageServers
from agentcli.core.lsp.specs import KNOWN, ServerSpec
from agentcli.core.lsp.tool import LspTool
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.secret_env import command_env
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.rg import rg_path

from .common import TOOLS
from .stats import Section

TRUTH = Path(__file__).with_name("lsp_references_anthropic.json")
TRUTH_TS = Path(__file__).with_name("lsp_references_zod.json")
ROOT = Path(__file__).parent.parent
ZOD = ROOT / "tests" / "mcp_everything" / "node_modules" / "zod"  # make test's npm install of server-everything
TS_SERVER = ROOT / "tests" / "lsp_typescript" / "node_modules" / ".bin" / "typescript-language-server"
# zod's own repository compiles src/ with a tsconfig.json like this; the npm package leaves it out
TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "noEmit": True,
        "target": "es2022",
        "module": "esnext",
        "moduleResolution": "bundler",
    },
    "include": ["src"],
}


def python_repository(work: Path) -> Path:
    """The installed anthropic package as a repository of its own (its .py files, no bytecode)."""
    root = work / "anthropic-sdk"
    if not root.exists():
        shutil.copytree(
            Path(anthropic.__file__).parent, root / "anthropic", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    return root


def typescript_repository(work: Path, tsconfig: bool = True) -> Path:
    """zod's src/ as npm installed it, without its tests folders; with a tsconfig.json, or without one."""
    root = work / ("zod" if tsconfig else "zod-without-tsconfig")
    if not root.exists():
        shutil.copytree(ZOD / "src", root / "src", ignore=shutil.ignore_patterns("tests"))
        if tsconfig:
            (root / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    return root


def definition_line(path: Path, name: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if re.match(rf"\s*(export\s+)?(async\s+)?(def|class|function)\s+{name}\b", line):
            return number
    raise LookupError(f"no def, class or function {name} in {path}")


def grep(root: Path, name: str) -> tuple[list[str], float]:
    """`rg -n -w NAME` as the grep tool shows its lines, and how long it took."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            rg_path() or "rg",
            "-n",
            "-w",
            "--no-heading",
            "--sort",
            "path",
            "--max-columns",
            "500",
            "--max-columns-preview",
            name,
            ".",
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    return [line.removeprefix("./") for line in done.stdout.splitlines()], time.perf_counter() - started


def place(line: str) -> str:
    """``path:line`` of an answer's or grep's line."""
    path, number, _ = (line + ":").split(":", 2)
    return f"{path}:{number}"


def score(found: set[str], true: set[str]) -> tuple[int, int, int]:
    """(right, found, true) for precision right/found and recall right/true."""
    return len(found & true), len(found), len(true)


def ratio(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


async def references(
    root: Path, server: ServerSpec, symbols: list[dict[str, object]]
) -> list[tuple[set[str], int, float]]:
    """For each symbol: the places the lsp tool lists, its result's bytes and its time."""
    servers = LanguageServers([server], root, command_env(), None, timeout=600)
    tool = LspTool(servers)
    ctx = ToolContext(
        workspace=Workspace.at(root),
        emit=lambda e: None,
        permissions=Permissions.from_settings("default", {}, False),
        settings=TOOLS,
    )
    answers = []
    try:
        for symbol in symbols:
            path, name = str(symbol["path"]), str(symbol["name"])
            started = time.perf_counter()
            answer = await tool.run(
                {"operation": "references", "path": path, "symbol": name, "line": definition_line(root / path, name)},
                ctx,
            )
            answers.append(
                (
                    {place(line) for line in answer.splitlines()[1:] if not line.startswith("[")},
                    len(answer.encode()),
                    time.perf_counter() - started,
                )
            )
    finally:
        await servers.stop()
    return answers


def run(work: Path) -> Section:
    section = Section("Language server references")
    python(section, work)
    typescript(section, work)
    return section


def python(section: Section, work: Path) -> None:
    truth = json.loads(TRUTH.read_text())
    installed = importlib.metadata.version("anthropic")
    root = python_repository(work)
    files = sum(1 for _ in root.rglob("*.py"))
    if installed != truth["version"]:
        section.row(
            "(not comparable)",
            "not measured",
            note=f"anthropic {installed} is installed; the references were checked on {truth['version']}",
        )
        return
    pylsp = ServerSpec("pylsp", (str(Path(sys.executable).parent / "pylsp"),), ("python",), ("*.py",))
    compare(section, root, pylsp, truth["symbols"], "", "cold: pylsp starts and jedi reads the repository")
    section.notes.append(
        f"pylsp (python-lsp-server with jedi) on the anthropic SDK {installed} as installed here "
        f"({files:,} .py files, copied out of site-packages), outside the sandbox; grep is "
        "`rg -n -w NAME`. A place is a path and a line, counted once however many times the name "
        "is on it; the true places are bench/lsp_references_anthropic.json, checked by hand once."
    )


def typescript(section: Section, work: Path) -> None:
    truth = json.loads(TRUTH_TS.read_text())
    if not (ZOD / "package.json").exists() or not TS_SERVER.exists():
        section.row(
            "TypeScript: (not measured)",
            "not measured",
            note="needs `make mcp-everything lsp-typescript` (zod from npm and typescript-language-server)",
        )
        return
    installed = json.loads((ZOD / "package.json").read_text())["version"]
    if installed != truth["version"]:
        section.row(
            "TypeScript: (not comparable)",
            "not measured",
            note=f"zod {installed} is installed; the references were checked on {truth['version']}",
        )
        return
    known = next(spec for spec in KNOWN if spec.name == "typescript-language-server")
    server = replace(known, command=(str(TS_SERVER), "--stdio"))
    root = typescript_repository(work)
    files = sum(1 for _ in root.rglob("*.ts"))
    compare(
        section,
        root,
        server,
        truth["symbols"],
        "TypeScript: ",
        "cold: typescript-language-server starts and tsserver loads the project",
    )
    listed = [
        found
        for found, _, _ in asyncio.run(
            references(typescript_repository(work, tsconfig=False), server, truth["symbols"])
        )
    ]
    true = [set(symbol["references"]) for symbol in truth["symbols"]]
    right, count = sum(len(f & t) for f, t in zip(listed, true, strict=True)), sum(len(f) for f in listed)
    section.row(
        f"TypeScript: the same {len(true)} symbols without the tsconfig.json",
        f"precision {ratio(right, count)}, recall {ratio(right, sum(map(len, true)))}",
        note=f"{count} places listed: tsserver's project of util.ts is the open file and what it imports",
    )
    section.notes.append(
        f"typescript-language-server (tests/lsp_typescript's) on zod {installed}'s src/ as npm "
        f"installed it ({files} .ts files without its tests folders, and a tsconfig.json including "
        "src), outside the sandbox; the true places are bench/lsp_references_zod.json."
    )


def compare(
    section: Section, root: Path, server: ServerSpec, symbols: list[dict[str, object]], label: str, cold: str
) -> None:
    """The rows of one repository: each symbol's, the totals, the cold and the warm answers' times."""
    answers = asyncio.run(references(root, server, symbols))
    totals = {"lsp": [0, 0, 0], "grep": [0, 0, 0], "lsp_bytes": 0, "grep_bytes": 0}
    rg_times: list[float] = []
    for symbol, (listed, size, _) in zip(symbols, answers, strict=True):
        true = set(symbol["references"])
        grepped, seconds = grep(root, str(symbol["name"]))
        rg_times.append(seconds)
        grep_bytes = len("\n".join(grepped).encode())
        ours, theirs = score(listed, true), score({place(line) for line in grepped}, true)
        for key, got in (("lsp", ours), ("grep", theirs)):
            totals[key] = [a + b for a, b in zip(totals[key], got, strict=True)]
        totals["lsp_bytes"] += size
        totals["grep_bytes"] += grep_bytes
        section.row(
            f"{label}references of `{symbol['name']}` ({len(true)} true)",
            f"precision {ratio(ours[0], ours[1])}, recall {ratio(ours[0], ours[2])}; {size:,} B",
            f"grep -w: precision {ratio(theirs[0], theirs[1])}, recall {ratio(theirs[0], theirs[2])}; {grep_bytes:,} B",
            "",
            note=f"{ours[1]} places listed, grep {theirs[1]} lines",
        )
    ours, theirs = totals["lsp"], totals["grep"]
    times = [seconds for _, _, seconds in answers]
    section.row(
        f"{label}references of {len(symbols)} symbols, {ours[2]} true in all",
        f"precision {ratio(ours[0], ours[1])}, recall {ratio(ours[0], ours[2])}; {totals['lsp_bytes']:,} B",
        f"grep -w: precision {ratio(theirs[0], theirs[1])}, recall {ratio(theirs[0], theirs[2])}; "
        f"{totals['grep_bytes']:,} B",
        f"{totals['grep_bytes'] / max(totals['lsp_bytes'], 1):.2f}× grep's bytes",
        note=f"{ours[1]} places listed, grep {theirs[1]} lines",
    )
    section.row(f"{label}first answer ({cold})", f"{times[0]:.1f} s", f"rg: {rg_times[0] * 1000:.0f} ms")
    section.row(
        f"{label}later answers (warm), median of {len(times) - 1}",
        f"{statistics.median(times[1:]) * 1000:.0f} ms ({min(times[1:]) * 1000:.0f}–{max(times[1:]) * 1000:.0f})",
        f"rg: {statistics.median(rg_times) * 1000:.0f} ms ({min(rg_times) * 1000:.0f}–{max(rg_times) * 1000:.0f})",
    )
