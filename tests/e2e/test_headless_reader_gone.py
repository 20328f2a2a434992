"""`agentcli -p … | head -1`: a reader that goes away always gives exit 141 and nothing on stderr.

The real command runs with its standard output a pipe that the test closes after the first line, while
the reply is held back (the stand-in's gate), so every later write finds the reader gone. Today's main
printed a CancelledError traceback and exited 1 when that write came after the turn's last pause (the
cancel it asked for then landed in closing the session)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import text, tool_use
from tests.waiting import DEADLINE


def run_with_reader_gone(repo: Path, env: dict[str, str], *args: str, gate: threading.Event) -> tuple[int, str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | env
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", *args],
        cwd=repo,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()  # the first line (the init message), then the reader goes away
        proc.stdout.close()
        gate.set()
        _, stderr = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, stderr.decode(errors="replace")


@pytest.mark.parametrize("output_format", ["stream-json", "events"])
def test_a_reader_gone_mid_run_is_exit_141_and_silence_every_time(server, api_env, repo, output_format):
    for attempt in range(10):
        gate = threading.Event()
        server.reset()
        server.script(text("The answer, held back until the reader has gone.").with_options(gate=gate))
        verbose = ["--verbose"] if output_format == "stream-json" else []
        code, stderr = run_with_reader_gone(
            repo, api_env, "-p", "hi", "--output-format", output_format, *verbose, gate=gate
        )
        assert (code, stderr) == (141, ""), f"run {attempt + 1}: exit {code}\n{stderr}"


def test_a_reader_gone_while_tools_run_is_exit_141_and_silence(server, api_env, repo):
    for attempt in range(5):
        gate = threading.Event()
        server.reset()
        server.script(tool_use("read_file", {"path": "README.md"}).with_options(gate=gate), text("Read it."))
        code, stderr = run_with_reader_gone(
            repo, api_env, "-p", "read it", "--output-format", "stream-json", "--verbose", gate=gate
        )
        assert (code, stderr) == (141, ""), f"run {attempt + 1}: exit {code}\n{stderr}"
