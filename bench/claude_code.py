"""Claude Code as a peer: the real CLI, from the ``claude-agent-sdk`` wheel on PyPI (its bundled binary),
driven offline by the same stand-in server as agentcli.

The wheel is large (about 180 MB), so it is fetched once into a bench-only cache
(``~/.cache/agentcli-bench``, or ``AGENTCLI_BENCH_CACHE``) and never installed into the project's
environment or used by the tests. When it cannot be had, its rows say "not measured" and the rest
of the bench runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from tests.fakes.anthropic_server import text

from .common import API_KEY, BIN, StandIn, api_env, run_to_exit
from .startup import TUI_READY
from .stats import Section
from .terminal import Tmux

DOWNLOAD_TIMEOUT = 900  # seconds for pip to fetch the wheel
# Offline: without the last one it clones its plugin marketplace from GitHub in the background (two
# git processes competing for the CPU) even with nonessential traffic disabled.
QUIET = {
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
}
# Its input box: a line that starts with the prompt sign between two rules (its dialogs put the sign
# before a choice, never between rules).
READY = re.compile(r"^─{20,}\n❯[^\n]*\n─{20,}$", re.MULTILINE)
HEADLESS = ("agentcli -p: launch to first request", "agentcli -p: final answer to exit")  # the rows
# What the exit row is made of (perf_counter stamps in the -p run and strace, 5 December, load 3-6): from the
# server's last write about 1-5 ms until the main thread has read the reply, 3-5 ms of its steps to the exit
# (the view model, the session's last records, the answer), 2-3 ms for the kernel to end a 40 MB process and
# the bench to see it.
EXIT_NOTE = (
    "; the exit is waited for, not polled (bench/common.py run_to_exit: subprocess.run's timeout had looked "
    "every 50 ms, adding 0-50 ms to both sides)"
)
TUI = "agentcli TUI: launch to ready prompt"
TUI_ECHO = "agentcli TUI: launch to a word typed then shown"
PROBE = "xyzzy"  # typed the moment the prompt shows
FIRST_LAUNCH_TIMEOUT = 120  # seconds: the first launch also reads the 400 MB binary from disk


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
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--only-binary=:all:",
                    "--dest",
                    str(cache),
                    "claude-agent-sdk",
                ],
                capture_output=True,
                text=True,
                timeout=DOWNLOAD_TIMEOUT,
            )
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
    # stdin closed: with it an open pipe, Claude Code waits about 2 s for piped input before its request,
    # and agentcli -p waits for the pipe's end.
    proc = run_to_exit(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
    )
    exited = time.monotonic()
    if server.rejections:
        raise RuntimeError(f"the stand-in refused a request of {Path(argv[0]).name}: {server.rejections[0][1][:150]}")
    proc.check_returncode()
    timeline = server.timeline
    if not timeline:
        raise RuntimeError(f"{argv[0]} sent no request")
    return (min(s for _, s, _ in timeline) - started) * 1000, (exited - max(e for _, _, e in timeline)) * 1000


def seed_home(home: Path, ws: Path, version: str) -> None:
    """The ``~/.claude.json`` of a user who has run Claude Code before, so that its interactive mode opens on
    its prompt: without ``hasCompletedOnboarding`` it asks for a theme, without the folder's
    ``hasTrustDialogAccepted`` whether to trust it, and without the key's last 20 characters among the approved
    ``customApiKeyResponses`` whether to use the ANTHROPIC_API_KEY it found."""
    project = {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True, "allowedTools": []}
    config = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": version,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(ws.resolve()): project},
    }
    (home / ".claude.json").write_text(json.dumps(config, indent=2))


def _ready_then_echo(
    term: Tmux, argv: list[str], cwd: Path, env: dict[str, str], marker: str | re.Pattern[str], timeout: float = 30.0
) -> tuple[float, float]:
    """Launch in a fresh tmux session; (launch → ``marker`` shows, launch → a word typed the moment it showed
    is on screen), in ms. The second says when the prompt really takes keys: an app may draw it earlier."""
    name, started = term.launch(argv, cwd, env)
    try:
        ready = term.wait_for(name, marker, timeout)
        term.tmux("send-keys", "-t", name, "-l", PROBE)
        shown = term.wait_for(name, PROBE, timeout)
        return (ready - started) * 1000, (shown - started) * 1000
    finally:
        term.kill(name)


def measure_tui(section: Section, server: StandIn, binary: Path, version: str, ws: Path, home: Path, runs: int) -> None:
    """Launch to the ready prompt in tmux 120×40, Claude Code's input box against agentcli's welcome line
    (as Startup times agentcli), and launch to a word typed at that moment showing in each."""
    env = {k: v for k, v in api_env(server).items() if k.startswith("ANTHROPIC_")}
    launches = {
        "agentcli": ([str(BIN / "agentcli")], env, TUI_READY),
        "Claude Code": ([str(binary)], {**env, **QUIET, "HOME": str(home)}, READY),
    }
    times: dict[str, list[tuple[float, float]]] = {who: [] for who in launches}
    who = "Claude Code"
    with Tmux() as term:
        try:
            for who in launches:  # who: named by the except below if it times out
                argv, launch_env, marker = launches[who]
                # warm-up: the page cache (the binary is 400 MB), Claude Code's one-time notices
                _ready_then_echo(term, argv, ws, launch_env, marker, timeout=FIRST_LAUNCH_TIMEOUT)
            for i in range(runs):
                for who in ("agentcli", "Claude Code") if i % 2 == 0 else ("Claude Code", "agentcli"):
                    argv, launch_env, marker = launches[who]
                    times[who].append(_ready_then_echo(term, argv, ws, launch_env, marker))
        except TimeoutError as exc:
            screen = [line.strip() for line in str(exc).splitlines()[1:] if line.strip()]
            reason = f"{who}'s prompt did not show or take keys in time; its screen " + (
                f"began: {screen[0][:80]!r}" if screen else "was blank"
            )
            section.not_measured(TUI, reason)
            section.not_measured(TUI_ECHO, reason)
            return
    ours, theirs = times["agentcli"], times["Claude Code"]
    section.compare(
        TUI,
        [o[0] for o in ours],
        f"Claude Code {version}",
        [t[0] for t in theirs],
        digits=0,
        note="tmux 120×40, polled with capture-pane; agentcli: its welcome line (drawn once the prompt "
        "has focus); Claude Code: its input box (the `❯` line between two rules), with a seeded "
        "~/.claude.json (onboarding done, the folder trusted, the API key approved); what agentcli "
        "spends: see Startup's first-screen row",
    )
    section.compare(
        TUI_ECHO,
        [o[1] for o in ours],
        f"Claude Code {version}",
        [t[1] for t in theirs],
        digits=0,
        note=f"the same launches: `{PROBE}` typed the moment the ready prompt showed, until it is on "
        "screen; Claude Code draws its input box before its REPL is up, keeps what is typed meanwhile "
        "(its early-input capture) and shows it once the REPL has mounted",
    )


def measure_headless(
    section: Section, server: StandIn, binary: Path, version: str, ws: Path, home: Path, runs: int
) -> None:
    """``-p hi`` in each: launch to the first request's arrival, and the last answer's end to the exit."""
    env = {**api_env(server), **QUIET}
    claude_env = {**env, "HOME": str(home)}
    agentcli = [str(BIN / "agentcli"), "-p", "hi"]
    claude = [str(binary), "-p", "hi"]
    ours, theirs = [], []
    try:
        _run(server, claude, ws, claude_env)  # warm the page cache: the binary is 400 MB
        _run(server, agentcli, ws, env)
        for i in range(runs):
            for which in (0, 1) if i % 2 == 0 else (1, 0):
                if which == 0:
                    ours.append(_run(server, agentcli, ws, env))
                else:
                    theirs.append(_run(server, claude, ws, claude_env))
    except (subprocess.SubprocessError, RuntimeError) as exc:  # the TUI row may still stand
        for name in HEADLESS:
            section.not_measured(name, f"{type(exc).__name__}: {str(exc).splitlines()[0][:150]}")
        return
    for k, name in enumerate(HEADLESS):
        section.compare(
            name,
            [o[k] for o in ours],
            f"Claude Code {version}",
            [t[k] for t in theirs],
            digits=0,
            note="the same stand-in server; a throwaway HOME for Claude Code; agentcli's first "
            "request and its reply do not wait for the SDK import (core/model/early_request.py), which "
            "waits for that request to go out (core/model/sdk_import.py); before that request the main thread "
            "loads nothing that /review, /context, the status line, stream-json or best-of-N need" + EXIT_NOTE * k,
        )


def run(work: Path, runs: int = 5) -> Section:
    section = Section("Claude Code")
    binary, why = claude_binary()
    if binary is None:
        for name in (*HEADLESS, TUI, TUI_ECHO):
            section.not_measured(name, why)
        return section
    stamp = binary.parent / "claude.version"  # "2.1.332 (Claude Code)"
    version = stamp.read_text().split()[0] if stamp.is_file() and stamp.read_text().split() else "?"
    ws = work / "claude-code-ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "README.md").write_text("# A small project\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    home = work / "claude-home"
    home.mkdir(exist_ok=True)
    seed_home(home, ws, version)
    # Claude Code's requests carry messages with role "system": the stand-in checks them in its dialect.
    with StandIn(responder=lambda body: text("Hello."), dialect="claude-code") as server:
        measure_headless(section, server, binary, version, ws, home, runs)
        measure_tui(section, server, binary, version, ws, home, runs)
    section.notes.append(
        f"The real Claude Code CLI ({version}), the binary bundled in the `claude-agent-sdk` wheel, fetched once "
        "into a bench-only cache (never into the project's environment), run offline against the same stand-in "
        "server with `ANTHROPIC_BASE_URL`, a throwaway `HOME` and "
        + ", ".join(f"`{k}=1`" for k in QUIET)
        + " (without the last it tries to clone its plugin marketplace from GitHub in the background; with them, "
        "strace shows no connection but to the stand-in)"
        + f". {runs} paired runs after one warm-up each, order alternated. TUI: each launch in a fresh detached "
        "tmux session (120×40), timed from `tmux new-session` to the first `capture-pane` showing the ready "
        "prompt, as in Startup. The `HOME` holds a `~/.claude.json` written as a returning user's (onboarding "
        "done, theme chosen, the folder trusted, the API key approved), so no dialog stands before the prompt; "
        "the warm-up launch sees its one-time notices."
    )
    return section
