"""The bash tool with real bash: exit codes, stdin, environment, output caps, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.secret_env import command_env
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.shell import Bash
from tests.cancel_at_start import cancel_as_popen_returns
from tests.conftest import TOOLS, tool_settings
from tests.waiting import until


def make_ctx(root: Path, **kw) -> ToolContext:
    return ToolContext(
        workspace=Workspace.at(root), emit=lambda e: None, permissions=Permissions(), **{"settings": TOOLS, **kw}
    )


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return make_ctx(tmp_path)


async def bash(ctx: ToolContext, command: str, **args) -> str:
    return await Bash().run({"command": command, **args}, ctx)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie nobody has reaped yet counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


async def gone(pid: int) -> bool:
    await until(lambda: not alive(pid), f"process {pid} to end")
    return True


async def read_pid(path: Path) -> int:
    return int(await until(lambda: path.exists() and path.read_text().strip(), f"{path} to be written"))


async def test_output_and_cwd(ctx, tmp_path):
    assert await bash(ctx, "pwd") == str(tmp_path.resolve())
    assert await bash(ctx, "echo out; echo err >&2") == "out\nerr"


async def test_no_output(ctx):
    assert await bash(ctx, "true") == "(no output)"


async def test_nonzero_exit_is_an_error_with_output_and_code(ctx):
    with pytest.raises(ToolError) as info:
        await bash(ctx, "echo partial; echo oops >&2; exit 3")
    text = str(info.value)
    assert "exit code 3" in text and "partial" in text and "oops" in text


async def test_stdin_is_closed(ctx):
    assert await bash(ctx, "cat") == "(no output)"
    assert await bash(ctx, "read -r line; echo rc=$?") == "rc=1"


async def test_secret_env_is_scrubbed(ctx, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_API_KEY", "k1")
    monkeypatch.setenv("GITHUB_TOKEN", "t1")
    monkeypatch.setenv("aws_secret_access_key", "s1")
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    out = await bash(ctx, "env")
    assert "PLAIN_SETTING=visible" in out
    for leaked in ("k1", "t1", "s1"):
        assert f"={leaked}" not in out
    kept = await bash(
        make_ctx(tmp_path, settings=tool_settings(keep_secret_env=True)), "echo $MY_API_KEY $GITHUB_TOKEN"
    )
    assert kept == "k1 t1"


def test_command_env_function():
    env = command_env(base={"PATH": "/bin", "OPENAI_API_KEY": "x", "Session_Token": "y", "HOME": "/h"})
    assert env["PATH"] == "/bin" and env["HOME"] == "/h"
    assert "OPENAI_API_KEY" not in env and "Session_Token" not in env
    assert "OPENAI_API_KEY" in command_env(keep_secrets=True, base={"OPENAI_API_KEY": "x"})


async def test_huge_output_keeps_head_and_tail(ctx):
    out = await bash(ctx, "seq 1 300000")
    assert out.startswith("1\n2\n3\n")
    assert out.endswith("299999\n300000")
    assert "characters" in out and "cut" in out
    assert len(out) < 30_000


async def test_huge_failing_output_keeps_status(ctx):
    with pytest.raises(ToolError) as info:
        await bash(ctx, "seq 1 300000; exit 2")
    text = str(info.value)
    assert "exit code 2" in text and "300000" in text and "cut" in text
    assert len(text) < 30_000


async def test_full_output_saved_when_cut(tmp_path):
    out_dir = tmp_path / "outputs"
    ctx = make_ctx(tmp_path, output_dir=out_dir, tool_use_id="toolu_01")
    out = await bash(ctx, "seq 1 100000")
    saved = out_dir / "bash-toolu_01.txt"
    assert str(saved) in out
    assert saved.read_text() == "".join(f"{i}\n" for i in range(1, 100001))


async def test_timeout_kills_grandchild(ctx, tmp_path):
    with pytest.raises(ToolError) as info:
        await bash(ctx, "echo started; sleep 300 & echo $! > pid; sleep 300", timeout=5)  # room for a busy machine
    text = str(info.value)
    assert "killed after 5 s" in text and "started" in text
    assert await gone(int((tmp_path / "pid").read_text()))


async def test_background_job_holding_output_does_not_hang(ctx, tmp_path):
    out = await bash(ctx, "sleep 300 & echo $! > pid; echo done")
    assert out.startswith("done")
    assert "Stopped 1 process the command left running" in out and "run_in_background" in out
    assert await gone(int((tmp_path / "pid").read_text()))


async def test_background_job_with_redirected_output_is_stopped_too(ctx, tmp_path):
    """Nothing a call starts outlives it (issue 13): servers belong in run_in_background."""
    out = await bash(ctx, "sleep 300 > /dev/null 2>&1 & echo $! > pid; echo started")
    assert out.startswith("started\n[Stopped 1 process")
    assert await gone(int((tmp_path / "pid").read_text()))


async def test_cancellation_kills_process_group(ctx, tmp_path):
    task = asyncio.create_task(bash(ctx, "echo $$ > leader; sleep 300 & echo $! > child; sleep 300"))
    leader = await read_pid(tmp_path / "leader")
    child = await read_pid(tmp_path / "child")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(leader)
    assert await gone(child)


async def test_cancelled_while_asyncio_still_starts_bash(ctx, tmp_path, monkeypatch):
    """A cancellation can land inside asyncio's create_subprocess_exec after bash is running; asyncio then
    SIGKILLs bash alone (seen under load: a background job outlived the call by minutes). Performed by
    cancelling the call the moment Popen returns, once bash has started its job, so asyncio's own
    clean-up runs."""
    cancel = cancel_as_popen_returns(monkeypatch, tmp_path / "child")
    call = asyncio.create_task(bash(ctx, "echo $$ > leader; sleep 300 & echo $! > child; sleep 300"))
    cancel(call)
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await gone(await read_pid(tmp_path / "leader"))
    assert await gone(await read_pid(tmp_path / "child"))


async def test_signal_death_is_reported(ctx):
    with pytest.raises(ToolError, match="SIGKILL"):
        await bash(ctx, "kill -9 $$")


async def test_empty_command(ctx):
    with pytest.raises(ToolError, match="empty"):
        await bash(ctx, "   ")
