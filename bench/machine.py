"""What the results were measured on: date, machine, Python and package versions."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from agentcli.core.tools.rg import rg_path

PACKAGES = ("agentcli", "textual", "rich", "anthropic", "prompt-toolkit", "ripgrep")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _command(*argv: str) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def describe() -> dict[str, str]:
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    root = Path(__file__).resolve().parent.parent
    commit = _command("git", "-C", str(root), "rev-parse", "--short", "HEAD")
    dirty = _command("git", "-C", str(root), "status", "--porcelain", "--untracked-files=no")
    return {
        "Date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "Commit": commit + (" (with uncommitted changes in the tree)" if dirty != "unknown" and dirty else ""),
        "CPUs": f"{os.cpu_count()} (`nproc`: {_command('nproc')})",
        "CPU model": _cpu_model(),
        "Memory": _memory_gib(),
        "OS": f"{platform.system()} {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "Packages": ", ".join(versions),
        "Tools": f"{_command(rg_path() or 'rg', '--version')}; {_command('tmux', '-V')}; {_command('git', '--version')}",
        "Load average (1, 5, 15 min) when written": _load(),
    }
