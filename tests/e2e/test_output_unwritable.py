"""Standard output that cannot be written (a full disk: /dev/full) gets one sentence on stderr and exit status 1,
never a traceback: for a headless answer in each output format, and for a command that prints a list."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text

FULL = Path("/dev/full")
pytestmark = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")


def run_into_full_disk(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    with FULL.open("w") as out:
        return agentcli(*args, cwd=cwd, env=env, stdout=out)


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_a_headless_answer_into_a_full_disk_says_so(server, api_env, repo, output_format):
    server.script(text("The README describes a tiny demo app."))
    verbose = ["--verbose"] if output_format == "stream-json" else []
    proc = run_into_full_disk(
        "-p", "What does the README say?", "--output-format", output_format, *verbose, cwd=repo, env=api_env
    )
    assert proc.returncode == 1, proc.stderr
    assert "agentcli: cannot write to standard output (No space left on device)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_listing_into_a_full_disk_says_so(repo, api_env):
    proc = run_into_full_disk("sessions", "list", cwd=repo, env=api_env)
    assert proc.returncode == 1
    assert proc.stderr == "agentcli: cannot write to standard output (No space left on device); stopped.\n"
