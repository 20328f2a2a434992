"""grep and glob never hang: FIFOs and devices are refused, and rg stops at search_timeout."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import ToolRegistry, default_tools
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.rg import _run_rg
from agentcli.core.tools.search import timeout_note
from tests.conftest import tool_settings


def make_ctx(root: Path, **settings: float) -> ToolContext:
    return ToolContext(
        workspace=Workspace.at(root), emit=lambda e: None, permissions=Permissions(), settings=tool_settings(**settings)
    )


async def call(ctx: ToolContext, name: str, **args):
    return await ToolRegistry(default_tools()).call(name, args, ctx.for_call("toolu_1"))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("hello\n")
    os.mkfifo(tmp_path / "src" / "pipe")
    return tmp_path


@pytest.mark.parametrize("tool, args", [("grep", {"pattern": "hello"}), ("glob", {"pattern": "*"})])
async def test_a_fifo_as_path_is_refused_at_once(tree, tool, args):
    outcome = await asyncio.wait_for(call(make_ctx(tree), tool, path="src/pipe", **args), 30)  # not a hang
    assert outcome.is_error
    assert outcome.output == (
        "src/pipe is not a regular file or directory (it is a device, pipe or socket), so it cannot be searched."
    )


async def test_a_fifo_inside_the_searched_folder_is_skipped(tree):
    outcome = await call(make_ctx(tree), "grep", pattern="hello", path="src")
    assert (outcome.is_error, outcome.output) == (False, "src/a.txt:1:hello")


async def test_a_search_past_its_timeout_stops_with_a_sentence(tree):
    for n in range(300):
        (tree / f"f{n}.txt").write_text("nothing here\n" * 50)
    outcome = await call(make_ctx(tree, search_timeout=0.000001), "grep", pattern="hello")
    assert "stopped after 1e-06 s (setting search_timeout)" in outcome.output
    # Nothing found yet is an error; on a busy machine rg may have printed the one match first, which is kept.
    found = [line for line in outcome.output.splitlines() if not line.startswith(("[", "grep"))]
    assert outcome.is_error or found == ["src/a.txt:1:hello"], outcome.output


async def test_what_was_found_before_the_timeout_is_kept(tree):
    """rg prints the match in a.txt, then blocks on the FIFO given as a second path: stopped, the match kept."""
    result = await _run_rg(["--no-config", "hello", "src/a.txt", "src/pipe"], tree, 10, None, timeout=2.0)
    assert result.timed_out == 2.0 and result.lines == ["src/a.txt:hello"]
    assert timeout_note(result).startswith("[The search was stopped after 2 s (setting search_timeout)")
