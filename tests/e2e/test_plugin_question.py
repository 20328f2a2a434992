"""`agentcli plugin install` at a terminal asks before it installs what runs commands: the answer typed there
decides, and a signal while it waits stops it at once (it read with input(), which held the signal until Enter)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.terminal import Terminal
from tests.e2e.test_plugins import market, patient_startup, plugin  # noqa: F401 - fixtures used here
from tests.stuck import FAULT_HANDLER, described
from tests.waiting import DEADLINE, wait_until

INSTALLED = Path("~/.claude/plugins/installed_plugins.json")


def installing(repo: Path) -> Terminal:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}, **FAULT_HANDLER}
    terminal = Terminal([sys.executable, "-m", "agentcli", "plugin", "install", "helper@team-tools"], cwd=repo, env=env)
    terminal.wait_for("[y/N]")
    return terminal


def ended(terminal: Terminal) -> int:
    def detail() -> str:
        state = described(terminal.proc.pid)  # then its stacks, on the terminal
        with contextlib.suppress(subprocess.TimeoutExpired):
            terminal.proc.wait(DEADLINE / 6)
        return f"{state}\nthe terminal:\n{terminal.text}"

    wait_until(lambda: terminal.proc.poll() is not None, "agentcli to end", detail=detail)
    return terminal.proc.returncode


def recorded() -> dict[str, Any]:
    path = INSTALLED.expanduser()
    return json.loads(path.read_text()).get("plugins", {}) if path.is_file() else {}


@pytest.fixture
def listed(market: Path, repo: Path) -> Path:  # noqa: F811 - the fixture above
    assert plugin("marketplace", "add", f"file://{market}", cwd=repo)[0] == 0
    return repo


@pytest.mark.parametrize("typed", ["y\n", "n\n", "\x04"])  # yes; no; ctrl+d (the input's end)
def test_the_answer_typed_at_the_terminal_decides(listed: Path, typed: str):
    terminal = installing(listed)
    try:
        terminal.type(typed)
        code, yes = ended(terminal), typed == "y\n"
        assert (code, "helper@team-tools" in recorded()) == ((0, True) if yes else (1, False)), terminal.text
        assert ("Installed helper@team-tools" in terminal.text) == yes
    finally:
        terminal.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_it_asks_stops_it_at_once(listed: Path, signum: int):
    terminal = installing(listed)
    try:
        terminal.proc.send_signal(signum)
        code = ended(terminal)  # (before: only once Enter was pressed)
        assert code == 128 + signum, terminal.text
        assert "helper@team-tools" not in recorded()
    finally:
        terminal.close()


def test_an_install_said_no_to_leaves_the_one_another_install_recorded_meanwhile(listed: Path):
    """Two installs of one version at once (two terminals, or /plugin in two sessions): the first waits at its
    question with its copy where the version goes, the second (-y) replaces that copy with its own and records it;
    then the first is answered no. Its drop removed the folder the record points to."""
    first = installing(listed)
    try:
        assert plugin("install", "helper@team-tools", "-y", cwd=listed)[0] == 0
        [record] = recorded()["helper@team-tools"]
        first.type("n\n")
        assert ended(first) == 1
        assert (Path(record["installPath"]) / "hooks" / "mark.sh").is_file(), first.text
    finally:
        first.close()
