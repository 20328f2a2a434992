"""`agentcli -p` against a model API that is not there, or says nothing: it fails soon, in one sentence.

The attempts are counted (the Retrying notices on stderr, the connections a server saw); no time is
asserted. The subprocess timeout (60 s) is the guard: today's main took 1 min 52 s for a refused
connection and held a silent server for minutes.
"""

from __future__ import annotations

import socket
from pathlib import Path

from tests.conftest import API_KEY
from tests.core.test_server_silence import MisbehavingServer, silent, slowloris_headers
from tests.e2e.test_headless import agentcli
from tests.waiting import wait_until


def retry_notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Retrying in" in line]


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


def test_nothing_listening_fails_after_one_quick_retry_naming_the_url(repo: Path, isolated_home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    proc = agentcli("-p", "hi", cwd=repo, env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": API_KEY})
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert len(retry_notices(proc.stderr)) <= 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        f"agentcli: Nothing is listening at {url} (connection refused); start the model server there, "
        "or point ANTHROPIC_BASE_URL at one that runs."
    ), proc.stderr


def test_a_server_that_never_answers_fails_after_one_more_try(repo: Path, isolated_home: Path) -> None:
    """Accepted and never answered: first_reply_timeout (1 s here), one retry, one sentence; not api_retries (8)
    tries of stall_timeout (60 s) each, which the subprocess's 60 s would not see the end of."""
    for behaviour in (silent, slowloris_headers):
        server = MisbehavingServer(behaviour)
        try:
            proc = agentcli(
                "-p",
                "hi",
                cwd=repo,
                env={
                    "ANTHROPIC_BASE_URL": server.url,
                    "ANTHROPIC_API_KEY": API_KEY,
                    "AGENTCLI_FIRST_REPLY_TIMEOUT": "1",
                },
            )
            wait_until(lambda: server.connections == 2, "the server seeing the first try and its one retry")
        finally:
            server.close()
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        [notice] = retry_notices(proc.stderr)
        assert notice.endswith("(1/1).") and "sent no reply in 1 s" in notice, proc.stderr
        assert proc.stderr.strip().splitlines()[-1] == (
            f"agentcli: The model API at {server.url} sent no reply in 1 s (first_reply_timeout); check that a model "
            "server runs there, or raise first_reply_timeout for a slow one."
        ), proc.stderr
