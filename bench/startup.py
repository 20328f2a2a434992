"""Startup: launch to the first usable screen of the TUI under tmux (against a bare Textual app with
the same widgets count), ``agentcli --version`` (against a bare interpreter), and ``agentcli -p`` to
its first request reaching the stand-in server (against a bare SDK script)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes.anthropic_server import text

from .common import BIN, REPO_ROOT, StandIn, api_env
from .stats import Section
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
    ours, bare = [], []
    with StandIn(responder=lambda body: text("Hello.")) as server, Tmux() as term:
        env = {k: v for k, v in api_env(server).items() if k.startswith("ANTHROPIC_")}
        agentcli = [str(BIN / "agentcli")]
        peer = [sys.executable, "-m", "bench.bare_app"]
        peer_env = {**env, "PYTHONPATH": str(REPO_ROOT)}
        _screen_time(term, agentcli, ws, env, TUI_READY)  # warm the page cache
        _screen_time(term, peer, ws, peer_env, "bare textual app ready")
        for i in range(runs):
            for which in ((0, 1) if i % 2 == 0 else (1, 0)):
                if which == 0:
                    ours.append(_screen_time(term, agentcli, ws, env, TUI_READY))
                else:
                    bare.append(_screen_time(term, peer, ws, peer_env, "bare textual app ready"))
    section.compare("TUI: launch to first usable screen", ours, "bare Textual app", bare, digits=0,
                    note="tmux 120×40, polled with capture-pane")


def mcp_config(ws: Path, servers: int = 3) -> Path:
    """A --mcp-config file naming ``servers`` stdio servers (the tests' fake server, written with the SDK)."""
    spec = {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server"], "env": {"PYTHONPATH": str(REPO_ROOT)}}
    path = ws.parent / "three-mcp-servers.json"
    path.write_text(json.dumps({"mcpServers": {f"fake{i}": spec for i in range(servers)}}))
    return path


def measure_tui_mcp(section: Section, ws: Path, runs: int) -> None:
    """The TUI's first screen with three MCP servers configured, against none: they start after it."""
    with_servers, without = [], []
    config = mcp_config(ws)
    with StandIn(responder=lambda body: text("Hello.")) as server, Tmux() as term:
        env = {k: v for k, v in api_env(server).items() if k.startswith("ANTHROPIC_")}
        plain = [str(BIN / "agentcli")]
        servers = [*plain, "--mcp-config", str(config)]
        _screen_time(term, servers, ws, env, TUI_READY)  # warm the page cache, the SDK's too
        for i in range(runs):
            for which in ((0, 1) if i % 2 == 0 else (1, 0)):
                if which == 0:
                    with_servers.append(_screen_time(term, servers, ws, env, TUI_READY))
                else:
                    without.append(_screen_time(term, plain, ws, env, TUI_READY))
    section.compare("TUI: first screen, three MCP servers", with_servers, "no MCP servers", without, digits=0,
                    note="target: within 5%")


def run(work: Path, runs: int = 5) -> Section:
    section = Section("Startup")
    ws = work / "startup-ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "README.md").write_text("# A small project\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    measure_tui(section, ws, runs)
    measure_tui_mcp(section, ws, runs)
    measure_version(section, ws, runs)
    measure_headless(section, ws, runs)
    section.notes.append(
        f"{runs} paired runs each after one warm-up. TUI: `agentcli` and `python -m bench.bare_app` (plain Textual "
        "widgets, the same widgets count as agentcli's first screen: 16) each started in a fresh detached tmux "
        "session; the time is from `tmux new-session` to the first `capture-pane` showing the app's ready text "
        "(agentcli: its welcome line, drawn after the prompt takes focus). `-p`: from process launch to the "
        "stand-in server receiving the request; the peer is a three-line script that imports `anthropic` and "
        "streams one request (as agentcli does), the floor for any Python agent on this SDK. MCP: the same TUI "
        "launch with `--mcp-config` naming three stdio servers (tests/fakes/mcp_server.py), which start in the "
        "background after the first screen, against the same launch without them.")
    return section
