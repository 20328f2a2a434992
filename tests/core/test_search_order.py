"""The order grep and glob print in: glob newest first with ties by path, grep by path like `rg --sort path`."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.search import Glob
from agentcli.core.workspace import Workspace


def ctx_at(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace.at(root), emit=lambda e: None, permissions=None)


async def test_glob_breaks_mtime_ties_by_path_inside_a_subdirectory(tmp_path):
    for rel, when in {"src/b.py": 5, "src/a.py": 5, "src/z/c.py": 5, "src/new.py": 9, "src/gone.txt": 1}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        os.utime(path, (when * 1_000_000, when * 1_000_000))
    out = await Glob().run({"pattern": "**/*.py", "path": "src"}, ctx_at(tmp_path))
    assert out.splitlines() == ["src/new.py", "src/a.py", "src/b.py", "src/z/c.py"]
