"""A clone that never ends, stopped by the user: ctrl+c, SIGTERM or SIGHUP in a shell, ctrl+c in line mode (esc and quitting in the TUI:
tests/ui/test_plugin_install_ui.py). The marketplace is served by a stranger's HTTP server that takes each request
and never answers, so git waits for as long as the test wants. Stopped, git is gone at once, its clone is removed,
and the program says so: it neither waits for git's own end (which never comes) nor leaves git writing, with no cap
and no time limit, after it has gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests import waiting
from tests.e2e.terminal import as_a_foreground_command
from tests.e2e.test_plugin_clone_cap import files_under, git_left_running, plugins_home
from tests.stuck import FAULT_HANDLER, described

DEADLINE = 60.0  # seconds: generous, for a loaded machine; a stopped clone takes well under one


@dataclass
class StalledServer:
    url: str
    asked: threading.Event  # git's first request arrived: the clone is under way


@pytest.fixture
def stalled_server() -> Iterator[StalledServer]:
    """A git server over HTTP that never answers, until the test ends."""
    asked, release = threading.Event(), threading.Event()

    class Stalling(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.set()
            release.wait(DEADLINE * 4)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Stalling) as site:
        site.daemon_threads = True
        threading.Thread(target=site.serve_forever, daemon=True).start()
        try:
            yield StalledServer(f"http://127.0.0.1:{site.server_port}/market.git", asked)
        finally:
            release.set()
            site.shutdown()


def start(*args: str, cwd: Path, stdin: int | None = None) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli", *args],
        cwd=cwd,
        env={**env, "ANTHROPIC_API_KEY": "not-used-by-a-slash-command", **FAULT_HANDLER},
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_foreground_command,  # the signals as a shell gives them, however the tests were started
    )


def ended(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Its output once it has ended; if it does not, a failure saying what it was doing (tests/stuck.py)."""
    try:
        return proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        state = described(proc.pid)  # then its stacks, on its stderr
        try:
            err = proc.communicate(timeout=DEADLINE / 6)[1]
        except subprocess.TimeoutExpired:
            err = "(it did not end on SIGABRT either)"
        raise AssertionError(f"agentcli did not end (waited {DEADLINE:.0f} s)\n{state}\nits stderr:\n{err}") from None


@pytest.mark.parametrize(
    ("signum", "code", "last_words"),
    [
        (signal.SIGINT, 130, "agentcli: interrupted."),  # ctrl+c (git, in a session of its own, gets none)
        (signal.SIGTERM, 143, "agentcli: stopped by SIGTERM."),
        (signal.SIGHUP, 129, "agentcli: stopped by SIGHUP."),  # the terminal closed
    ],
)
def test_a_signal_stops_a_clone_in_a_shell_at_once_and_keeps_nothing(
    tmp_path, repo, stalled_server, signum, code, last_words
):
    proc = start("plugin", "marketplace", "add", stalled_server.url, cwd=repo)
    try:
        assert stalled_server.asked.wait(DEADLINE), "git never asked the server"
        proc.send_signal(signum)
        out, err = ended(proc)  # before: ctrl+c waited for git, which never ends
    finally:
        proc.kill()
    assert proc.returncode == code and err.strip().splitlines()[-1] == last_words, err
    assert git_left_running(tmp_path) == []  # before: SIGTERM and SIGHUP left git's remote helper running
    assert files_under(plugins_home() / "marketplaces") == []  # no half clone, no temporary folder


def git_clone_running(tmp_path: Path) -> list[str]:
    return [where for where in git_left_running(tmp_path) if " clone " in where]


def test_git_clone_dies_with_an_agentcli_that_was_killed(tmp_path, repo, stalled_server):
    """SIGKILL leaves no exit hook and no watcher: git, in a session of its own, gets SIGKILL from the kernel. (The
    remote helper git started is out of reach, as processes.py says of what a child starts: it ends when its
    server lets it go, or when it next writes to the git that is gone.)"""
    proc = start("plugin", "marketplace", "add", stalled_server.url, cwd=repo)
    try:
        assert stalled_server.asked.wait(DEADLINE), "git never asked the server"
        assert git_clone_running(tmp_path)
    finally:
        proc.kill()
        proc.communicate(timeout=DEADLINE)
    waiting.wait_until(lambda: not git_clone_running(tmp_path), "git clone gone with agentcli", timeout=DEADLINE)


def test_ctrl_c_in_line_mode_stops_the_plugin_command_not_the_session(tmp_path, repo, stalled_server):
    proc = start("--plain", cwd=repo, stdin=subprocess.PIPE)
    try:
        assert proc.stdin is not None
        proc.stdin.write(f"/plugin marketplace add {stalled_server.url}\n")
        proc.stdin.flush()
        assert stalled_server.asked.wait(DEADLINE), "git never asked the server"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate("/plugin marketplace list\n", timeout=DEADLINE)  # the session goes on
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    said = " ".join(out.split())
    assert f"/plugin marketplace add {stalled_server.url}: working on it; ctrl+c stops it." in said
    assert f"Stopped /plugin marketplace add {stalled_server.url}; what it had not finished was undone." in said
    assert said.index("Stopped /plugin") < said.index("No marketplaces yet")
    assert git_left_running(tmp_path) == []
    assert files_under(plugins_home() / "marketplaces") == []


LEAVES_MID_CLONE = """
import sys, threading
from pathlib import Path
from agentcli.core.system import clones
from agentcli.leaving import leave

threading.Thread(target=clones.clone, args=(sys.argv[1], Path(sys.argv[2]), 2**20), daemon=True).start()
sys.stdin.readline()  # the test says when git has asked its server
leave(0)  # as the TUI and line mode end: exit hooks, then os._exit, no thread waited for
"""


def test_a_process_that_leaves_mid_clone_stops_git_and_removes_the_clone(tmp_path, stalled_server):
    dest = tmp_path / "clone"
    proc = subprocess.Popen(
        [sys.executable, "-c", LEAVES_MID_CLONE, stalled_server.url, str(dest)], stdin=subprocess.PIPE, text=True
    )
    try:
        assert stalled_server.asked.wait(DEADLINE), "git never asked the server"
        proc.communicate("\n", timeout=DEADLINE)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert git_left_running(tmp_path) == []  # its remote helper too: the whole group was killed
    assert not dest.exists()
