"""Full copies of long output stay within their caps: one copy, and the whole session."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.storage.outputs import keep_in_full
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import ToolRegistry, default_tools
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.shell import Bash
from tests.conftest import tool_settings
from tests.core.test_processes import allow_all
from tests.waiting import until

MB = 1024 * 1024


def make_ctx(root: Path, copy_mb: float, session_mb: float = 512.0) -> ToolContext:
    (root / "ws").mkdir(exist_ok=True)
    return ToolContext(
        workspace=Workspace.at(root / "ws"),
        emit=lambda e: None,
        permissions=allow_all(),
        output_dir=root / "outputs",
        settings=tool_settings(output_copy_max_mb=copy_mb, output_session_max_mb=session_mb),
    )


def copies(ctx: ToolContext) -> dict[str, int]:
    assert ctx.output_dir is not None
    return {p.name: p.stat().st_size for p in ctx.output_dir.iterdir()} if ctx.output_dir.exists() else {}


async def test_yes_until_timeout_writes_one_capped_copy_and_says_so(tmp_path):
    ctx = make_ctx(tmp_path, copy_mb=0.5)
    with pytest.raises(ToolError) as info:
        await Bash().run({"command": "yes", "timeout": 2}, ctx.for_call("toolu_yes"))
    text = str(info.value)
    assert "timed out" in text and "only in part" in text and "0.5 MB cap of one copy" in text
    assert copies(ctx) == {"bash-toolu_yes.txt": MB // 2}
    assert ctx.output_dir and (ctx.output_dir / "bash-toolu_yes.txt").read_bytes()[:4] == b"y\ny\n"


async def test_the_session_cap_holds_across_copies(tmp_path):
    ctx = make_ctx(tmp_path, copy_mb=0.6, session_mb=1.0)
    command = "yes | head -c 800000"  # 0.76 MB, too long to show: each call keeps a copy
    first = await Bash().run({"command": command}, ctx.for_call("toolu_1"))
    assert "only in part" in first and "0.6 MB cap of one copy" in first
    second = await Bash().run({"command": command}, ctx.for_call("toolu_2"))
    assert "only in part" in second and "1 MB cap (setting output_session_max_mb)" in second
    third = await Bash().run({"command": command}, ctx.for_call("toolu_3"))
    assert "No full copy of the output was kept" in third and "reached their 1 MB cap" in third
    assert sum(copies(ctx).values()) == MB


def test_keep_in_full_is_capped_too(tmp_path):
    ctx = make_ctx(tmp_path, copy_mb=0.01).for_call("toolu_read")
    text = keep_in_full("x" * 100_000, ctx)
    assert text.startswith("[Full output (100,000 characters) saved to") and "0.01 MB cap of one copy" in text
    assert copies(ctx) == {"toolu_read.txt": int(0.01 * MB)}


async def test_background_output_file_is_capped_and_new_output_still_reads(tmp_path):
    ctx = make_ctx(tmp_path, copy_mb=0.2)
    registry = ToolRegistry(default_tools())
    started = await registry.call("bash", {"command": "yes", "run_in_background": True}, ctx.for_call("toolu_bg"))
    assert not started.is_error, started.output
    shell = ctx.shells.shells["bash-1"]
    try:
        await until(lambda: shell.copy and shell.copy.full, "the background copy reaching its 0.2 MB cap")
        read = await registry.call("bash_output", {"bash_id": "bash-1"}, ctx.for_call("toolu_read"))
        assert not read.is_error and read.output.startswith("y\ny\n")
        assert "only in part" in read.output and "0.2 MB cap of one copy" in read.output
    finally:
        await ctx.shells.stop_all()
    assert list(copies(ctx).values()) == [int(0.2 * MB)]
