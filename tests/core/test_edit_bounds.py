"""edit_file with replace_all may not grow a file without bound: the result's size is known from the
count of matches before anything is built, and an edit past MAX_EDITED_CHARS is refused in one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.tools.edit import MAX_EDITED_CHARS
from tests.core.test_tools_files import ctx, edit  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("ctx")


@pytest.mark.parametrize("matches, width", [(1_000_000, 4_000), (10_000, 2_000)], ids=["4 GB", "20 MB"])
async def test_a_replace_all_past_the_bound_is_refused_before_it_is_built(ctx, tmp_path: Path, matches, width):
    path = tmp_path / "many.txt"
    path.write_text("x\n" * matches)
    with pytest.raises(ToolError) as refused:
        await edit(ctx, path="many.txt", old_string="x", new_string="y" * width, replace_all=True)
    message = str(refused.value)
    assert message == (
        f"Replacing all {matches:,} matches in many.txt would make it {matches * (width + 1):,} "
        f"characters long, more than the {MAX_EDITED_CHARS:,} an edit may grow a file to; make a "
        "smaller change."
    )
    assert path.read_text() == "x\n" * matches  # untouched


async def test_a_replace_all_within_the_bound_and_one_that_shrinks_a_big_file_go_through(ctx, tmp_path: Path):
    (tmp_path / "some.txt").write_text("x\n" * 1_000)
    await edit(ctx, path="some.txt", old_string="x", new_string="y" * 100, replace_all=True)
    assert (tmp_path / "some.txt").read_text() == ("y" * 100 + "\n") * 1_000
    big = "word " * (MAX_EDITED_CHARS // 5 + 10)  # already past the bound: an edit that does not grow it is fine
    (tmp_path / "big.txt").write_text(big)
    await edit(ctx, path="big.txt", old_string="word", new_string="w", replace_all=True)
    assert (tmp_path / "big.txt").read_text() == big.replace("word", "w")
