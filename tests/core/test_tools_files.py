"""read_file, write_file and edit_file against real files in a temporary workspace."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.edit import EditFile
from agentcli.core.tools.files import ReadFile, WriteFile
from tests.conftest import TOOLS
from tests.narrow import of


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=Workspace.at(tmp_path), emit=lambda e: None, permissions=Permissions(), settings=TOOLS)


async def read(ctx: ToolContext, **args) -> str:
    return of(str, await ReadFile().run(args, ctx))


async def read_first(ctx: ToolContext, path: str) -> None:
    """What a careful model does, and edit_file and write_file require: read the file before changing it."""
    with contextlib.suppress(ToolError):
        await read(ctx, path=path)


async def edit(ctx: ToolContext, **args) -> str:
    await read_first(ctx, args["path"])
    return await EditFile().run(args, ctx)


async def write(ctx: ToolContext, **args) -> str:
    await read_first(ctx, args["path"])
    return await WriteFile().run(args, ctx)


# ---------------------------------------------------------------- read_file


async def test_read_numbers_lines_like_cat_n(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n\ngamma")
    out = await read(ctx, path="a.txt")
    assert out == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"


async def test_read_offset_and_limit_with_footer(ctx, tmp_path):
    (tmp_path / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    out = await read(ctx, path="n.txt", offset=10, limit=5)
    lines = out.splitlines()
    assert lines[0] == "    10\tline 10"
    assert lines[4] == "    14\tline 14"
    assert "10-14 of 100" in lines[5] and "offset=15" in lines[5]
    assert len(lines) == 6


async def test_read_default_limit_is_2000_lines(ctx, tmp_path):
    (tmp_path / "big.txt").write_text("x\n" * 2500)
    out = await read(ctx, path="big.txt")
    lines = out.splitlines()
    assert lines[1999] == "  2000\tx"
    assert "1-2000 of 2,500" in lines[-1] and "offset=2001" in lines[-1]


async def test_read_tail_of_file_says_where_it_starts(ctx, tmp_path):
    (tmp_path / "n.txt").write_text("a\nb\nc\n")
    out = await read(ctx, path="n.txt", offset=3)
    assert out.splitlines()[0] == "     3\tc"
    assert "3-3 of 3" in out


async def test_a_read_from_the_middle_says_which_lines_were_not_shown(ctx, tmp_path):
    (tmp_path / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    middle = (await read(ctx, path="n.txt", offset=10, limit=5)).splitlines()[-1]
    assert "lines 1-9 and 15-100 were not shown" in middle and "offset=15" in middle
    tail = (await read(ctx, path="n.txt", offset=99)).splitlines()[-1]
    assert tail == "[Showed lines 99-100 of 100, the end of the file; lines 1-98 were not shown.]"
    assert "line 1 was not shown" in (await read(ctx, path="n.txt", offset=2)).splitlines()[-1]
    assert "line 100 was not shown" in (await read(ctx, path="n.txt", limit=99)).splitlines()[-1]


async def test_read_offset_past_end(ctx, tmp_path):
    (tmp_path / "n.txt").write_text("a\nb\n")
    with pytest.raises(ToolError, match="only 2 lines"):
        await read(ctx, path="n.txt", offset=10)


async def test_read_caps_long_lines_with_marker(ctx, tmp_path):
    (tmp_path / "long.txt").write_text("short\n" + "y" * 5000 + "\nend\n")
    out = await read(ctx, path="long.txt")
    lines = out.splitlines()
    assert lines[1].startswith("     2\t" + "y" * 2000)
    assert "y" * 2001 not in lines[1]
    assert "3,000 more characters" in lines[1]
    assert lines[2] == "     3\tend"


async def test_read_output_stays_under_the_registry_cap(ctx, tmp_path):
    (tmp_path / "wide.txt").write_text(("z" * 1000 + "\n") * 200)
    out = await read(ctx, path="wide.txt")
    assert len(out) < 30_000
    assert "offset=" in out.splitlines()[-1]


async def test_read_refuses_binary(ctx, tmp_path):
    (tmp_path / "img.bin").write_bytes(b"\x89PNG\r\n\x00\x00\x01binary")
    with pytest.raises(ToolError, match="binary"):
        await read(ctx, path="img.bin")


async def test_read_missing_file_suggests_neighbour(ctx, tmp_path):
    (tmp_path / "config.py").write_text("x = 1\n")
    with pytest.raises(ToolError, match="File not found: confg.py.*config.py"):
        await read(ctx, path="confg.py")


async def test_read_directory_suggests_glob(ctx, tmp_path):
    (tmp_path / "pkg").mkdir()
    with pytest.raises(ToolError, match="directory.*glob"):
        await read(ctx, path="pkg")


async def test_read_empty_file_is_a_note(ctx, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    out = await read(ctx, path="empty.txt")
    assert "empty" in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
async def test_read_permission_denied(ctx, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("x\n")
    secret.chmod(0)
    try:
        with pytest.raises(ToolError, match="Permission denied"):
            await read(ctx, path="secret.txt")
    finally:
        secret.chmod(0o644)


async def test_read_utf8_bom_and_crlf(ctx, tmp_path):
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfh\xc3\xa9llo\r\nworld\r\n")
    assert await read(ctx, path="bom.txt") == "     1\théllo\n     2\tworld"


async def test_read_latin1_falls_back(ctx, tmp_path):
    (tmp_path / "l1.txt").write_bytes("caf\xe9\nna\xefve\n".encode("latin-1"))
    assert await read(ctx, path="l1.txt") == "     1\tcafé\n     2\tnaïve"


async def test_read_absolute_path_inside_workspace(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("hi\n")
    assert await read(ctx, path=str(tmp_path / "a.txt")) == "     1\thi"


# ---------------------------------------------------------------- confinement


async def test_dotdot_outside_is_refused(ctx, tmp_path):
    with pytest.raises(ToolError, match="outside the workspace"):
        await read(ctx, path="../outside.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        await write(ctx, path="../outside.txt", content="x")
    assert not (tmp_path.parent / "outside.txt").exists()


async def test_absolute_outside_is_refused(ctx, tmp_path_factory):
    other = tmp_path_factory.mktemp("other") / "f.txt"
    other.write_text("keep\n")
    with pytest.raises(ToolError, match="outside the workspace"):
        await read(ctx, path=str(other))
    with pytest.raises(ToolError, match="outside the workspace"):
        await edit(ctx, path=str(other), old_string="keep", new_string="lose")
    assert other.read_text() == "keep\n"


async def test_symlink_to_outside_is_refused(ctx, tmp_path, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    (other / "f.txt").write_text("keep\n")
    (tmp_path / "link").symlink_to(other)
    (tmp_path / "flink.txt").symlink_to(other / "f.txt")
    for path in ("link/f.txt", "flink.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            await read(ctx, path=path)
        with pytest.raises(ToolError, match="outside the workspace"):
            await write(ctx, path=path, content="lose")
    with pytest.raises(ToolError, match="outside the workspace"):
        await write(ctx, path="link/new.txt", content="x")
    assert (other / "f.txt").read_text() == "keep\n"
    assert not (other / "new.txt").exists()


# ---------------------------------------------------------------- write_file


async def test_write_creates_parents_and_counts_lines(ctx, tmp_path):
    out = await write(ctx, path="deep/er/new.py", content="a\nb\nc\n")
    assert (tmp_path / "deep/er/new.py").read_text() == "a\nb\nc\n"
    assert "deep/er/new.py" in out and "3 lines" in out
    assert len(out.splitlines()) == 1


async def test_write_overwrites_and_keeps_mode(ctx, tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("old\n")
    script.chmod(0o751)
    out = await write(ctx, path="run.sh", content="#!/bin/sh\necho new")
    assert script.read_text() == "#!/bin/sh\necho new"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert "2 lines" in out
    assert [p.name for p in tmp_path.iterdir()] == ["run.sh"]  # no temp file left behind


async def test_write_new_file_gets_normal_mode(ctx, tmp_path):
    await write(ctx, path="n.txt", content="x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "n.txt").stat().st_mode) == 0o666 & ~umask


async def test_write_to_directory_is_refused(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        await write(ctx, path="d", content="x")


async def test_write_under_a_file_is_refused(ctx, tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ToolError, match="not a directory"):
        await write(ctx, path="f/g.txt", content="x")


async def test_write_through_symlink_inside_keeps_link(ctx, tmp_path):
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "real.txt")
    await write(ctx, path="alias.txt", content="new")
    assert (tmp_path / "alias.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new"


# ---------------------------------------------------------------- edit_file


async def test_edit_replaces_once_and_reports_lines(ctx, tmp_path):
    f = tmp_path / "m.py"
    f.write_text("a = 1\nb = 2\nc = 3\n")
    out = await edit(ctx, path="m.py", old_string="b = 2\n", new_string="b = 20\nbb = 21\n")
    assert f.read_text() == "a = 1\nb = 20\nbb = 21\nc = 3\n"
    assert "1 occurrence" in out and "lines 2-3" in out


async def test_edit_shows_the_changed_lines_in_context_as_read_file_numbers_them(ctx, tmp_path):
    f = tmp_path / "m.py"
    f.write_bytes("".join(f"line {i}\r\n" for i in range(1, 41)).encode())  # CRLF: shown without \r
    out = await edit(ctx, path="m.py", old_string="line 20\n", new_string="LINE TWENTY\nline 20.5\n")
    head, *shown = out.splitlines()
    assert head == "Edited m.py: replaced 1 occurrence (lines 20-21). The changed lines now read:"
    assert shown == (await read(ctx, path="m.py", offset=17, limit=8)).splitlines()[:-1]  # 3 lines either side
    assert shown[3] == "    20\tLINE TWENTY" and shown[-1] == "    24\tline 23"


async def test_edit_shows_a_few_changes_and_counts_the_rest(ctx, tmp_path):
    f = tmp_path / "m.py"
    f.write_text("".join(f"x{i} = old\n" for i in range(100)))
    out = await edit(ctx, path="m.py", old_string="= old", new_string="= new", replace_all=True)
    assert "x0 = new" in out and "x99 = new" not in out
    assert out.splitlines()[-1] == "   ... and 95 more changes, not shown"
    assert len(out) < 2_000


async def test_edit_context_of_long_lines_stays_short(ctx, tmp_path):
    f = tmp_path / "min.js"
    f.write_text("".join(f"var a{i}=1;{'x' * 5000}\n" for i in range(40)))
    out = await edit(ctx, path="min.js", old_string="=1;", new_string="=2;", replace_all=True)
    assert f.read_text().count("=2;") == 40
    assert len(out) < 12_000 and out.endswith("the lines are long; read_file shows them)")


async def test_edit_multiple_matches_is_an_error_with_count(ctx, tmp_path):
    f = tmp_path / "m.py"
    f.write_text("x = 1\ny = 1\nz = 1\n")
    with pytest.raises(ToolError, match="matches 3 times.*lines 1, 2, 3.*replace_all"):
        await edit(ctx, path="m.py", old_string="= 1", new_string="= 2")
    assert f.read_text() == "x = 1\ny = 1\nz = 1\n"


async def test_edit_replace_all(ctx, tmp_path):
    f = tmp_path / "m.py"
    f.write_text("x = 1\ny = 1\nz = 1\n")
    out = await edit(ctx, path="m.py", old_string="= 1", new_string="= 2", replace_all=True)
    assert f.read_text() == "x = 2\ny = 2\nz = 2\n"
    assert "3 occurrences" in out and "1, 2, 3" in out


async def test_edit_no_match_points_at_whitespace(ctx, tmp_path):
    (tmp_path / "m.py").write_text("def f():\n\treturn 1\n")
    with pytest.raises(ToolError, match="not found.*whitespace"):
        await edit(ctx, path="m.py", old_string="def f():\n    return 1", new_string="x")


async def test_edit_no_match_names_closest_line(ctx, tmp_path):
    (tmp_path / "m.py").write_text("import os\n\ndef compute_total(items):\n    pass\n")
    with pytest.raises(ToolError, match="not found.*closest line is 3"):
        await edit(ctx, path="m.py", old_string="def compute_totals(items):", new_string="x")


async def test_edit_no_match_spots_line_number_prefixes(ctx, tmp_path):
    (tmp_path / "m.py").write_text("a = 1\nb = 2\n")
    with pytest.raises(ToolError, match="line-number prefixes"):
        await edit(ctx, path="m.py", old_string="     2\tb = 2", new_string="b = 3")


async def test_edit_identical_strings_is_an_error(ctx, tmp_path):
    (tmp_path / "m.py").write_text("a\n")
    with pytest.raises(ToolError, match="identical"):
        await edit(ctx, path="m.py", old_string="a", new_string="a")


async def test_edit_missing_file_suggests_write_file(ctx):
    with pytest.raises(ToolError, match="File not found.*write_file"):
        await edit(ctx, path="nope.py", old_string="a", new_string="b")


async def test_edit_binary_is_refused(ctx, tmp_path):
    (tmp_path / "b.bin").write_bytes(b"ab\x00cd")
    with pytest.raises(ToolError, match="binary"):
        await edit(ctx, path="b.bin", old_string="ab", new_string="xy")


async def test_edit_keeps_crlf_byte_for_byte(ctx, tmp_path):
    f = tmp_path / "win.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = await edit(ctx, path="win.txt", old_string="two\nthree", new_string="2\n3\n3.5")
    assert f.read_bytes() == b"one\r\n2\r\n3\r\n3.5\r\n"
    assert "lines 2-4" in out
    # A single-line old_string with a multi-line new_string also gets CRLF.
    await edit(ctx, path="win.txt", old_string="one", new_string="zero\none")
    assert f.read_bytes() == b"zero\r\none\r\n2\r\n3\r\n3.5\r\n"


async def test_edit_keeps_latin1_byte_for_byte(ctx, tmp_path):
    f = tmp_path / "l1.txt"
    original = "# caf\xe9\nname = 'na\xefve'\nend\n".encode("latin-1")
    f.write_bytes(original)
    await edit(ctx, path="l1.txt", old_string="name = 'naïve'", new_string="name = 'été'")
    assert f.read_bytes() == "# caf\xe9\nname = '\xe9t\xe9'\nend\n".encode("latin-1")


async def test_edit_latin1_rejects_unencodable(ctx, tmp_path):
    f = tmp_path / "l1.txt"
    f.write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(ToolError, match="latin-1"):
        await edit(ctx, path="l1.txt", old_string="caf", new_string="€")
    assert f.read_bytes() == "caf\xe9\n".encode("latin-1")


async def test_edit_keeps_utf8_bom(ctx, tmp_path):
    f = tmp_path / "bom.txt"
    f.write_bytes(b"\xef\xbb\xbfhello\r\nworld\r\n")
    await edit(ctx, path="bom.txt", old_string="world", new_string="w\xf6rld")
    assert f.read_bytes() == b"\xef\xbb\xbfhello\r\nw\xc3\xb6rld\r\n"


async def test_edit_keeps_mode(ctx, tmp_path):
    f = tmp_path / "x.sh"
    f.write_text("echo a\n")
    f.chmod(0o700)
    await edit(ctx, path="x.sh", old_string="a", new_string="b")
    assert stat.S_IMODE(f.stat().st_mode) == 0o700
    assert f.read_text() == "echo b\n"
