"""A server (or a proxy in front of it) that echoes the API key in its error text: agentcli prints and stores
the error with the key replaced by ***, in every output format and in the session file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import Reply, error, raw

KEY = "sk-ant-echoed-4f9a1c7e2b6d8035"
BASIC_PASSWORD = "proxy-pass-93b1e7"


def echoing(case: str) -> list[Reply]:
    if case == "401":
        return [error(401, "authentication_error", f"invalid x-api-key: {KEY}")]
    if case == "400":
        return [error(400, "invalid_request_error", f"bad request from key {KEY} (password {BASIC_PASSWORD})")]
    if case == "502 html":
        page = f"<html><body><h1>502 Bad Gateway</h1><pre>upstream said: x-api-key={KEY}</pre></body></html>"
        return [raw(page, status=502)] * 10  # retried as the 500 is
    # 500, and again after each retry
    return [error(500, "api_error", f"internal error handling {KEY}", headers={"retry-after": "0"})] * 10


def stored_text(home: Path) -> str:
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in files), "no session file was written, so this proves nothing"
    return "\n".join(p.read_text(errors="replace") for p in files)


@pytest.mark.parametrize("output_format", ["text", "json"])
@pytest.mark.parametrize("case", ["401", "400", "502 html", "500 after retries"])
def test_an_error_that_echoes_the_key_is_shown_and_stored_without_it(server, repo, isolated_home, case, output_format):
    server.script(*echoing(case))
    base_url = server.base_url.replace("://", f"://agent:{BASIC_PASSWORD}@")
    proc = agentcli(
        "-p",
        "hello",
        "--output-format",
        output_format,
        cwd=repo,
        env={"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": KEY, "AGENTCLI_API_RETRIES": "2"},
    )
    assert proc.returncode != 0
    shown = proc.stdout + proc.stderr
    assert "***" in shown, shown  # the error itself is there, with the key hidden
    assert KEY not in shown and BASIC_PASSWORD not in shown
    if output_format == "json":
        assert "***" in json.loads(proc.stdout)["result"]
    stored = stored_text(isolated_home)
    assert KEY not in stored and BASIC_PASSWORD not in stored
    if case in ("500 after retries", "502 html"):  # each retry was stored, with the server's words
        assert len(server.requests) > 1
        assert '"type": "retrying"' in stored and "***" in stored
