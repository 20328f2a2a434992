"""A pytest worker's last seconds: its results are in, and a SIGINT may only cut its cleanup short.

When every worker has reported, pytest-xdist closes their gateways, and execnet gives a worker whose main thread
is still busy 5 s before it sends that worker a SIGINT ("execution ongoing after 5 secs, trying interrupt_main").
Ours are busy then on a loaded machine: pytest's own cleanup runs gc.collect five times over a heap of hundreds of
tests, and hypothesis' gc callback runs in each. The SIGINT then raised KeyboardInterrupt inside that callback,
which pytest reported as a PytestUnraisableExceptionWarning with its traceback, printed above "N passed": it
read as a failure (issue 44). No test sends it. So once a worker's session is over, its SIGINT handler only notes
the signal; execnet waits 10 s more, and the controller ends a worker still running then, as it did before.
"""

from __future__ import annotations

import signal
import threading

import pytest

interrupted_at_exit = threading.Event()  # a SIGINT arrived after the session ended (tests/test_worker_exit.py)


def _note(signum: int, frame: object) -> None:
    interrupted_at_exit.set()


@pytest.hookimpl(trylast=True)  # after the session's fixtures are torn down, before the worker reports the end
def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _note)
