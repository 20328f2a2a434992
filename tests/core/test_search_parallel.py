"""grep lets rg search on all its threads and sorts the files itself; glob lets rg drop names that
cannot match and stats while rg lists. Neither may change what the tools print."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import rg as search  # the rg runner, where grep decides when to sort itself
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.glob_listing import PARENT_IGNORES, nothing_above
from agentcli.core.tools.glob_patterns import compile_glob, name_globs, names_say_all
from agentcli.core.tools.rg import COMMON_RG_ARGS, rg_path
from agentcli.core.tools.search import Glob, Grep
from tests.conftest import tool_settings
from tests.core.test_search_order import sorted_rg, tricky_tree
from tests.waiting import until


def ctx_at(root: Path, **settings: float) -> ToolContext:
    return ToolContext(
        workspace=Workspace.at(root), emit=lambda e: None, permissions=Permissions(), settings=tool_settings(**settings)
    )


@pytest.fixture(params=[False, True], ids=["rg-threads", "rg-sorts"])
def way(request, monkeypatch) -> bool:
    """Both ways grep searches: rg on all threads (Python sorts), or, past the sort limit, rg on one
    thread sorting by path."""
    if request.param:
        monkeypatch.setattr(search, "_SORT_LIMIT", -1)
    return request.param


def shown(out: str) -> list[str]:
    return [line for line in out.splitlines() if not line.startswith("[")]


# ---------------------------------------------------------------- grep


@pytest.mark.parametrize(
    "tool_args, rg_args",
    [
        ({}, ["--line-number"]),
        ({"context": 2}, ["--line-number", "--context", "2"]),
        ({"output_mode": "files_with_matches"}, ["--files-with-matches"]),
        ({"output_mode": "count"}, ["--count"]),
    ],
)
async def test_grep_prints_rg_sorted_output_either_way(tmp_path, way, tool_args, rg_args):
    tricky_tree(tmp_path, 400)
    expected = sorted_rg(tmp_path, *rg_args)
    out = await Grep().run({"pattern": "hit", **tool_args}, ctx_at(tmp_path))
    assert shown(out) == expected[: len(shown(out))]
    assert f"of {len(expected):,} " in out.splitlines()[-1]


@pytest.mark.parametrize(
    "tool_args, rg_args",
    [
        ({}, ["--line-number"]),
        ({"context": 1}, ["--line-number", "--context", "1"]),
        ({"output_mode": "files_with_matches"}, ["--files-with-matches"]),
        ({"output_mode": "count"}, ["--count"]),
    ],
)
async def test_names_with_newlines_keep_rg_sorted_output(tmp_path, way, tool_args, rg_args):
    """A newline in a name makes rg's per-file blocks ambiguous; grep then has rg sort."""
    for rel in ("a\nb.txt", "a\n\nc.txt", "\nlead.txt", "plain.txt", "z/x.txt", "z-y.txt"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("hit\nmiss\nhit\n")
    expected = sorted_rg(tmp_path, *rg_args)
    out = await Grep().run({"pattern": "hit", **tool_args}, ctx_at(tmp_path))
    assert out.splitlines() == expected


async def test_output_past_the_sort_limit_is_sorted_by_rg(tmp_path, monkeypatch):
    monkeypatch.setattr(search, "_SORT_LIMIT", 2_000)
    tricky_tree(tmp_path, 300)
    expected = sorted_rg(tmp_path, "--line-number")
    out = await Grep().run({"pattern": "hit"}, ctx_at(tmp_path))
    assert shown(out) == expected[: len(shown(out))]
    assert f"of {len(expected):,} " in out.splitlines()[-1]


async def test_one_file_as_path_is_searched_as_before(tmp_path, way):
    tricky_tree(tmp_path, 3)
    out = await Grep().run({"pattern": "hit", "path": "late.bin"}, ctx_at(tmp_path))
    lines = out.splitlines()
    assert lines[0] == "late.bin:1:hit" and lines[1].startswith("late.bin: binary file matches"), lines


async def test_grep_past_its_timeout_on_rg_threads_keeps_a_sentence(tmp_path):
    os.mkfifo(tmp_path / ".gitignore")  # rg opens it and waits for a writer that never comes
    (tmp_path / "a.txt").write_text("hello\n")
    with pytest.raises(
        ToolError,
        match=r"grep found nothing for `hello` in the workspace before it was stopped "
        r"after 0.5 s \(setting search_timeout\)",
    ):
        await Grep().run({"pattern": "hello"}, ctx_at(tmp_path, search_timeout=0.5))


async def test_a_cancelled_grep_stops_rg(tmp_path, way):
    os.mkfifo(tmp_path / ".gitignore")  # rg opens it and waits for a writer that never comes
    (tmp_path / "a.txt").write_text("hello\n")
    task = asyncio.create_task(Grep().run({"pattern": "hello"}, ctx_at(tmp_path)))
    await until(rg_children, "rg started by grep")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(
        lambda: rg_children() == [], "rg stopped after the grep was cancelled", detail=lambda: str(rg_children())
    )


# ---------------------------------------------------------------- glob


def gitignored_tree(root: Path) -> None:
    """Files a glob could wrongly list: ignored by name, by folder and by extension, one a
    .gitignore whitelists again, hidden ones, nested ones, and names that sort tricky."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    files = {
        ".gitignore": "secret.py\nbuild/\n*.log\n!keep.log\nsrc/gen_*.py\n",
        "secret.py": "",
        "sub/secret.py": "",
        "build/out.py": "",
        "build/deep/x.py": "",
        "debug.log": "",
        "keep.log": "",
        "src/gen_a.py": "",
        "src/app.py": "",
        "src/pkg/deep/mod.py": "",
        ".hidden.py": "",
        ".config/tool.py": "",
        "a-b.py": "",
        "a/b.py": "",
        "notes.md": "",
        "src/routing.py": "",
        "src/pkg/routing_v2.py": "",
        "web/app.ts": "",
        "web/app.tsx": "",
    }
    for i, (rel, text) in enumerate(sorted(files.items())):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + i % 3, 1_000_000 + i % 3))  # ties, so the order by path shows too


def listed_then_matched(root: Path, pattern: str, where: str | None = None) -> list[str]:
    """What glob printed before it asked rg to drop names: every file rg lists, matched in Python,
    newest first and ties by path."""
    rg = rg_path()
    assert rg
    lines = subprocess.run(
        [rg, *COMMON_RG_ARGS, "--files", *(["--", where] if where else [])],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    ).stdout.splitlines()
    prefix = where.rstrip("/") + "/" if where else ""
    matcher = compile_glob(pattern)
    found = [line for line in lines if matcher.match(line[len(prefix) :] if prefix else line)]
    return sorted(found, key=lambda p: (-os.stat(root / p).st_mtime, p))


@pytest.mark.parametrize(
    "pattern, where",
    [
        ("*.py", None),
        ("**/*.py", None),
        ("secret.py", None),
        ("*.log", None),
        ("src/**/routing*.py", None),
        ("src/gen_*.py", None),
        ("*.{ts,tsx}", None),
        ("**/*", None),
        ("*", None),
        ("[ab]*.py", None),
        ("**/deep/*.py", None),
        ("*.py", "src"),
        ("pkg/**/*.py", "src"),
        (".hidden.py", None),
        ("a?b.py", None),
    ],
)
async def test_glob_lists_what_it_listed_before(tmp_path, pattern, where):
    gitignored_tree(tmp_path)
    expected = listed_then_matched(tmp_path, pattern, where)
    out = await Glob().run({"pattern": pattern, **({"path": where} if where else {})}, ctx_at(tmp_path))
    assert (out.splitlines() if expected else []) == expected, out
    assert not any(name in out for name in ("build/", "debug.log", "gen_a.py")) and "\nsecret.py" not in f"\n{out}"


async def test_rg_glob_would_list_an_ignored_file_but_glob_does_not(tmp_path):
    """Why glob gives rg the names as a file type, not --glob: a --glob whitelist overrides .gitignore."""
    gitignored_tree(tmp_path)
    rg = rg_path()
    assert rg
    overridden = (
        await asyncio.to_thread(
            subprocess.run,
            [rg, *COMMON_RG_ARGS, "--files", "--glob", "secret.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    ).stdout
    assert "secret.py" in overridden.splitlines()
    out = await Glob().run({"pattern": "secret.py"}, ctx_at(tmp_path))
    assert out.startswith("No files match `secret.py`")


@pytest.mark.parametrize("name", PARENT_IGNORES)
async def test_an_ignore_file_above_the_workspace_still_hides_what_it_names(tmp_path, name):
    """glob tells rg to skip the folders above the workspace (``--no-ignore-parent``) only when none holds a
    file rg reads there: one that does keeps hiding what it names."""
    rules = tmp_path / (f"{name}/info/exclude" if name == ".git" else name)
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text("secret_*.py\n")
    workspace = tmp_path / "ws"
    for rel in ("src/secret_key.py", "src/app.py"):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text("")
    assert not nothing_above(workspace)
    assert (await Glob().run({"pattern": "*.py"}, ctx_at(workspace))).splitlines() == ["src/app.py"]


def test_name_globs_only_for_plain_last_parts():
    assert name_globs("**/*.py") == ["*.py"]
    assert name_globs("src/**/routing*.{py,pyi}") == ["routing*.py", "routing*.pyi"]
    assert name_globs("./a?b.txt") == ["a?b.txt"]
    for pattern in ("src/**", "a**b", "[ab].py", "x/{a,b/**}", "!x.py", "x:y", "a b.py", "a\\*.py", "a,b"):
        assert name_globs(pattern) is None, pattern
        assert not names_say_all(pattern), pattern


def test_names_say_all_only_for_names_at_any_depth():
    for pattern in ("*.py", "**/*.py", "./test_?.py", "**/*.{py,pyi}", "{a,b}.txt"):
        assert names_say_all(pattern), pattern
    for pattern in ("src/*.py", "src/**/*.py", "**/src/*.py", "{*.py,src/*.txt}", "*/x.py"):
        assert not names_say_all(pattern), pattern


async def test_glob_past_its_timeout_and_a_cancelled_glob_stop_rg(tmp_path):
    os.mkfifo(tmp_path / ".gitignore")  # rg opens it and waits for a writer that never comes
    (tmp_path / "a.py").write_text("")
    with pytest.raises(ToolError, match=r"glob listed no files in the workspace before it was stopped after 0.5 s"):
        await Glob().run({"pattern": "*.py"}, ctx_at(tmp_path, search_timeout=0.5))
    assert rg_children() == []

    task = asyncio.create_task(Glob().run({"pattern": "*.py"}, ctx_at(tmp_path)))
    await until(rg_children, "rg started by glob")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(
        lambda: rg_children() == [], "rg stopped after the glob was cancelled", detail=lambda: str(rg_children())
    )


def rg_children() -> list[int]:
    """rg processes this test process started that still run (not yet reaped zombies excluded)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            name, rest = Path(entry.path, "stat").read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        state, parent = rest.split()[:2]
        if int(parent) == os.getpid() and state != "Z" and name.endswith("(rg"):
            found.append(int(entry.name))
    return found
