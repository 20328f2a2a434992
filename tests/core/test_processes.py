"""Nothing a bash call starts outlives it, however it tries to escape; background shells live until stopped."""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import ToolRegistry, default_tools
from agentcli.core.tools.base import Tool, ToolContext
from agentcli.core.tools.shell import Bash
from tests import waiting
from tests.conftest import TOOLS
from tests.waiting import until

DEADLINE = 30.0
# The sleeps these tests start are found by their command line; a suffix of this run's own keeps another
# run on the same machine (another clone's suite) from being taken for an escape of ours.
RUN = f".{secrets.randbelow(10**6):06d}"


class AllowAll:
    """Lets every call run. It is no Permissions, so the registry asks no one about what the OS sandbox stopped
    (core/tools/__init__.py checks), which the sandbox tests rely on."""

    async def authorize(self, tool: Tool, args: dict[str, Any], ctx: ToolContext, approved: bool = False) -> None:
        return None


def allow_all() -> Permissions:
    return cast(Permissions, AllowAll())  # the registry calls only authorize on what is not a Permissions


def make_ctx(root: Path, **kw: Any) -> ToolContext:
    return ToolContext(
        workspace=Workspace.at(root), emit=lambda e: None, permissions=allow_all(), **{"settings": TOOLS, **kw}
    )


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return make_ctx(tmp_path)


def running(argv: list[str]) -> list[int]:
    """Live processes whose command line is exactly ``argv``."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if Path(f"/proc/{name}/cmdline").read_bytes() == wanted:
                    found.append(int(name))
            except OSError:
                continue
    return found


async def gone(argv: list[str], pids: Sequence[int] = ()) -> None:
    """No ``argv`` process runs, and ``pids`` are not even zombies any more: they were reaped."""
    await until(lambda: not running(argv), f"every `{' '.join(argv)}` process ending")
    await until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), f"{pids} being reaped")


async def bash(ctx: ToolContext, command: str, **args) -> str:
    return await Bash().run({"command": command, **args}, ctx)


ESCAPES = {
    "setsid": "setsid sleep {n} > /dev/null 2>&1 &",
    "nohup": "nohup sleep {n} > /dev/null 2>&1 &",
    "double fork": "(sleep {n} > /dev/null 2>&1 &)",
    "setsid -f": "setsid -f sleep {n} > /dev/null 2>&1",
    "scrubbed env": "(env -i sleep {n} > /dev/null 2>&1 &)",
    "disown": "sleep {n} > /dev/null 2>&1 & disown",
}


@pytest.mark.parametrize("form", list(ESCAPES))
async def test_escapes_end_with_the_call(ctx, form):
    n = f"{7774 + list(ESCAPES).index(form)}{RUN}"
    out = await bash(
        ctx, ESCAPES[form].format(n=n) + f"\nuntil pgrep -fx 'sleep {n}' > pids; do sleep 0.05; done\necho up"
    )
    assert out.startswith("up\n[Stopped 1 process"), out
    pids = [int(p) for p in (ctx.workspace.root / "pids").read_text().split()]
    assert pids
    await gone(["sleep", n], pids)


async def test_escape_ends_with_a_timeout(ctx):
    with pytest.raises(ToolError, match="timed out"):
        await bash(ctx, f"setsid sleep 7790{RUN} > /dev/null 2>&1 & sleep 300", timeout=1)
    await gone(["sleep", f"7790{RUN}"])


async def test_escape_ends_when_the_call_is_cancelled(ctx):
    task = asyncio.create_task(bash(ctx, f"setsid -f sleep 7791{RUN} > /dev/null 2>&1; sleep 300"))
    await until(lambda: running(["sleep", f"7791{RUN}"]), "the escaped sleep starting")
    pids = running(["sleep", f"7791{RUN}"])
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await gone(["sleep", f"7791{RUN}"], pids)


async def test_a_finished_escape_leaves_no_zombie(ctx):
    """A detached process that exits on its own after its parent died is reaped, not left a zombie."""
    await bash(ctx, "setsid -f sh -c 'echo $$ > pid; sleep 0.2' > /dev/null 2>&1; sleep 0.5")
    pid = int((ctx.workspace.root / "pid").read_text())
    await until(lambda: not Path(f"/proc/{pid}").exists(), f"process {pid} being reaped")


# ---------------------------------------------------------------- background shells


def tools() -> ToolRegistry:
    return ToolRegistry(default_tools())


async def call(ctx: ToolContext, name: str, **args):
    return await tools().call(name, args, ctx.for_call(f"toolu_{name}"))


async def output_until(ctx: ToolContext, bash_id: str, wanted: str) -> str:
    """Read the shell's new output until ``wanted`` is in what was read."""
    seen: list[str] = []

    async def read_more() -> None:
        outcome = await call(ctx, "bash_output", bash_id=bash_id)
        assert not outcome.is_error, outcome.output
        seen.append(outcome.output)
        await asyncio.sleep(waiting.STEP)  # let the shell's reader run

    await until(
        lambda: wanted in "".join(seen),
        f"{wanted!r} appearing in {bash_id}'s output",
        step=read_more,
        detail=lambda: "read: " + repr("".join(seen)),
    )
    return "".join(seen)


