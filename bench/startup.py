"""Startup: launch to the first usable screen of the TUI under tmux (against a bare Textual app with
the same widgets count), ``agentcli --version`` (against a bare interpreter), and ``agentcli -p`` to
its first request reaching the stand-in server (against a bare SDK script)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.fakes.anthropic_server import text

from .common import BIN, REPO_ROOT, StandIn, api_env
from .stats import Section
from .bare_app import READY as BARE_READY
from .terminal import Tmux

TUI_READY = "ask about the code"  # the welcome line, drawn once the prompt has focus
BARE_SDK = ("import anthropic\nwith anthropic.Anthropic().messages.stream(model='claude-sonnet-5-5', max_tokens=64, "
            "messages=[{'role': 'user', 'content': 'hi'}]) as stream:\n    stream.get_final_message()")


def _timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   timeout=60)
    return (time.perf_counter() - started) * 1000


def _first_request(server: StandIn, argv: list[str], cwd: Path) -> float:
    """Launch to the moment the server received the first request (its own clock), in ms."""
    server.reset()
    started = time.monotonic()
    subprocess.run(argv, cwd=cwd, env=api_env(server), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, timeout=60)
    server.assert_no_rejections()
    return (min(start for _, start, _ in server.timeline) - started) * 1000


def _screen_time(term: Tmux, argv: list[str], cwd: Path, env: dict[str, str], marker: str) -> float:
    name, started = term.launch(argv, cwd, env)
    try:
        return (term.wait_for(name, marker) - started) * 1000
    finally:
        term.kill(name)


def measure_version(section: Section, ws: Path, runs: int) -> None:
    ours, bare = [], []
    _timed([str(BIN / "agentcli"), "--version"], ws)
    for _ in range(runs):
        ours.append(_timed([str(BIN / "agentcli"), "--version"], ws))
        bare.append(_timed([sys.executable, "-c", "pass"], ws))
    section.compare("agentcli --version", ours, "python -c pass", bare, digits=0)


def measure_headless(section: Section, ws: Path, runs: int) -> None:
    ours, bare = [], []
    with StandIn(responder=lambda body: text("Hello.")) as server:
        _first_request(server, [str(BIN / "agentcli"), "-p", "hi"], ws)
        for _ in range(runs):
            ours.append(_first_request(server, [str(BIN / "agentcli"), "-p", "hi"], ws))
            bare.append(_first_request(server, [sys.executable, "-c", BARE_SDK], ws))
    section.compare("agentcli -p: launch to first request", ours, "bare SDK script", bare, digits=0,
                    note="arrival time on the server's clock")


def measure_tui(section: Section, ws: Path, runs: int) -> None:
    """agentcli against two bare Textual apps: the 16-widget peer and the smallest (header, input, footer)."""
    with StandIn(responder=lambda body: text("Hello.")) as server, Tmux() as term:
        env = {k: v for k, v in api_env(server).items() if k.startswith("ANTHROPIC_")}
        peer_env = {**env, "PYTHONPATH": str(REPO_ROOT)}
        apps = [([str(BIN / "agentcli")], env, TUI_READY),
                ([sys.executable, "-m", "bench.bare_app"], peer_env, BARE_READY),
                ([sys.executable, "-m", "bench.bare_app", "--small"], peer_env, BARE_READY)]
        times: list[list[float]] = [[] for _ in apps]
        for argv, app_env, marker in apps:  # warm the page cache
            _screen_time(term, argv, ws, app_env, marker)
        for i in range(runs):
            for which in range(len(apps)):
                which = (which + i) % len(apps)  # each app goes first in turn
                argv, app_env, marker = apps[which]
                times[which].append(_screen_time(term, argv, ws, app_env, marker))
    ours, bare, small = times
    section.compare("TUI: launch to first usable screen", ours, "bare Textual app (16 widgets)", bare, digits=0,
                    note="tmux 120×40, polled with capture-pane")
    section.compare("… against the smallest app", ours, "header + input + footer", small, digits=0,
                    note="tmux 120×40")


def run(work: Path, runs: int = 5) -> Section:
    section = Section("Startup")
    ws = work / "startup-ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "README.md").write_text("# A small project\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    measure_tui(section, ws, runs)
    measure_version(section, ws, runs)
    measure_headless(section, ws, runs)
    section.notes.append(
        f"{runs} paired runs each after one warm-up. TUI: `agentcli` and `python -m bench.bare_app` (plain Textual "
        "widgets, the same widgets count as agentcli's first screen: 16) each started in a fresh detached tmux "
        "session; the time is from `tmux new-session` to the first `capture-pane` showing the app's ready text "
        "(agentcli: its welcome line, drawn after the prompt takes focus); the smallest peer, `python -m "
        "bench.bare_app --small`, is a header, an input (its placeholder is the ready text) and a footer. `-p`: from process launch to the "
        "stand-in server receiving the request; the peer is a three-line script that imports `anthropic` and "
        "streams one request (as agentcli does), the floor for any Python agent on this SDK.")
    return section
