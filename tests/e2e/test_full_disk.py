"""agentcli on a disk that is really full: a tiny tmpfs holds the data folder (bubblewrap mounts it, so the
test needs no privileges of its own and skips where bwrap cannot run). The answer still comes, the warning
says what failed, and nothing pretends otherwise: no empty session file, no "no message was sent", and `-p`
exits non-zero."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.test_sandbox import needs_bwrap
from tests.fakes.anthropic_server import text

pytestmark = needs_bwrap

SCRIPT = """
cat /dev/zero > "$AGENTCLI_HOME/filler" 2>/dev/null
"$@" -p "hello" > "$OUT/p.out" 2> "$OUT/p.err"; echo $? > "$OUT/p.rc"
printf 'hello again\\n' | "$@" --plain > "$OUT/plain.out" 2>&1
"$@" sessions list > "$OUT/list.out" 2>&1
ls -A "$AGENTCLI_HOME/projects"/* > "$OUT/files.out" 2>&1
"""


def test_a_full_disk_is_said_truly(server, api_env, repo, isolated_home, tmp_path: Path):
    server.script(text("The answer."), text("Another answer."))
    out = tmp_path / "out"
    out.mkdir()
    isolated_home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env | {"OUT": str(out)}
    bwrap = shutil.which("bwrap")
    assert bwrap
    done = subprocess.run(
        [
            bwrap,
            "--dev-bind",
            "/",
            "/",
            "--size",
            "65536",
            "--tmpfs",
            str(isolated_home),
            "sh",
            "-c",
            SCRIPT,
            "sh",
            sys.executable,
            "-m",
            "agentcli",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )
    if not (out / "p.rc").exists():
        pytest.skip(f"bwrap could not mount a small tmpfs here: {done.stderr.strip()}")
    said = {name: (out / name).read_text() for name in ("p.out", "p.err", "p.rc", "plain.out", "list.out", "files.out")}
    assert said["p.out"] == "The answer.\n"
    [warning] = said["p.err"].splitlines()
    assert "no space left on device" in warning and warning.endswith("will not be saved.")
    assert said["p.rc"].strip() == "1"
    assert "Another answer." in said["plain.out"]
    assert "Nothing was saved: writing the session failed (no space left on device)." in said["plain.out"]
    assert "no message was sent" not in said["plain.out"]
    assert "No sessions in this workspace yet." in said["list.out"]
    assert ".jsonl" not in said["files.out"]
