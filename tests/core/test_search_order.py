"""The order grep and glob print in: glob newest first with ties by path, grep by path like `rg --sort path`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.glob_listing import _Head
from agentcli.core.tools.glob_patterns import compile_glob
from agentcli.core.tools.rg import COMMON_RG_ARGS, rg_path
from agentcli.core.tools.search import GREP_MAX_COLUMNS, Glob, Grep
from tests.conftest import TOOLS


def ctx_at(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace.at(root), emit=lambda e: None, permissions=Permissions(), settings=TOOLS)


async def test_glob_breaks_mtime_ties_by_path_inside_a_subdirectory(tmp_path):
    for rel, when in {"src/b.py": 5, "src/a.py": 5, "src/z/c.py": 5, "src/new.py": 9, "src/gone.txt": 1}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        os.utime(path, (when * 1_000_000, when * 1_000_000))
    out = await Glob().run({"pattern": "**/*.py", "path": "src"}, ctx_at(tmp_path))
    assert out.splitlines() == ["src/new.py", "src/a.py", "src/b.py", "src/z/c.py"]


async def test_glob_keeps_ties_by_path_across_the_files_it_shows(tmp_path):
    # rg sorts newest first and leaves a tie in the order it walked; 300 files in three times, the middle one
    # across the 200 shown: the listing must be what a full sort by (newest, path) gives
    names = [f"{d}/{'kamby'[i % 5]}{i}.py" for i in range(75) for d in ("a", "a-b", "b/c", "z")]
    times = {}
    for i, rel in enumerate(names):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        when = (3 if i < 150 else 2 if i < 270 else 1) * 1_000_000_000
        os.utime(path, ns=(when, when))
        times[rel] = when
    out = (await Glob().run({"pattern": "**/*.py"}, ctx_at(tmp_path))).splitlines()
    expected = sorted(times, key=lambda rel: (-times[rel], rel))
    assert out[:200] == expected[:200]
    assert (
        out[200]
        == "[Showing the 200 most recently modified of 300 matching files; use a more specific pattern or path to see the others.]"
    )


# ---------------------------------------------------------------- grep: rg searches in parallel, we sort


def tricky_tree(root: Path, many: int) -> None:
    """Names whose order differs between a plain string sort and rg's name-by-name sort, and more."""
    files = {
        "a/f": "x\nhit one\ny\nz\nw\nq\nhit two\n",
        "a.txt": "hit\n",
        "a-b": "hit\n",
        "A": "hit\n",
        "a:1:b": "hit\n",
        "b/g": "hit\nzz\nhit\n",
        "é.txt": "hit é\n",
        "z/ü/deep.txt": "hit\n" * 300,
        "wide.txt": ("hit " + "w" * 2000 + "\n") * 3,
        "ab/c": "hit\n",
        "a b/c": "hit\n",
    }
    files.update({f"many/{i % 37}/f{i}.txt": "hit\nctx\nhit\n" for i in range(many)})
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    (root / "late.bin").write_bytes(b"hit\n" + b"x" * 200_000 + b"\n\0hit\n")  # rg warns after the match


def sorted_rg(root: Path, *args: str) -> list[str]:
    """What rg prints single-threaded with --sort path: the order the tool's output must keep."""
    rg = rg_path()
    assert rg
    out = subprocess.run(
        [
            rg,
            *COMMON_RG_ARGS,
            "--color",
            "never",
            "--no-heading",
            "--with-filename",
            "--sort",
            "path",
            "--max-columns",
            str(GREP_MAX_COLUMNS),
            "--max-columns-preview",
            *args,
            "--regexp",
            "hit",
            "--",
        ],
        cwd=root,
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return out.stdout.decode("utf-8", errors="replace").splitlines()


@pytest.mark.parametrize("many", [3, 1500])
@pytest.mark.parametrize(
    "tool_args, rg_args",
    [
        ({}, ["--line-number"]),
        ({"context": 1}, ["--line-number", "--context", "1"]),
        ({"output_mode": "files_with_matches"}, ["--files-with-matches"]),
        ({"output_mode": "count"}, ["--count"]),
        ({"glob": "*.txt", "context": 2}, ["--glob", "*.txt", "--line-number", "--context", "2"]),
    ],
)
async def test_grep_prints_what_rg_sorted_by_path_prints(tmp_path, many, tool_args, rg_args):
    tricky_tree(tmp_path, many)
    expected = sorted_rg(tmp_path, *rg_args)
    for _ in range(3):  # rg's threads finish files in a different order each time
        out = (await Grep().run({"pattern": "hit", **tool_args}, ctx_at(tmp_path))).splitlines()
        shown = [line for line in out if not line.startswith("[")]
        assert shown == expected[: len(shown)]
        footer = [line for line in out if line.startswith("[Output cut")]
        if len(shown) < len(expected):
            assert footer and f"of {len(expected):,} " in footer[0], footer
        else:
            assert footer == []


def test_glob_orders_the_same_files_however_rg_output_is_cut_into_pieces(tmp_path):
    # the head is stat'ed as rg's output arrives: a piece may end inside a line, or inside a character
    names = [f"{d}/{'kåmby'[i % 5]}{i}.py" for i in range(60) for d in ("a", "a-b", "b/c", "z")]
    times = {}
    for i, rel in enumerate(names):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        times[rel] = (3 if i < 100 else 2 if i < 180 else 1) * 1_000_000_000
        os.utime(path, ns=(times[rel], times[rel]))
    listed = sorted(reversed(names), key=lambda rel: -times[rel])  # newest first, a tie in some other order
    output = b"".join(f"{rel}\n".encode() for rel in listed)
    root = os.open(tmp_path, os.O_RDONLY)
    try:
        orders = []
        for matcher, keep in ((None, 150), (compile_glob("{a,z}/*.py"), 40)):
            for size in (len(output), 7, 1):
                head = _Head(matcher, root, keep)
                for start in range(0, len(output), size):
                    head.feed(output[start : start + size])
                orders.append((head.found(), head.matched, head.listed))
    finally:
        os.close(root)
    expected = sorted(names, key=lambda rel: (-times[rel], rel))
    assert orders[0] == (expected[:180], 240, 240)  # the 150 shown and the ties after them; all counted
    wanted = [rel for rel in expected if rel.startswith(("a/", "z/"))]
    assert orders[3] == (wanted[:50], 120, 240)  # 40 shown, and the ties after them: the newest 50 are one time
    assert orders[1] == orders[2] == orders[0] and orders[4] == orders[5] == orders[3]
