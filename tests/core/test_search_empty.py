"""grep in a workspace where rg finds no file to search at all (empty, or everything ignored)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from agentcli.core.tools.search import Grep
from tests.core.test_search_parallel import ctx_at


async def test_grep_in_an_empty_repository_says_there_is_nothing_to_search_not_that_rg_failed(tmp_path: Path):
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(tmp_path)], check=True)
    out = await Grep().run({"pattern": "TODO"}, ctx_at(tmp_path))  # rg itself exits 2: "No files were searched"
    assert out.startswith("No matches for `TODO`")
    assert "no file in" in out and "ripgrep failed" not in out
