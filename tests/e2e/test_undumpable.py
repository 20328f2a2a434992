"""A running agentcli is not dumpable: a process of the same user cannot read its memory (where the key is),
its environment or its command line through /proc.

The attacker is a process of the same user, without privileges. As root (CI, containers) both agentcli and
the attacker run as root with no capabilities at all (``setpriv``): root with CAP_SYS_PTRACE reads every
process, and Linux lets a process read another only when it has every capability the other has.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.fakes.anthropic_server import text, tool_use
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux's")

PROBE = """
import sys
pid = sys.argv[1]
for name in ("environ", "cmdline", "mem"):
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            if name == "mem":
                f.seek(int(open(f"/proc/{pid}/maps").read().split("-", 1)[0], 16))
            f.read(64)
        print(name, "read")
    except OSError as exc:
        print(name, type(exc).__name__)
"""


def same_user_without_privilege() -> list[str]:
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no same-user process without CAP_SYS_PTRACE to try it")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all"]


def test_a_same_user_process_cannot_read_a_running_agentcli(server, repo):
    gate, started = repo / "gate", repo / "started"
    os.mkfifo(gate)
    server.script(tool_use("bash", {"command": "touch started; read line < gate"}), text("Done."))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update({"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-undumpable-0123"})
    as_user = same_user_without_privilege()
    proc = subprocess.Popen(
        [
            *as_user,
            sys.executable,
            "-m",
            "agentcli",
            "-p",
            "wait",
            "--permission-mode",
            "bypassPermissions",
            "--mcp-config",
            '{"mcpServers": {}}',
        ],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: started.exists() or proc.poll() is not None, "the bash call starting")
        assert proc.poll() is None, proc.communicate()
        probe = subprocess.run(
            [*as_user, sys.executable, "-c", PROBE, str(proc.pid)], capture_output=True, text=True, timeout=60
        )
        assert probe.returncode == 0, probe.stderr
        # Memory and environment are out of reach; the command line stays readable, as for every process.
        assert probe.stdout.splitlines() == ["environ PermissionError", "cmdline read", "mem PermissionError"]
    finally:
        with open(gate, "w") as f:
            f.write("go\n")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == "Done."
