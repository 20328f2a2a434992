"""system/worker.py: work on hostile input in a process of its own ends with its caller. A cancelled call
(the user's interrupt) kills the process at once, and a failure inside it is a WorkerError naming it."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.core.system.worker import WorkerError, run_in_worker
from tests.core.test_web_fetch_attacks import workers
from tests.waiting import until

SLOW_HTML = "<table>" + "<tr><td>a<br>b<br>c</td></tr>" * 30_000 + "</table>"  # a minute or more of the converter


async def test_a_cancelled_call_kills_its_worker():
    call = asyncio.ensure_future(run_in_worker("agentcli.core.tools.web:html_to_markdown", SLOW_HTML, 600))
    await until(lambda: workers(), "the worker to start")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await until(lambda: not workers(), "the worker to be gone", detail=lambda: str(workers()))


async def test_a_failure_in_the_worker_is_one_worker_error():
    with pytest.raises(WorkerError, match="TypeError"):
        await run_in_worker("agentcli.core.tools.web:html_to_markdown", 7, 60)  # not a string of HTML
    with pytest.raises(WorkerError, match="is not agentcli's"):
        await run_in_worker("os:system", "true", 60)
