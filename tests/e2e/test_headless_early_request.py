"""`-p` sends its first request without waiting for the SDK import (core/early_request.py): the
request carries the SDK's headers, the reply is printed, and a tool-using run goes on (early while
the SDK still imports, with the SDK after)."""

from __future__ import annotations

import json

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import FakeAnthropic, text, tool_use

PLATFORM_HEADER = "x-stainless-os"  # only the SDK's own client sends its platform details


def test_the_first_request_goes_out_before_the_sdk(server: FakeAnthropic, api_env, repo,
                                                                          isolated_home) -> None:
    server.script(tool_use("read_file", {"path": "README.md"}), text("It is a small project."))
    proc = agentcli("-p", "what is this?", "--output-format", "stream-json", "--verbose", cwd=repo, env=api_env)
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
    assert proc.stderr.strip().splitlines()[-1].startswith("agentcli: The API key was rejected (401): invalid x-api-key")
    assert PLATFORM_HEADER not in server.request_headers[0]
