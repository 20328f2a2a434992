"""File tools under concurrency and attack: lost updates, stale edits, symlink swaps, odd paths.

Every agent of a session shares one lock per file, and an edit is refused when the file
changed since that agent last read or wrote it. Opening never follows a symlink swapped in
after the path was checked, so neither reads nor temporary files can land outside.
"""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.events import Notice
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import ToolRegistry, default_tools
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.edit import EditFile
from agentcli.core.tools.files import ReadFile, WriteFile
from tests.conftest import RACE_ROUNDS, TOOLS
from tests.fakes.anthropic_server import (
    find_tool_use,
    first_user_text,
    offers_tool,
    reply,
    text,
    tool_result_text,
    tool_results,
    tool_use_block,
)
from tests.narrow import of
from tests.waiting import wait_until

STALE = "changed since you read it"
UNREAD = "You have not read"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    root.mkdir()
    return ToolContext(workspace=Workspace.at(root), emit=lambda e: None, permissions=Permissions(), settings=TOOLS)


def as_agent(ctx: ToolContext, agent_id: str) -> ToolContext:
    """Another agent of the same session: same workspace (and ledger), its own reads."""
    return dataclasses.replace(ctx, agent_id=agent_id)


async def read(ctx: ToolContext, path: str) -> str:
    return of(str, await ReadFile().run({"path": path}, ctx))


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
    return await EditFile().run({"path": path, "old_string": old, "new_string": new}, ctx)


async def write(ctx: ToolContext, path: str, content: str) -> str:
    return await WriteFile().run({"path": path, "content": content}, ctx)


def markers(count: int) -> str:
    return "".join(f"MARKER-{k} = old\n" for k in range(count))


# ---------------------------------------------------------------- lost updates


async def test_many_concurrent_edits_by_one_agent_all_land(ctx):
    (ctx.workspace.root / "m.txt").write_text(markers(60))
    await read(ctx, "m.txt")
    outputs = await asyncio.gather(*(edit(ctx, "m.txt", f"MARKER-{k} = old", f"MARKER-{k} = new") for k in range(60)))
    assert all(out.startswith("Edited m.txt") for out in outputs)
    assert (ctx.workspace.root / "m.txt").read_text() == "".join(f"MARKER-{k} = new\n" for k in range(60))


async def test_concurrent_agents_never_lose_an_edit_reported_as_done(ctx):
    """Each edit either lands or is refused as stale; none is reported done and then lost."""
    (ctx.workspace.root / "m.txt").write_text(markers(30))
    agents = [as_agent(ctx, f"sa-{n}") for n in range(3)]
    for agent in agents:
        await read(agent, "m.txt")

    async def attempt(agent: ToolContext, k: int) -> tuple[int, str]:
        try:
            return k, await edit(agent, "m.txt", f"MARKER-{k} = old", f"MARKER-{k} = new")
        except ToolError as exc:
            return k, str(exc)

    outcomes = await asyncio.gather(*(attempt(agents[k % 3], k) for k in range(30)))
    final = (ctx.workspace.root / "m.txt").read_text()
    for k, out in outcomes:
        if out.startswith("Edited"):
            assert f"MARKER-{k} = new" in final, (k, out)
        else:
            assert STALE in out and f"MARKER-{k} = old" in final, (k, out)
    assert any(out.startswith("Edited") for _, out in outcomes)


# ---------------------------------------------------------------- read before edit, changed since read


async def test_edit_and_overwrite_need_a_read_first_but_a_new_file_does_not(ctx):
    (ctx.workspace.root / "a.txt").write_text("alpha\n")
    for change in (edit(ctx, "a.txt", "alpha", "beta"), write(ctx, "a.txt", "gamma\n")):
        with pytest.raises(ToolError, match=f"{UNREAD} a.txt yet; read it with read_file"):
            await change
    assert (ctx.workspace.root / "a.txt").read_text() == "alpha\n"
    assert (await write(ctx, "new.txt", "one\n")).startswith("Created new.txt")
    assert (await edit(ctx, "new.txt", "one", "two")).startswith("Edited new.txt")  # its own write counts


async def test_a_file_changed_since_the_read_is_refused_until_read_again(ctx):
    target = ctx.workspace.root / "a.txt"
    target.write_text("alpha\nbeta\n")
    await read(ctx, "a.txt")
    target.write_text("alpha\nbeta\nadded by the user\n")
    with pytest.raises(ToolError, match=f"a.txt {STALE} .*read it again"):
        await edit(ctx, "a.txt", "beta", "BETA")
    with pytest.raises(ToolError, match=STALE):
        await write(ctx, "a.txt", "replaced\n")
    assert target.read_text() == "alpha\nbeta\nadded by the user\n"
    await read(ctx, "a.txt")
    await edit(ctx, "a.txt", "beta", "BETA")
    assert target.read_text() == "alpha\nBETA\nadded by the user\n"


