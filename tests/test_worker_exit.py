"""A pytest worker still cleaning up 5 s after the run gets execnet's SIGINT (tests/worker_exit.py): it must
neither raise KeyboardInterrupt in the cleanup nor print a traceback into `make test`'s output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SLOW_EXIT = """
import gc
import time

import hypothesis  # noqa: F401  (its gc callback runs in every collection, as in the suite)

from tests.worker_exit import interrupted_at_exit, pytest_sessionfinish  # noqa: F401


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        return
    heap = [[n] for n in range(200000)]
    deadline = time.monotonic() + 60  # against a hang: the signal comes about 5 s after the run
    try:
        while not interrupted_at_exit.is_set() and time.monotonic() < deadline:
            gc.collect()
    except BaseException as exc:
        open("outcome", "w").write(repr(exc))
        raise
    open("outcome", "w").write("noted" if interrupted_at_exit.is_set() else "no signal")
    del heap
"""


def test_execnets_sigint_at_a_workers_end_is_noted_not_raised(tmp_path):
    (tmp_path / "conftest.py").write_text(SLOW_EXIT)
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "1",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "test_one.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,  # against a hang only: at load 20 the nested run, its worker and its 60 s loop outlasted 110 s
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "1 passed" in output, output
    assert (tmp_path / "outcome").read_text() == "noted", output
    assert "KeyboardInterrupt" not in output and "Unraisable" not in output, output
