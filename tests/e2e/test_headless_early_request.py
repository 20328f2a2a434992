"""`-p` sends its first request without waiting for the SDK import (core/model/early_request.py): the
request carries the SDK's headers, the reply is printed, and a tool-using run goes on (early while
the SDK still imports, with the SDK after)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.conftest import API_KEY
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text, tool_use
from tests.waiting import wait_until

# Loaded by the agentcli process (PYTHONPATH): `import anthropic` waits until the gate, a FIFO, is
# opened for writing, which the stand-in server does when the first request arrives. So the request
# must have gone out while the SDK was still importing, however fast or slow the machine is.
SITECUSTOMIZE = """
import os, sys
from importlib.machinery import PathFinder

class Gate:  # waits in the module's execution: a finder runs under the global import lock
    def find_spec(self, name, path=None, target=None):
        if name != "anthropic":
            return None
        sys.meta_path.remove(self)
        spec = PathFinder.find_spec(name, path)
        execute = spec.loader.exec_module

        def exec_module(module):
            with open(os.environ["AGENTCLI_TEST_SDK_GATE"]):
                pass
            execute(module)

        spec.loader.exec_module = exec_module
        return spec

if os.environ.get("AGENTCLI_TEST_SDK_GATE"):
    sys.meta_path.insert(0, Gate())
"""

PLATFORM_HEADER = "x-stainless-os"  # only the SDK's own client sends its platform details


def open_for_writing(fifo: Path) -> int | None:
    """A descriptor once a reader has the FIFO open, else None."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENXIO: no reader yet
        return None


def test_the_first_request_goes_out_before_the_sdk(tmp_path: Path, repo: Path, isolated_home: Path) -> None:
    gate = tmp_path / "sdk-gate"
    os.mkfifo(gate)
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    replies = [tool_use("read_file", {"path": "README.md"}), text("It is a small project.")]

    def respond(body: dict[str, Any]) -> Reply:
        if len(replies) == 2:  # the first request is here: let the SDK import go on
            fd = wait_until(lambda: open_for_writing(gate), "the SDK import waiting at the gate")
            assert fd is not None
            os.close(fd)
        return replies.pop(0)

    with FakeAnthropic(responder=respond) as server:
        env = {
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": API_KEY,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
            "AGENTCLI_TEST_SDK_GATE": str(gate),
        }
        proc = agentcli("-p", "what is this?", "--output-format", "stream-json", "--verbose", cwd=repo, env=env)
    assert proc.returncode == 0, proc.stderr
    result = [json.loads(line) for line in proc.stdout.splitlines()][-1]
    assert result["type"] == "result" and result["result"] == "It is a small project."
    first, second = server.request_headers
    assert PLATFORM_HEADER not in first, "the first request waited for the SDK"
    for name in ("authorization", "anthropic-version", "content-type", "user-agent"):
        assert first[name] == second[name], name
    server.assert_no_rejections()


def test_an_error_on_the_first_request_is_one_sentence(server: FakeAnthropic, api_env, repo, isolated_home) -> None:
    from tests.fakes.anthropic_server import error

    server.script(error(401, "authentication_error", "invalid x-api-key"))
    proc = agentcli("-p", "hi", cwd=repo, env=api_env)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (
        proc.stderr.strip().splitlines()[-1].startswith("agentcli: The API key was rejected (401): invalid x-api-key")
    )
    assert PLATFORM_HEADER not in server.request_headers[0]