async def test_another_agents_edit_makes_this_agents_view_stale(ctx):
    (ctx.workspace.root / "a.txt").write_text("one\ntwo\n")
    first, second = as_agent(ctx, "sa-1"), as_agent(ctx, "sa-2")
    await read(first, "a.txt")
    await read(second, "a.txt")
    await edit(first, "a.txt", "one", "ONE")
    with pytest.raises(ToolError, match=STALE):
        await write(second, "a.txt", "one\ntwo\nthree\n")  # would undo sa-1's edit
    assert (ctx.workspace.root / "a.txt").read_text() == "ONE\ntwo\n"
    await edit(first, "a.txt", "two", "TWO")  # sa-1's own writes keep its view fresh


# ---------------------------------------------------------------- three subagents, one file


def is_main(body):
    return offers_tool(body, "task")


def child_turn(body):
    """A scripted child: read the file and edit its markers; after a stale refusal, read again and retry."""
    n = int(first_user_text(body).rsplit(" ", 1)[1])
    results = tool_results(body)
    if not results:
        failed = [
            {"path": "shared.txt", "old_string": f"MARKER-{k} = old", "new_string": f"MARKER-{k} = new"}
            for k in range(8 * n, 8 * n + 8)
        ]
    else:
        failed = [of(dict, find_tool_use(body, r["tool_use_id"]))["input"] for r in results if r.get("is_error")]
        assert all(STALE in tool_result_text(r) for r in results if r.get("is_error")), results
    if not failed:
        return text(f"Child {n} edited its markers.")
    return reply(
        tool_use_block("read_file", {"path": "shared.txt"}), *[tool_use_block("edit_file", args) for args in failed]
    )


async def test_three_subagents_editing_one_file_keep_all_24_edits(server, make_session, repo):
    (repo / "shared.txt").write_text(markers(24))
    start = threading.Barrier(3)  # the three children begin editing at the same moment
    server.when(
        is_main,
        reply(*[tool_use_block("task", {"description": f"Edit {n}", "prompt": f"Edit markers {n}"}) for n in range(3)]),
        text("All edited."),
    )
    for n in range(3):
        server.when(
            lambda b, n=n: not is_main(b) and first_user_text(b) == f"Edit markers {n}" and not tool_results(b),
            lambda body: child_turn(body).with_options(gate=start, gate_timeout=60),
        )
    server.responder = lambda body: None if is_main(body) else child_turn(body)
    session, _ = make_session(permission_mode="acceptEdits")
    result = await session.send("Edit all markers with three subagents")
    assert result.text == "All edited."
    assert (repo / "shared.txt").read_text() == "".join(f"MARKER-{k} = new\n" for k in range(24))
    assert [r.status for r in session.subagents.records.values()] == ["done"] * 3
    server.assert_no_rejections()


# ---------------------------------------------------------------- clash with a finished sibling


async def test_a_write_over_a_finished_siblings_edit_warns(server, make_session, repo):
    server.when(
        is_main,
        reply(
            tool_use_block("task", {"description": "A", "prompt": "Errand A"}),
            tool_use_block("task", {"description": "B", "prompt": "Errand B"}),
        ),
        text("done"),
    )
    server.when(
        lambda b: first_user_text(b) == "Errand A",
        reply(
            tool_use_block("read_file", {"path": "README.md"}),
            tool_use_block("edit_file", {"path": "README.md", "old_string": "Demo", "new_string": "A's"}),
        ),
        text("A edited"),
    )
    holder: dict[str, Any] = {}

    def b_writes_once_a_has_finished(body):
        wait_until(
            lambda: any(
                r.description == "A" and r.status == "done" and r.seconds
                for r in holder["session"].subagents.records.values()
            ),
            "subagent A finishing",
        )
        return reply(
            tool_use_block("read_file", {"path": "README.md"}),
            tool_use_block("write_file", {"path": "README.md", "content": "# B's rewrite\n"}),
        )

    server.when(lambda b: first_user_text(b) == "Errand B", b_writes_once_a_has_finished, text("B wrote"))
    session, events = make_session(permission_mode="acceptEdits")
    holder["session"] = session
    await session.send("go")
    assert (repo / "README.md").read_text() == "# B's rewrite\n"
    [warning] = events.of(Notice, level="warning")
    assert "sa-1" in warning.text and "sa-2" in warning.text and "README.md" in warning.text
    server.assert_no_rejections()


# ---------------------------------------------------------------- symlink swap races


_libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (renameat2 RENAME_EXCHANGE), as an attacker racing the agent would."""
    if _libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), RENAME_EXCHANGE) != 0:  # -100: AT_FDCWD
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


async def test_swapping_symlinks_never_reads_or_writes_outside(ctx, tmp_path):
    """The attack: a name flips between a real file or directory and a link outside, during 2,000 calls."""
    root = ctx.workspace.root
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("OUTSIDE SECRET\n")
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_text("inside d\n")
    (root / "swap").write_text("inside swap\n")
    (root / ".dir-link").symlink_to(outside)
    (root / ".file-link").symlink_to(outside / "f.txt")
    stop = threading.Event()

    def swap_back_and_forth() -> None:
        for _ in range(1_000_000):  # bounded; stops as soon as the calls are done
            if stop.is_set():
                return
            exchange(root / "d", root / ".dir-link")
            exchange(root / "swap", root / ".file-link")

    thread = threading.Thread(target=swap_back_and_forth, daemon=True)
    thread.start()
    outputs: list[str] = []
    try:
        for i in range(500 * RACE_ROUNDS):
            for call in (
                read(ctx, "swap"),
                read(ctx, "d/f.txt"),
                write(ctx, f"d/new-{i}.txt", "x\n"),
                edit(ctx, "d/f.txt", "inside d", f"inside d {i}"),
            ):
                try:
                    outputs.append(await call)
                except ToolError as exc:
                    outputs.append(str(exc))
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive(), "the swapping thread never stopped"
    assert not [out for out in outputs if "OUTSIDE" in out]
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]  # no temp file, no new file outside
    assert (outside / "f.txt").read_text() == "OUTSIDE SECRET\n"
    assert not [out for out in outputs if "unexpectedly" in out]
    assert any(out.startswith("Created d/new-") for out in outputs)  # the calls did run between swaps


async def test_a_symlink_in_place_of_a_resolved_name_is_refused_clearly(ctx, tmp_path):
    """What a swap between resolving and opening looks like, made deterministic."""
    from agentcli.core.tools import file_access, files

    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE SECRET\n")
    root = ctx.workspace.root
    (root / "a.txt").write_text("inside\n")
    resolved = file_access.resolve_path(ctx, "a.txt")
    (root / "a.txt").unlink()
    (root / "a.txt").symlink_to(outside)
    with pytest.raises(ToolError, match="changed while it was being opened"):
        ReadFile()._read(ctx, resolved, 1, 10)
    ctx.workspace.files.saw(ctx.agent_id, resolved, b"anything")
    with pytest.raises(ToolError, match="changed while it was being opened"):
        try:
            files._write(ctx, resolved, "a.txt", "new\n")
        except OSError as exc:
            raise file_access._os_error(exc, "write", "a.txt") from None
    assert outside.read_text() == "OUTSIDE SECRET\n"


# ---------------------------------------------------------------- too-long paths


@pytest.mark.parametrize(
    "path",
    ["x" * 5000, "dir/" + "y" * 300 + ".txt", "a/" * 2100 + "f"],
    ids=["5000-characters", "a-300-character-name", "4201-characters-of-short-names"],
)
@pytest.mark.parametrize(
    "tool, args",
    [
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"old_string": "a", "new_string": "b"}),
        ("grep", {"pattern": "a"}),
        ("glob", {"pattern": "*"}),
    ],
)
async def test_a_too_long_path_is_one_clear_sentence(ctx, path, tool, args):
    registry = ToolRegistry(default_tools(root=ctx.workspace.root))
    ctx = dataclasses.replace(ctx, permissions=Permissions.from_settings("bypassPermissions", None, False))
    outcome = await registry.call(tool, {"path": path, **args}, ctx)
    assert outcome.is_error
    assert "path is too long" in outcome.output and "unexpectedly" not in outcome.output, outcome.output
    assert len(outcome.output) < 300


# ---------------------------------------------------------------- the no-match hint on a big file


async def test_no_match_hint_still_helps_on_a_small_file(ctx):
    (ctx.workspace.root / "s.py").write_text("def f():\n    return compute_total(items)\n")
    await read(ctx, "s.py")
    with pytest.raises(ToolError, match=r"not found in s.py. It matches near line 2 if whitespace is ignored"):
        await edit(ctx, "s.py", "return  compute_total(items)", "return 0")
    with pytest.raises(ToolError, match=r"The closest line is 2: 'return compute_total\(items\)'"):
        await edit(ctx, "s.py", "return compute_totals(items)", "return 0")


async def test_no_match_on_a_million_line_file_is_a_clear_answer(ctx):
    big = ctx.workspace.root / "big.txt"
    big.write_text("".join(f"    value_{i} = compute({i})  # line {i}\n" for i in range(1_000_000)))
    await read(ctx, "big.txt")
    with pytest.raises(ToolError, match=r"^old_string was not found in big.txt\. .*(whitespace|closest line|exactly)"):
        await edit(ctx, "big.txt", "value_999999 =  compute(nothing)", "x")
    with pytest.raises(ToolError, match=r"It matches near line 500001 if whitespace is ignored"):
        await edit(ctx, "big.txt", "value_500000   = compute(500000)", "x")
