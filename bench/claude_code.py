"""Claude Code as a peer: the real CLI, from the ``claude-agent-sdk`` wheel on PyPI (its bundled binary),
driven offline by the same stand-in server as agentcli.

The wheel is large (about 180 MB), so it is fetched once into a bench-only cache
(``~/.cache/agentcli-bench``, or ``AGENTCLI_BENCH_CACHE``) and never installed into the project's
environment or used by the tests. When it cannot be had, its rows say "not measured" and the rest
of the bench runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from tests.fakes.anthropic_server import text

from .common import BIN, StandIn, api_env
from .stats import Section

DOWNLOAD_TIMEOUT = 900  # seconds for pip to fetch the wheel
QUIET = {"DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}


def cache_dir() -> Path:
    return Path(os.environ.get("AGENTCLI_BENCH_CACHE") or Path.home() / ".cache" / "agentcli-bench")


def claude_binary() -> tuple[Path | None, str]:
    """The bundled ``claude`` binary, fetched into the cache if need be; or None and why not."""
    cache = cache_dir() / "claude-agent-sdk"
    binary = cache / "claude_agent_sdk" / "_bundled" / "claude"
    if binary.is_file():
        return binary, ""
    cache.mkdir(parents=True, exist_ok=True)
    wheels = sorted(cache.glob("claude_agent_sdk-*.whl"))
    if not wheels:
        try:
            proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                                   "--dest", str(cache), "claude-agent-sdk"], capture_output=True, text=True,
                                  timeout=DOWNLOAD_TIMEOUT)
        except subprocess.TimeoutExpired:
            return None, f"pip download claude-agent-sdk took longer than {DOWNLOAD_TIMEOUT} s"
        wheels = sorted(cache.glob("claude_agent_sdk-*.whl"))
        if proc.returncode != 0 or not wheels:
            last = (proc.stderr.strip().splitlines() or ["no wheel"])[-1]
            return None, f"pip download claude-agent-sdk failed: {last[:150]}"
    try:
        with zipfile.ZipFile(wheels[-1]) as wheel:
            for member in ("claude_agent_sdk/_bundled/claude", "claude_agent_sdk/_bundled/claude.version"):
                wheel.extract(member, cache)
    except (KeyError, zipfile.BadZipFile, OSError) as exc:
        return None, f"the wheel has no usable bundled CLI ({exc})"
    binary.chmod(0o755)
    return binary, ""


def _run(server: StandIn, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(launch → first request, last answer → exit) in ms, on this process's monotonic clock."""
    server.reset()
    started = time.monotonic()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   timeout=120)
    exited = time.monotonic()
    timeline = server.timeline
    if not timeline:
        raise RuntimeError(f"{argv[0]} sent no request")
    return (min(s for _, s, _ in timeline) - started) * 1000, (exited - max(e for _, _, e in timeline)) * 1000


def run(work: Path, runs: int = 5) -> Section:
    section = Section("Claude Code")
    binary, why = claude_binary()
    names = ("-p: launch to first request", "-p: final answer to exit")
    if binary is None:
        for name in names:
            section.not_measured(name, why)
        section.not_measured("TUI: launch to ready prompt", why)
        return section
    ws = work / "claude-code-ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "README.md").write_text("# A small project\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    home = work / "claude-home"
    home.mkdir(exist_ok=True)
    ours, theirs = [], []
    # Claude Code's requests carry messages with role "system", which the API's public schema (and the
    # stand-in's check of it) does not have: the stand-in answers without checking requests here.
    with StandIn(responder=lambda body: text("Hello."), validate=False) as server:
        env = {**api_env(server), **QUIET}
        claude_env = {**env, "HOME": str(home)}
        agentcli = [str(BIN / "agentcli"), "-p", "hi"]
        claude = [str(binary), "-p", "hi"]
        _run(server, claude, ws, claude_env)  # warm the page cache: the binary is 400 MB
        _run(server, agentcli, ws, env)
        for i in range(runs):
            if i % 2 == 0:
                ours.append(_run(server, agentcli, ws, env))
                theirs.append(_run(server, claude, ws, claude_env))
            else:
                theirs.append(_run(server, claude, ws, claude_env))
                ours.append(_run(server, agentcli, ws, env))
    stamp = binary.parent / "claude.version"  # "2.1.332 (Claude Code)"
    version = stamp.read_text().split()[0] if stamp.is_file() and stamp.read_text().split() else "?"
    for k, name in enumerate(names):
        section.compare(f"agentcli {name}", [o[k] for o in ours], f"Claude Code {version}", [t[k] for t in theirs],
                        digits=0, note="the same stand-in server; a throwaway HOME for Claude Code; agentcli's first "
                        "request and its reply do not wait for the SDK import (core/early_request.py)")
    section.not_measured("TUI: launch to ready prompt against Claude Code's",
                         "its interactive mode needs a seeded ~/.claude.json (onboarding, folder trust); not done yet")
    section.notes.append(
        f"The real Claude Code CLI ({version}), the binary bundled in the `claude-agent-sdk` wheel, fetched once "
        "into a bench-only cache (never into the project's environment), run offline against the same stand-in "
        "server with `ANTHROPIC_BASE_URL`, a throwaway `HOME` and " + ", ".join(f"`{k}=1`" for k in QUIET) +
        f". {runs} paired runs after one warm-up each, order alternated.")
    return section
