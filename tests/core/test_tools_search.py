"""grep and glob with the packaged ripgrep against real directory trees."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.glob_patterns import compile_glob
from agentcli.core.tools.rg import rg_path
from agentcli.core.tools.search import Glob, Grep
from tests.conftest import TOOLS


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=Workspace.at(tmp_path), emit=lambda e: None, permissions=Permissions(), settings=TOOLS)


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


async def grep(ctx: ToolContext, **args) -> str:
    return await Grep().run(args, ctx)


async def glob(ctx: ToolContext, **args) -> str:
    return await Glob().run(args, ctx)


def test_rg_path_finds_an_executable():
    found = rg_path()
    assert found and os.access(found, os.X_OK)


async def test_an_rg_gone_since_it_was_found_is_looked_for_again(ctx, tmp_path, monkeypatch):
    place = tmp_path / "bin"
    place.mkdir()
    (place / "rg").symlink_to(rg_path() or "")
    monkeypatch.setenv("PATH", f"{place}{os.pathsep}{os.environ['PATH']}")
    assert rg_path() == str(place / "rg")  # found on this PATH, and remembered
    (place / "rg").unlink()
    with pytest.raises(ToolError, match="Could not run ripgrep"):
        await glob(ctx, pattern="*.py")
    assert rg_path() != str(place / "rg")  # the failed start made it look again
    assert "No files match" in await glob(ctx, pattern="*.py")


# ---------------------------------------------------------------- grep


async def test_grep_content_lines_are_path_line_text(ctx, tmp_path):
    make(tmp_path, {"src/app.py": "import os\ndef handle_auth():\n    pass\n", "README.md": "auth docs\n"})
    out = await grep(ctx, pattern="auth")
    assert out.splitlines() == ["README.md:1:auth docs", "src/app.py:2:def handle_auth():"]


async def test_grep_single_file_path_still_prints_path(ctx, tmp_path):
    make(tmp_path, {"src/app.py": "x = 1\ny = 2\n"})
    out = await grep(ctx, pattern="y", path="src/app.py")
    assert out == "src/app.py:2:y = 2"


async def test_grep_in_subdirectory_and_absolute_path(ctx, tmp_path):
    make(tmp_path, {"a/x.txt": "hit\n", "b/y.txt": "hit\n"})
    assert await grep(ctx, pattern="hit", path="a") == "a/x.txt:1:hit"
    assert await grep(ctx, pattern="hit", path=str(tmp_path / "b")) == "b/y.txt:1:hit"


async def test_grep_respects_gitignore_without_git(ctx, tmp_path):
    make(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n",
            "build/out.py": "needle\n",
            "debug.log": "needle\n",
            "src/keep.py": "needle\n",
            ".hidden/conf": "needle\n",
        },
    )
    out = await grep(ctx, pattern="needle", output_mode="files_with_matches")
    assert sorted(out.splitlines()) == [".hidden/conf", "src/keep.py"]


async def test_grep_respects_gitignore_in_git_repo_and_skips_dot_git(ctx, tmp_path):
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(tmp_path)], check=True)
    make(tmp_path, {".gitignore": "secret.txt\n", "secret.txt": "needle\n", "ok.txt": "needle\n"})
    (tmp_path / ".git" / "needle-file").write_text("needle\n")
    out = await grep(ctx, pattern="needle")
    assert out == "ok.txt:1:needle"


async def test_grep_explicit_ignored_file_is_searched(ctx, tmp_path):
    make(tmp_path, {".gitignore": "gen.py\n", "gen.py": "needle\n"})
    assert await grep(ctx, pattern="needle", path="gen.py") == "gen.py:1:needle"


async def test_grep_glob_and_case_insensitive(ctx, tmp_path):
    make(tmp_path, {"a.py": "Needle\n", "b.txt": "needle\n"})
    assert await grep(ctx, pattern="needle", glob="*.py", case_insensitive=True) == "a.py:1:Needle"
    assert "No matches" in await grep(ctx, pattern="needle", glob="*.py")


async def test_grep_context_lines(ctx, tmp_path):
    make(tmp_path, {"f.txt": "a\nb\nhit\nc\nd\n"})
    out = await grep(ctx, pattern="hit", context=1)
    assert out.splitlines() == ["f.txt-2-b", "f.txt:3:hit", "f.txt-4-c"]


async def test_grep_pattern_starting_with_dash(ctx, tmp_path):
    make(tmp_path, {"f.txt": "x --verbose y\n"})
    assert await grep(ctx, pattern="--verbose") == "f.txt:1:x --verbose y"


async def test_grep_count_and_files_with_matches(ctx, tmp_path):
    make(tmp_path, {"a.txt": "hit\nhit\nmiss\n", "b.txt": "hit\n", "c.txt": "miss\n"})
    files = await grep(ctx, pattern="hit", output_mode="files_with_matches")
    assert files.splitlines() == ["a.txt", "b.txt"]
    count = await grep(ctx, pattern="hit", output_mode="count")
    assert count.splitlines()[:2] == ["a.txt:2", "b.txt:1"]
    assert "3 matching lines in 2 files" in count


async def test_grep_no_match_is_a_sentence(ctx, tmp_path):
    make(tmp_path, {"a.txt": "x\n"})
    out = await grep(ctx, pattern="absent", path=".")
    assert out.startswith("No matches for `absent` in the workspace")


async def test_no_match_sentences_print_the_pattern_as_written(ctx, tmp_path):
    """repr doubled each backslash ('\\\\bfoo'), and a model reading that may "fix" a regex that was right."""
    make(tmp_path, {"a.py": "food = 1\n"})
    out = await grep(ctx, pattern=r"\bfoo\b", glob=r"*.{py,pyi}")
    assert out.startswith(r"No matches for `\bfoo\b` in the workspace among files matching `*.{py,pyi}`"), out
    assert "\\\\" not in out
    with pytest.raises(ToolError) as bad:
        await grep(ctx, pattern=r"\d+(")
    assert str(bad.value).startswith(r"Invalid regular expression `\d+(`:")
    assert (await glob(ctx, pattern=r"src/[\w]*.rs")).startswith(r"No files match `src/[\w]*.rs` in")
    assert (await grep(ctx, pattern="a`b")).startswith("No matches for `` a`b `` in")  # a backtick: a longer fence


def test_grep_says_count_counts_lines():
    schema = Grep().schema()
    said = schema["description"]  # the tool's description says the modes once; output_mode's enum names them
    assert "'count' `path:count` of matching lines" in said and "matches per file" not in said


async def test_grep_bad_regex_is_a_tool_error(ctx, tmp_path):
    make(tmp_path, {"a.txt": "x\n"})
    with pytest.raises(ToolError, match="Invalid regular expression.*unclosed group"):
        await grep(ctx, pattern="foo(")


async def test_grep_missing_path_and_outside_path(ctx, tmp_path):
    with pytest.raises(ToolError, match="No such file or directory: nope"):
        await grep(ctx, pattern="x", path="nope")
    with pytest.raises(ToolError, match="outside the workspace"):
        await grep(ctx, pattern="x", path="../")


async def test_grep_huge_output_is_capped_with_marker(ctx, tmp_path):
    make(tmp_path, {"big.txt": "".join(f"match {i}\n" for i in range(5000))})
    out = await grep(ctx, pattern="match")
    lines = out.splitlines()
    assert lines[0] == "big.txt:1:match 0"
    assert len(lines) == 251
    assert "250 of 5,000 lines" in lines[-1] and "4,750 more" in lines[-1]
    assert "glob" in lines[-1]


async def test_grep_long_lines_stay_under_the_cap(ctx, tmp_path):
    make(tmp_path, {"wide.txt": ("needle " + "w" * 3000 + "\n") * 300})
    out = await grep(ctx, pattern="needle")
    assert len(out) < 30_000
    assert "more left out" in out.splitlines()[-1]


# ---------------------------------------------------------------- glob


def test_compile_glob_semantics():
    def hit(pattern: str, path: str) -> bool:
        return compile_glob(pattern).match(path) is not None

    assert hit("*.py", "a.py") and hit("*.py", "deep/er/a.py")
    assert hit("src/*.py", "src/a.py") and not hit("src/*.py", "src/sub/a.py")
    assert hit("src/**/*.py", "src/a.py") and hit("src/**/*.py", "src/x/y/a.py")
    assert hit("**/test_*.py", "tests/core/test_x.py")
    assert hit("*.{ts,tsx}", "ui/app.tsx") and hit("*.{ts,tsx}", "ui/app.ts") and not hit("*.{ts,tsx}", "a.js")
    assert hit("file?.txt", "file1.txt") and not hit("file?.txt", "file10.txt")
    assert hit("[ab].txt", "a.txt") and not hit("[!ab].txt", "a.txt")
    assert not hit("*.py", "a.pyc")


async def test_glob_newest_first(ctx, tmp_path):
    make(tmp_path, {"old.py": "", "mid/m.py": "", "new/deep/n.py": "", "notes.txt": ""})
    os.utime(tmp_path / "old.py", (1_000_000, 1_000_000))
    os.utime(tmp_path / "mid/m.py", (2_000_000, 2_000_000))
    os.utime(tmp_path / "new/deep/n.py", (3_000_000, 3_000_000))
    out = await glob(ctx, pattern="*.py")
    assert out.splitlines() == ["new/deep/n.py", "mid/m.py", "old.py"]


async def test_glob_double_star_and_path(ctx, tmp_path):
    make(tmp_path, {"src/a.py": "", "src/pkg/b.py": "", "other/c.py": ""})
    assert sorted((await glob(ctx, pattern="src/**/*.py")).splitlines()) == ["src/a.py", "src/pkg/b.py"]
    assert (await glob(ctx, pattern="*.py", path="src/pkg")).splitlines() == ["src/pkg/b.py"]
    assert (await glob(ctx, pattern="src/*.py")).splitlines() == ["src/a.py"]


async def test_glob_respects_gitignore_and_skips_git(ctx, tmp_path):
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(tmp_path)], check=True)
    make(tmp_path, {".gitignore": "node_modules/\n", "node_modules/x/index.js": "", "app.js": "", ".eslintrc.js": ""})
    out = await glob(ctx, pattern="**/*")
    assert sorted(out.splitlines()) == [".eslintrc.js", ".gitignore", "app.js"]


@pytest.mark.parametrize("rules", [".gitignore", ".ignore", ".rgignore"])
async def test_no_ignore_file_of_the_repository_brings_git_folders_back(ctx, tmp_path, rules):
    """The repository's own ignore files whitelist every .git (a folder, a nested repository's, a worktree's file):
    rg's `--glob !.git` override outranks them all. An ignore rule would not: an `--ignore-file` naming .git is
    the lowest of rg's ignore rules, and hidden-file skipping gives way to any rule that whitelists, so either
    listed .git/hooks/leak.py here (and each cost rg what the override does, one match a path)."""
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(tmp_path)], check=True)
    make(
        tmp_path,
        {
            rules: "!.git\n!.git/\n!.git/**\n!**/.git\n!**/.git/**\n",
            ".git/hooks/leak.py": "needle\n",
            "vendor/lib/.git/config.py": "needle\n",
            "linked/.git": "gitdir: /elsewhere\n",
            "app.py": "needle\n",
            "linked/b.py": "needle\n",
        },
    )
    assert sorted((await glob(ctx, pattern="**/*.py")).splitlines()) == ["app.py", "linked/b.py"]
    assert sorted((await glob(ctx, pattern="**/*")).splitlines()) == [rules, "app.py", "linked/b.py"]
    assert sorted((await grep(ctx, pattern="needle", output_mode="files_with_matches")).splitlines()) == [
        "app.py",
        "linked/b.py",
    ]


async def test_glob_respects_gitignore_without_git(ctx, tmp_path):
    make(tmp_path, {".gitignore": "*.gen.py\n", "a.gen.py": "", "a.py": ""})
    assert (await glob(ctx, pattern="*.py")).splitlines() == ["a.py"]


async def test_glob_caps_results(ctx, tmp_path):
    make(tmp_path, {f"f{i:03}.txt": "" for i in range(250)})
    out = await glob(ctx, pattern="*.txt")
    lines = out.splitlines()
    assert len(lines) == 201
    assert "200 most recently modified of 250" in lines[-1]


async def test_glob_no_match_and_bad_path(ctx, tmp_path):
    make(tmp_path, {"a.py": ""})
    assert (await glob(ctx, pattern="*.rs")).startswith("No files match `*.rs`")
    with pytest.raises(ToolError, match="No such file or directory"):
        await glob(ctx, pattern="*", path="missing")
    with pytest.raises(ToolError, match="not a directory"):
        await glob(ctx, pattern="*", path="a.py")
    with pytest.raises(ToolError, match="outside the workspace"):
        await glob(ctx, pattern="*", path="/")
