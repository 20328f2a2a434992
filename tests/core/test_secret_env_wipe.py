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
print("ctypes loaded:", "ctypes" in sys.modules)
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
    assert "ctypes loaded: False" in out  # written through /proc/self/mem: no ctypes import on every start


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the in-place wipe is for Linux's /proc")
def test_where_proc_self_mem_cannot_be_written_ctypes_wipes_the_block():
    patch = (
        "import builtins\n"
        "def refusing(path, *args, **kwargs):\n"
        "    if path == '/proc/self/mem':\n"
        "        raise PermissionError(13, 'refused', path)\n"
        "    return builtins.open(path, *args, **kwargs)\n"
        "secret_env.open = refusing"
    )
    out, key, token = run(patch)
    assert out.count("program began in ") == 1, f"the process restarted instead of wiping its block:\n{out}"
    assert "PATH=" in out and key not in out and token not in out
    assert "ctypes loaded: True" in out


def test_where_the_block_cannot_be_wiped_the_process_restarts_without_the_secrets():
    out, key, token = run("secret_env.wiped_in_place = lambda: False")
    assert out.count("program began in ") == 2, f"no restart:\n{out}"
    assert "PATH=" in out and "AGENTCLI_SECRETS_FD=" in out  # the restarted image's environment was read
    assert key not in out and token not in out
    assert "held ANTHROPIC_API_KEY GITHUB_TOKEN environ\n" in out
