"""Startup: launch to the first usable screen of the TUI under tmux (against a bare Textual app with
the same widgets count), ``agentcli --version`` (against a bare interpreter), and ``agentcli -p`` to
its first request reaching the stand-in server (against a bare SDK script)."""

from __future__ import annotations

import compileall
import json
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes.anthropic_server import text

from .bare_app import READY as BARE_READY
from .common import BIN, REPO_ROOT, StandIn, api_env, run_to_exit
from .stats import Section
from .terminal import Tmux

TUI_READY = "ask about the code"  # the welcome line, drawn once the prompt has focus
BARE_SDK = (
    "import anthropic\nwith anthropic.Anthropic().messages.stream(model='claude-sonnet-5-5', max_tokens=64, "
    "messages=[{'role': 'user', 'content': 'hi'}]) as stream:\n    stream.get_final_message()"
)


def _timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    run_to_exit(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        timeout=60,
    )
    return (time.perf_counter() - started) * 1000


def _first_request(server: StandIn, argv: list[str], cwd: Path) -> tuple[float, float]:
    """Launch to the moment the server received the first request, and the last answer's end to the
    process exit (both on the server's clock, this process's monotonic one), in ms."""
    server.reset()
    started = time.monotonic()
    run_to_exit(
        argv,
        cwd=cwd,
        env=api_env(server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        timeout=60,
    )  # a piped stdin would be the prompt
    exited = time.monotonic()
    server.assert_no_rejections()
    timeline = server.timeline
    return (min(start for _, start, _ in timeline) - started) * 1000, (
        exited - max(end for _, _, end in timeline)
    ) * 1000


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
    section.compare(
        "agentcli -p: launch to first request",
        [o[0] for o in ours],
        "bare SDK script",
        [b[0] for b in bare],
        digits=0,
        note="arrival time on the server's clock; target ≤ 0.9×; what did it: the first request does "
        "not wait for the `anthropic` import (about 1 s): it goes out with httpx2 (0.1 s to import) "
        "and its reply is read at once (core/model/early_request.py), while the SDK imports in a thread "
        "for errors and every later call; that thread imports httpx2 and makes the TLS context (20 ms of "
        "certificates) while the main thread waits on git, then waits for the request's last byte before "
        "the SDK: one thread runs at a time, and the import beside had halved the preparation's pace "
        "(core/model/sdk_import.py); the main thread loads nothing before that request that /review, /context, "
        "the status line, stream-json, the slash commands or best-of-N need (they load when first asked for)",
    )
    section.compare(
        "agentcli -p: final answer to exit",
        [o[1] for o in ours],
        "bare SDK script",
        [b[1] for b in bare],
        digits=0,
        note="target ≤ 100 ms; from the server's last byte to the process's exit, waited for, not polled "
        "(bench/common.py run_to_exit); the SDK import, still running then, hands the interpreter over every "
        "0.5 ms, not 5",
    )


def measure_tui(section: Section, ws: Path, runs: int) -> None:
    """agentcli against two bare Textual apps: the 16-widget peer and the smallest (header, input, footer)."""
    with StandIn(responder=lambda body: text("Hello.")) as server, Tmux() as term:
        env = {k: v for k, v in api_env(server).items() if k.startswith("ANTHROPIC_")}
        peer_env = {**env, "PYTHONPATH": str(REPO_ROOT)}
        apps = [
            ([str(BIN / "agentcli")], env, TUI_READY),
            ([sys.executable, "-m", "bench.bare_app"], peer_env, BARE_READY),
            ([sys.executable, "-m", "bench.bare_app", "--small"], peer_env, BARE_READY),
        ]
        times: list[list[float]] = [[] for _ in apps]
        for argv, app_env, marker in apps:  # warm the page cache
            _screen_time(term, argv, ws, app_env, marker)
        for i in range(runs):
            for which in range(len(apps)):
                which = (which + i) % len(apps)  # each app goes first in turn
                argv, app_env, marker = apps[which]
                times[which].append(_screen_time(term, argv, ws, app_env, marker))
    ours, bare, small = times
    section.compare(
        "TUI: launch to first usable screen",
        ours,
        "bare Textual app (16 widgets)",
        bare,
        digits=0,
        note="tmux 120×40, polled with capture-pane; target ≤ 1.3×; what did it: the session (the "
        "engine's import, its files, the tools) opens in a thread after the first screen, messages "
        "sent meanwhile wait in the queue; the key is wiped in place from /proc/<pid>/environ "
        "instead of a second interpreter start; no collector passes during startup imports; since Dec 2 "
        "the settings and the door had brought the permission checks, the sandbox, the model client and "
        "compaction before the screen: the modes are named in core/vocabulary.py and the door takes its light "
        "names from small modules, so they load with the session again, as the approval, question and "
        "missing-key screens load when first shown; the events share one __eq__, __hash__ and __repr__ "
        "instead of three compiled per class (core/events.py's import 20 to 15 ms of CPU), and `from door "
        "import` no longer parses door.py; since Dec 5 each dataclass method compiles at its first call, not "
        "as its class is defined (core/system/lazy_dataclasses.py: each was an exec of its own, and defining "
        "the 113 dataclasses before the screen, agentcli's and Textual's, took 41 ms of CPU, now 16), and the "
        "settings and trust no longer load the permission rules' parser, the bash parser under it or the "
        "server parsers (about 5 ms; they load when a file names rules or servers): together 0.90x the CPU "
        "main's took to the first screen (273 against 305 ms, 10 alternating runs); what stays before the "
        "screen: Textual itself, then agentcli's own imports, and trust's read "
        "of the workspace's agent, command, skill and plugin files, while git reads the repository's config and "
        "hooks folder (two processes started at once before those reads and waited for after them, none where "
        "no .git is found); no longer before it: ctypes (the key is wiped through /proc/self/mem), the "
        "look-alike bracket patterns of content.quoted (about 4 ms to compile, now at the first quote) and the "
        "trust question's screen (loaded when a workspace asks); since Dec 5 evening (branch launch4: 0.93x the CPU "
        "and the wall time main's took to the first screen, 40 alternating launches each ended at its first frame, "
        "load 1-2): the theme is set before "
        "the first style pass, not through its watcher, which had queued a second parse of all the CSS and a restyle "
        "before the first frame; no dataclass compiles its methods as it is defined (13 of agentcli's had no "
        "docstring, which dataclasses writes from the compiled `__init__`: they have one, and one without is now "
        "written when first read, 0.41 to 0.08 ms a class, Textual's four included); the quit question's screen, the "
        "plan block's title and steps and the TOML parser load when first needed",
    )
    section.compare(
        "… against the smallest app",
        ours,
        "header + input + footer",
        small,
        digits=0,
        note="tmux 120×40; target ≤ 1.3×; the same as above: agentcli's own imports and its larger "
        "first screen (a 16-widget layout and its CSS) are what a 3-widget app never pays",
    )


PLAIN_READY = "ctrl+d quits"  # the end of line mode's banner; its prompt follows


def _enter_to_request(
    server: StandIn, term: Tmux, argv: list[str], cwd: Path, env: dict[str, str], marker: str
) -> float:
    """Start a front end, type a message as soon as it is ready, and time Enter → the request's arrival."""
    server.reset()
    name, _ = term.launch(argv, cwd, env)
    try:
        term.wait_for(name, marker)
        term.tmux("send-keys", "-t", name, "-l", "hi")
        pressed = time.monotonic()
        term.tmux("send-keys", "-t", name, "Enter")
        deadline = pressed + 60
        while not server.timeline and time.monotonic() < deadline:  # an entry once the answer is sent
            time.sleep(0.002)
        if not server.timeline:
            raise TimeoutError(f"no answered request within 60 s of Enter; the screen was:\n{term.screen(name)}")
        return (min(start for _, start, _ in server.timeline) - pressed) * 1000
    finally:
        term.kill(name)


def measure_first_message(section: Section, ws: Path, runs: int) -> None:
    """Enter → first request in line mode against the TUI, each typed as soon as its prompt shows."""
    ours, tui = [], []
    with StandIn(responder=lambda body: text("Hello.")) as server, Tmux() as term:
        env = {k: v for k, v in api_env(server).items() if k.startswith("ANTHROPIC_")}
        plain = ([str(BIN / "agentcli"), "--plain"], PLAIN_READY)
        full = ([str(BIN / "agentcli")], TUI_READY)
        try:
            _enter_to_request(server, term, plain[0], ws, env, plain[1])  # warm the page cache
            for i in range(runs):
                for which in (0, 1) if i % 2 == 0 else (1, 0):
                    argv, marker = (plain, full)[which]
                    (ours if which == 0 else tui).append(_enter_to_request(server, term, argv, ws, env, marker))
        except TimeoutError as exc:  # the other startup rows stand; this one says what went wrong
            section.not_measured("line mode: Enter to first request", str(exc).splitlines()[0])
            return
    section.compare(
        "line mode: Enter to first request",
        ours,
        "the TUI",
        tui,
        digits=0,
        note="typed as soon as the prompt shows; target ≤ 1.2×; what did it: line mode's first "
        "message no longer joins the SDK import it starts in a thread at launch (the model client "
        "waits for the SDK only where it needs it), and that import runs with the collector off, "
        "as the TUI's startup does (14% less CPU competing with the first request)",
    )


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
            for which in (0, 1) if i % 2 == 0 else (1, 0):
                if which == 0:
                    with_servers.append(_screen_time(term, servers, ws, env, TUI_READY))
                else:
                    without.append(_screen_time(term, plain, ws, env, TUI_READY))
    section.compare(
        "TUI: first screen, three MCP servers",
        with_servers,
        "no MCP servers",
        without,
        digits=0,
        note="target: within 5%",
    )


def run(work: Path, runs: int = 5) -> Section:
    section = Section("Startup")
    ws = work / "startup-ws"
    ws.mkdir(parents=True, exist_ok=True)
    # As installed (pip compiles bytecode), whatever PYTHONDONTWRITEBYTECODE says: the peers' Textual has its own.
    compileall.compile_dir(REPO_ROOT / "agentcli", quiet=1)
    (ws / "README.md").write_text("# A small project\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    measure_tui(section, ws, runs)
    measure_tui_mcp(section, ws, runs)
    measure_version(section, ws, runs)
    measure_headless(section, ws, runs)
    measure_first_message(section, ws, runs)
    section.notes.append(
        f"{runs} paired runs each after one warm-up. TUI: `agentcli` and `python -m bench.bare_app` (plain Textual "
        "widgets, the same widgets count as agentcli's first screen: 16) each started in a fresh detached tmux "
        "session; the time is from `tmux new-session` to the first `capture-pane` showing the app's ready text "
        "(agentcli: its welcome line, drawn with the prompt, before the session opens); agentcli's bytecode is "
        "compiled first, as an installed copy has it; the smallest peer, `python -m "
        "bench.bare_app --small`, is a header, an input (its placeholder is the ready text) and a footer. `-p`: from process launch to the "
        "stand-in server receiving the request; the peer is a three-line script that imports `anthropic` and "
        "streams one request (as agentcli does), the floor for any Python agent on this SDK. MCP: the same TUI "
        "launch with `--mcp-config` naming three stdio servers (tests/fakes/mcp_server.py), which start in the "
        "background after the first screen, against the same launch without them."
    )
    return section
