"""The README's way in: `make install` into a prefix, then `agentcli`; and `agentcli --demo`, which
needs no key and no network, and none of tests/ (an installed package has no tests/)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.config import Settings
from agentcli.core.llm import LLM, Credentials
from agentcli.demo import PROMPT
from agentcli.demo.app import make_demo_app
from agentcli.demo.sample import write_sample
from agentcli.demo.server import DemoServer
from agentcli.ui.tui.screens.transcript import TranscriptScreen
from tests.ui.test_tui_support import SIZE, until

REPO = Path(__file__).resolve().parents[2]
# Runs agentcli's entry point with tests/ unimportable, as from an installed package.
WITHOUT_TESTS = "import sys; sys.modules['tests'] = None; from agentcli.__main__ import main; main()"


@pytest.mark.timeout(900)  # pip installs every dependency into a fresh environment
def test_make_install_puts_a_working_agentcli_in_the_prefix(tmp_path):
    prefix = tmp_path / "prefix"
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(["make", "-C", str(REPO), "install", f"PREFIX={prefix}"], env=env, capture_output=True,
                          text=True, timeout=840)
    assert done.returncode == 0, done.stdout + done.stderr
    command = prefix / "bin" / "agentcli"
    version = subprocess.run([str(command), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("agentcli "), version.stderr
    # the installed package is the one in the prefix, not this clone
    where = subprocess.run([str(prefix / "share" / "agentcli" / "venv" / "bin" / "python"), "-c",
                            "import agentcli, agentcli.demo.server; print(agentcli.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert where.returncode == 0 and str(prefix) in where.stdout, where.stderr


def test_demo_answers_headless_without_a_key_and_without_tests(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_"))}
    env["ANTHROPIC_API_KEY"] = "sk-ant-the-users-real-key"  # the demo never needs nor sends it
    done = subprocess.run([sys.executable, "-c", WITHOUT_TESTS, "--demo", "-p", PROMPT, "--output-format", "json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "login is handled in shop/auth.py" in result["result"]
    [child] = result["subagents"]
    assert child["status"] == "done"
    assert list(tmp_path.iterdir()) == []  # nothing left behind where it was started


def test_the_demo_s_line_mode_does_not_offer_to_resume_a_session_it_removes(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_"))}
    done = subprocess.run([sys.executable, "-c", WITHOUT_TESTS, "--demo", "--plain"], input="hello\n", cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--continue" not in done.stdout and "is saved" not in done.stdout
    assert "The demo's session goes with its temporary folder, so there is nothing to resume" in done.stdout


async def test_demo_app_delegates_shows_the_panel_and_opens_the_transcript(tmp_path):
    root = write_sample(tmp_path / "tiny-shop")
    with DemoServer(pace=0) as server:
        llm = LLM(model="demo", credentials=Credentials(api_key="demo", base_url=server.base_url))
        app = make_demo_app(Settings(model="demo"), root, llm=llm, testing=True)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript to open")
            assert app.panel.is_open and [s.status for s in app.subagents.values()] == ["done"]
            assert "login is handled in shop/auth.py" in app.session.main.last_text()
            await app.session.aclose()
