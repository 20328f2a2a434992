"""SIGTERM and SIGHUP to `agentcli -p` while bash runs: nothing keeps running, the session file is complete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Literal

import pytest

from tests.fakes.anthropic_server import text, tool_use
from tests.waiting import wait_until

DEADLINE = 60.0  # seconds: generous, for a loaded machine


def processes_running(argv: list[str]) -> list[int]:
    """Live processes whose command line is exactly ``argv`` (zombies do not count)."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        if cmdline == wanted and stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X"):
            found.append(int(name))
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_signal_stops_bash_and_writes_the_last_records(server, api_env, repo, isolated_home, signum):
    seconds = f"88{signum:02d}"  # its own number per case, so cases cannot see each other's sleep
    server.script(tool_use("bash", {"command": f"sleep {seconds}"}), text("never reached"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentcli",
            "-p",
            "wait",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
        ],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(
            lambda: processes_running(["sleep", seconds]) or proc.poll() is not None, f"bash starting `sleep {seconds}`"
        )
        assert proc.poll() is None, proc.communicate()[1]
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err
    assert (json.loads(out)["subtype"], json.loads(out)["terminal_reason"]) == ("error_during_execution", "interrupted")
    wait_until(lambda: not processes_running(["sleep", seconds]), f"`sleep {seconds}` ending")

    [session_file] = [f for f in isolated_home.rglob("*.jsonl") if f.parent.name != "outputs"]
    records = [json.loads(line) for line in session_file.read_text().splitlines()]
    [started] = [r for r in records if r["type"] == "tool_call_started"]
    [finished] = [r for r in records if r["type"] == "tool_call_finished"]
    assert finished["id"] == started["id"] and finished["is_error"] and "Interrupted" in finished["output"]
    results = [
        b for r in records if r["type"] == "user_message" for b in r["content"] if b.get("type") == "tool_result"
    ]
    assert [b["tool_use_id"] for b in results] == [started["id"]]


@pytest.mark.parametrize("front_end", [[], ["--plain"]])
def test_sigterm_in_the_interactive_front_ends(server, api_env, repo, isolated_home, front_end):
    """The TUI and line mode on a real terminal (a pty): SIGTERM while bash runs stops it and exits 143."""
    import pty

    seconds = "8830" if not front_end else "8831"
    server.script(tool_use("bash", {"command": f"sleep {seconds}"}), text("never reached"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env | {"TERM": "xterm"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", *front_end, "--permission-mode", "bypassPermissions"],
        cwd=repo,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    drained = bytearray()

    def drain() -> Literal[False]:  # keep the terminal's buffer from filling up (False: a wait reads `drain() or x`)
        import select

        while select.select([leader], [], [], 0)[0]:
            try:
                drained.extend(os.read(leader, 65536))
            except OSError:
                return False
        return False

    try:
        sent = [0.0]

        def sleep_started() -> bool:
            assert proc.poll() is None, bytes(drained[-3000:])
            drain()
            if time.monotonic() - sent[0] > 5:  # type the prompt again until the app takes it: it may still be starting
                os.write(leader, b"wait a while\r")
                sent[0] = time.monotonic()
            return bool(processes_running(["sleep", seconds]))

        wait_until(sleep_started, f"bash starting `sleep {seconds}`", detail=lambda: repr(bytes(drained[-3000:])))
        proc.send_signal(signal.SIGTERM)
        wait_until(lambda: drain() or proc.poll() is not None, "agentcli exiting after SIGTERM")
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    assert proc.returncode == 143, bytes(drained[-3000:])
    wait_until(lambda: not processes_running(["sleep", seconds]), f"`sleep {seconds}` ending")


def session_is_whole(isolated_home: Path) -> None:
    """The session file ends with the cancelled bash call's result: every call started has its result."""
    [session_file] = [f for f in isolated_home.rglob("*.jsonl") if f.parent.name != "outputs"]
    records = [json.loads(line) for line in session_file.read_text().splitlines()]
    [started] = [r for r in records if r["type"] == "tool_call_started"]
    [finished] = [r for r in records if r["type"] == "tool_call_finished"]
    assert finished["id"] == started["id"] and finished["is_error"] and "Interrupted" in finished["output"]
    results = [
        b for r in records if r["type"] == "user_message" for b in r["content"] if b.get("type") == "tool_result"
    ]
    assert [b["tool_use_id"] for b in results] == [started["id"]]


def take_terminal() -> None:
    """In the child: make the pty on stdin its controlling terminal, so closing the other end hangs it up."""
    import fcntl
    import termios

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.mark.parametrize("front_end", [["-p", "wait"], ["--plain"], []], ids=["headless", "plain", "tui"])
def test_the_terminal_hanging_up_while_bash_runs(server, api_env, repo, isolated_home, front_end):
    """The terminal closes (SIGHUP, and every read and write on it fails): the bash call is stopped, the
    session file is whole, and agentcli exits 129 (it exited 1, or hung for ever in the TUI)."""
    import pty
    import select

    seconds = {"-p": "8850", "--plain": "8851"}.get(front_end[0] if front_end else "", "8852")
    server.script(tool_use("bash", {"command": f"sleep {seconds}"}), text("never reached"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env | {"TERM": "xterm"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", *front_end, "--permission-mode", "bypassPermissions"],
        cwd=repo,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
        preexec_fn=take_terminal,
    )
    os.close(follower)
    drained = bytearray()
    try:
        sent = [0.0]

        def sleep_started() -> bool:
            assert proc.poll() is None, bytes(drained[-3000:])
            while select.select([leader], [], [], 0)[0]:
                try:
                    drained.extend(os.read(leader, 65536))
                except OSError:
                    break
            if front_end[:1] != ["-p"] and time.monotonic() - sent[0] > 5:  # until the app takes the prompt
                os.write(leader, b"wait a while\r")
                sent[0] = time.monotonic()
            return bool(processes_running(["sleep", seconds]))

        wait_until(sleep_started, f"bash starting `sleep {seconds}`", detail=lambda: repr(bytes(drained[-3000:])))
        os.close(leader)  # the terminal hangs up
        leader = -1
        wait_until(lambda: proc.poll() is not None, "agentcli exiting after its terminal hung up")
    finally:
        if proc.poll() is None:
            proc.kill()
        if leader >= 0:
            os.close(leader)
    assert proc.returncode == 129
    wait_until(lambda: not processes_running(["sleep", seconds]), f"`sleep {seconds}` ending")
    session_is_whole(isolated_home)


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_sigkill_of_agentcli_leaves_no_command_running(server, api_env, repo, isolated_home, sandbox):
    """No handler runs on SIGKILL: the kernel ends the command (bwrap --die-with-parent in the sandbox,
    PR_SET_PDEATHSIG without it)."""
    seconds = "8860" if sandbox == "auto" else "8861"
    server.script(tool_use("bash", {"command": f"sleep {seconds}"}), text("never reached"))
    env = (
        {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        | api_env
        | {"AGENTCLI_SANDBOX": sandbox}
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "-p", "wait", "--permission-mode", "bypassPermissions"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            lambda: processes_running(["sleep", seconds]) or proc.poll() is not None, f"bash starting `sleep {seconds}`"
        )
        assert proc.poll() is None
        proc.kill()
        proc.wait(timeout=DEADLINE)
        wait_until(lambda: not processes_running(["sleep", seconds]), f"`sleep {seconds}` ending with agentcli")
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in processes_running(["sleep", seconds]):
            os.kill(pid, signal.SIGKILL)
