"""The Agent SDK's own examples, run unchanged against agentcli: they ship in the SDK's sdist
(``examples/``), downloaded here with pip (the Makefile installs the SDK from that sdist too). The CLI
is found as ``claude`` on PATH, a wrapper that runs agentcli; the endpoint is the stand-in server."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest
from claude_agent_sdk import __version__ as sdk_version

from tests.conftest import user_cache
from tests.fakes.anthropic_server import message_text, text, tool_use


@pytest.fixture(scope="session")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, downloaded once per SDK version and kept in the user's cache (a download is seconds of network)."""
    kept = user_cache() / "agentcli-tests" / f"claude-agent-sdk-{sdk_version}.tar.gz"
    if not kept.is_file():
        where = tmp_path_factory.mktemp("sdk-sdist")
        got = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                              f"claude-agent-sdk=={sdk_version}", "-d", str(where)], capture_output=True, text=True)
        archives = list(where.glob("claude_agent_sdk-*.tar.gz"))
        if got.returncode != 0 or not archives:
            pytest.skip(f"the claude-agent-sdk {sdk_version} sdist could not be downloaded with pip, so its examples "
                        "are not here to run")
        kept.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=kept.parent, delete=False) as part:
            part.write(archives[0].read_bytes())
        os.replace(part.name, kept)  # whole or not at all, whoever else is downloading it
    unpacked = tmp_path_factory.mktemp("sdk-sdist")
    with tarfile.open(kept) as archive:
        archive.extractall(unpacked, filter="data")
    return unpacked / f"claude_agent_sdk-{sdk_version}" / "examples"


def run_example(script: Path, repo: Path, api_env: dict[str, str], tmp_path: Path, *args: str
                ) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentcli "$@"\n')
    claude.chmod(0o755)
    from agentcli.paths import user_config_file

    user_config_file().parent.mkdir(parents=True, exist_ok=True)  # a loaded machine imports the MCP SDK slowly
    user_config_file().write_text("mcp_startup_timeout = 120\n")
    env = {**os.environ, **api_env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([sys.executable, str(script), *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.timeout(900)  # six clients, each starting agentcli and its MCP server: slow on a loaded machine
def test_mcp_calculator_example(examples, server, api_env, repo, tmp_path):
    def asks(words: str):
        return lambda body: any(words in message_text(m) for m in body["messages"][:1])

    server.when(asks("List your tools"), text("I have add, subtract, multiply, divide, sqrt and power."))
    server.when(asks("15 + 27"), tool_use("mcp__calc__add", {"a": 15, "b": 27}), text("15 + 27 = 42"))
    server.when(asks("divided by 7"), tool_use("mcp__calc__divide", {"a": 100, "b": 7}), text("About 14.29"))
    server.when(asks("square root"), tool_use("mcp__calc__sqrt", {"n": 144}), text("12"))
    server.when(asks("power of 8"), tool_use("mcp__calc__power", {"base": 2, "exponent": 8}), text("256"))
    server.when(asks("(12 + 8)"), text("50"))
    proc = run_example(examples / "mcp_calculator.py", repo, api_env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "too old" not in proc.stderr
    results = [r for r in server.requests if r["messages"][-1]["role"] == "user"
               and isinstance(r["messages"][-1]["content"], list)
               and any(b.get("type") == "tool_result" for b in r["messages"][-1]["content"])]
    outputs = [b for r in results for b in r["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert len(outputs) == 4 and not any(b.get("is_error") for b in outputs)
    assert "42" in str(outputs[0]["content"]) and "256" in str(outputs[3]["content"])
    server.assert_no_rejections()
