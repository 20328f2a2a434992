"""The secrets are wiped from the environment block the process started with, in place (Linux), and
the restart is the fallback: each test starts a real interpreter with a key and has a child process
read its parent's /proc/<pid>/environ, as an attacker running under agentcli would."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# Prints a line when it starts (twice if the process restarted), then what a child reads of its parent.
PROGRAM = """
import os, subprocess, sys
print("program began in", os.getpid(), flush=True)
from agentcli.core.system import secret_env
{patch}
secret_env.start_without_secrets()
seen = subprocess.run(["sh", "-c", "cat /proc/$PPID/environ"], capture_output=True).stdout
sys.stdout.write(seen.decode(errors="replace").replace("\\0", "\\n"))
print("held", *sorted(secret_env.held()), "environ", *sorted(k for k in os.environ if "KEY" in k or "TOKEN" in k))
"""


def run(patch: str = "") -> tuple[str, str, str]:
    key, token = f"sk-ant-{secrets.token_hex(12)}", f"ghp_{secrets.token_hex(12)}"
    env = {k: v for k, v in os.environ.items() if not any(m in k.upper() for m in ("KEY", "TOKEN", "SECRET"))}
    env.update(ANTHROPIC_API_KEY=key, GITHUB_TOKEN=token, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(patch=patch)], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, key, token


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the in-place wipe is for Linux's /proc")
def test_a_child_reading_proc_environ_finds_no_secret_and_the_process_never_restarted():
    out, key, token = run()
    assert out.count("program began in ") == 1, f"the process restarted instead of wiping its block:\n{out}"
    assert "PATH=" in out  # the child did read its parent's environment
    assert key not in out and token not in out
    assert "AGENTCLI_SECRETS_FD" not in out
    assert "held ANTHROPIC_API_KEY GITHUB_TOKEN environ\n" in out  # in memory only


def test_where_the_block_cannot_be_wiped_the_process_restarts_without_the_secrets():
    out, key, token = run("secret_env.wiped_in_place = lambda: False")
    assert out.count("program began in ") == 2, f"no restart:\n{out}"
    assert "PATH=" in out and "AGENTCLI_SECRETS_FD=" in out  # the restarted image's environment was read
    assert key not in out and token not in out
    assert "held ANTHROPIC_API_KEY GITHUB_TOKEN environ\n" in out
