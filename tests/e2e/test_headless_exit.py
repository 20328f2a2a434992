"""`agentcli -p` leaves as soon as the answer is out: what must survive the quick exit does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentcli.core.storage.store import read_records
from tests.fakes.anthropic_server import Reply, text, tool_use
from tests.waiting import wait_until


def run(repo: Path, api_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_the_session_file_is_complete_and_background_shells_are_stopped(server, api_env, repo, isolated_home):
    server.script(tool_use("bash", {"command": "echo $$ > shell.pid; exec sleep 600", "run_in_background": True}))
    pid_file = repo / "shell.pid"

    def answer_once_it_runs(body: dict[str, Any]) -> Reply:
        # the answer ends the run, which stops the shell: on a loaded machine that had come before its echo
        wait_until(lambda: pid_file.exists() and pid_file.read_text().endswith("\n"), "the shell writing its pid")
        return text("Started it; done.")

    server.responder = answer_once_it_runs
    # Without the sandbox: in its PID namespace $$ is not the host's pid this test watches.
    proc = run(
        repo,
        {**api_env, "AGENTCLI_SANDBOX": "off"},
        "-p",
        "start a server",
        "--permission-mode",
        "bypassPermissions",
        "--output-format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["result"], out["is_error"]) == ("Started it; done.", False)
    [path] = [p for p in isolated_home.rglob(f"{out['session_id']}.jsonl")]
    records, warnings = read_records(path)
    assert warnings == []
    assert "Started it; done." in json.dumps(records[-2:])  # the answer and the turn's end made it to disk
    assert (records[-1]["type"], records[-1]["stop_reason"]) == ("turn_finished", "end_turn")
    pid = int(pid_file.read_text())
    wait_until(lambda: not alive(pid), "the background shell ending with agentcli -p")


def test_exit_codes_stay_as_they_were(server, api_env, repo):
    server.script(text("All good."))
    proc = run(repo, api_env, "-p", "hi")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All good.\n", "")
    server.script(tool_use("bash", {"command": "true"}), text("never asked for"))
    capped = run(repo, api_env, "-p", "hi", "--max-turns", "1", "--permission-mode", "bypassPermissions")
    assert capped.returncode == 1 and "stopped after --max-turns 1 turn" in capped.stderr
    assert "1 turns" not in capped.stderr


def test_leaving_does_not_wait_for_the_event_loops_worker_threads(tmp_path):
    # asyncio.run's teardown joins the default executor's threads; a run that leaves from inside its loop does
    # not wait for a worker still busy (here for 10 minutes), and still runs the exit hooks and flushes.
    script = (
        "import asyncio, atexit, time\nfrom agentcli.leaving import leaving_after\n"
        "atexit.register(lambda: print('hooks ran'))\n"
        "async def main():\n"
        "    asyncio.get_running_loop().run_in_executor(None, time.sleep, 600)\n"
        "    print('answered', end=' ')\n"
        "    return 3\n"
        "asyncio.run(leaving_after(main()))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "answered hooks ran\n", "")