async def test_background_shell_runs_reports_and_is_killed_with_its_escapes(ctx):
    started = await call(
        ctx,
        "bash",
        command=f"echo hello; setsid sleep 7792{RUN} > /dev/null 2>&1 & sleep 7793{RUN}",
        run_in_background=True,
    )
    assert not started.is_error and "bash-1" in started.output
    seen = await output_until(ctx, "bash-1", "hello")
    assert "bash-1 · running" in seen
    await until(lambda: running(["sleep", f"7792{RUN}"]) and running(["sleep", f"7793{RUN}"]), "both sleeps starting")
    again = await call(ctx, "bash_output", bash_id="bash-1")
    assert again.output.startswith("(no new output)")  # only what is new since the last read

    pids = running(["sleep", f"7792{RUN}"]) + running(["sleep", f"7793{RUN}"])
    stopped = await call(ctx, "kill_bash", bash_id="bash-1")
    assert not stopped.is_error and "Stopped bash-1" in stopped.output
    await gone(["sleep", f"7792{RUN}"], pids)
    await gone(["sleep", f"7793{RUN}"], pids)
    assert "killed" in (await call(ctx, "bash_output", bash_id="bash-1")).output


async def test_background_shell_that_exits_says_how(ctx):
    await call(ctx, "bash", command="echo bye; exit 3", run_in_background=True)
    seen = await output_until(ctx, "bash-1", "exited with code 3")
    assert "bye" in seen
    assert "no longer running" in (await call(ctx, "kill_bash", bash_id="bash-1")).output


async def test_session_end_stops_background_shells(ctx):
    await call(
        ctx, "bash", command=f"setsid sleep 7794{RUN} > /dev/null 2>&1 & sleep 7795{RUN}", run_in_background=True
    )
    await until(lambda: running(["sleep", f"7794{RUN}"]) and running(["sleep", f"7795{RUN}"]), "both sleeps starting")
    await ctx.shells.stop_all()
    await gone(["sleep", f"7794{RUN}"])
    await gone(["sleep", f"7795{RUN}"])


async def test_a_subagent_reaches_only_its_own_shells(ctx):
    await call(ctx, "bash", command=f"sleep 7796{RUN}", run_in_background=True)
    child = ctx.__class__(**{**ctx.__dict__, "agent_id": "sa-1", "depth": 1})
    for name in ("bash_output", "kill_bash"):
        outcome = await call(child, name, bash_id="bash-1")
        assert outcome.is_error and "no background shell 'bash-1'" in outcome.output
    await until(lambda: running(["sleep", f"7796{RUN}"]), "the main agent's shell running on")
    await call(child, "bash", command=f"sleep 7797{RUN}", run_in_background=True)
    assert not (await call(child, "kill_bash", bash_id="bash-2")).is_error
    assert not (await call(ctx, "kill_bash", bash_id="bash-1")).is_error  # the main agent reaches every one
    await gone(["sleep", f"7796{RUN}"])
    await gone(["sleep", f"7797{RUN}"])


async def test_unknown_shell_is_one_sentence(ctx):
    outcome = await call(ctx, "bash_output", bash_id="bash-9")
    assert outcome.is_error and outcome.output == "There is no background shell 'bash-9'; you have started none."
