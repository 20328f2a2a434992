"""The guard of tests/model_clients.py: a test that leaves a model client open fails itself (not a later test),
and one that closes it through the ``closing`` fixture passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """
from tests.model_clients import closing, model_clients_closed  # noqa: F401
"""

TESTS = """
from agentcli.core.model.llm import LLM, Credentials

CREDENTIALS = Credentials(api_key="sk-ant-test", base_url="http://127.0.0.1:9")


async def test_leaves_it_open():
    LLM(credentials=CREDENTIALS).client()


async def test_closes_it(closing):
    closing(LLM(credentials=CREDENTIALS)).client()


async def test_never_opens_one():
    LLM(credentials=CREDENTIALS)
"""


def test_a_test_that_leaves_a_model_client_open_fails_and_one_that_closes_it_passes(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_clients.py").write_text(TESTS)
    # Only the plugin these tests need (pytest-asyncio): hypothesis, xdist and the rest cost a tenth of the run's CPU
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "asyncio",
            "-p",
            "no:cacheprovider",
            "-rE",
            "-o",
            "asyncio_mode=auto",
            "--rootdir",
            str(tmp_path),
            "test_clients.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=110,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    output = proc.stdout + proc.stderr
    assert "3 passed, 1 error" in output, output  # the error: the leaving test's teardown
    assert "ERROR test_clients.py::test_leaves_it_open - Failed: 1 model client(s)" in output, output
