"""A second ACP client nobody here wrote: acpx (npm), installed by `make test` from tests/acpx/, runs a prompt
through `agentcli acp` against the stand-in API and prints the answer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import text, tool_use

ACPX = Path(__file__).resolve().parents[1] / "acpx" / "node_modules" / ".bin" / "acpx"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not ACPX.exists(),
    reason="acpx is not installed: it needs Node and npm, and `make test` (make acpx) installs it from tests/acpx/",
)


def acpx(repo: Path, api_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(api_env)
    return subprocess.run(
        [str(ACPX), "--agent", f"{sys.executable} -m agentcli acp", "--cwd", str(repo), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=repo,
    )


def test_acpx_runs_a_prompt_through_agentcli_acp(server, api_env, repo):
    server.script(tool_use("grep", {"pattern": "def handle_auth"}), text("handle_auth is in src/app/auth.py."))
    proc = acpx(repo, api_env, "--format", "quiet", "--approve-all", "exec", "Where is handle_auth?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "handle_auth is in src/app/auth.py."
    assert server.requests[-1]["messages"][0]["content"][-1]["text"].endswith("Where is handle_auth?")
