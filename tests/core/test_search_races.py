"""grep and glob under attack: the folder (or a folder above the file) they are given is swapped for a link
outside, again and again, while they run. rg searches from a descriptor of the folder, so nothing outside
is read or listed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.search import Glob, Grep
from tests.conftest import RACE_ROUNDS, TOOLS
from tests.core.test_file_races import exchange


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    root.mkdir()
    return ToolContext(workspace=Workspace.at(root), emit=lambda e: None, permissions=Permissions(), settings=TOOLS)


async def test_swapping_the_searched_folder_for_a_link_never_leaks_outside_files(ctx, tmp_path):
    root = ctx.workspace.root
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("OUTSIDE SECRET\n")
    (outside / "only-outside.txt").write_text("OUTSIDE SECRET too\n")
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_text("inside d\n")
    (root / ".dir-link").symlink_to(outside)
    stop = threading.Event()

    def swap_back_and_forth() -> None:
        for _ in range(10_000_000):  # bounded; stops as soon as the calls are done
            if stop.is_set():
                return
            exchange(root / "d", root / ".dir-link")

    thread = threading.Thread(target=swap_back_and_forth, daemon=True)
    thread.start()
    outputs: list[str] = []
    rounds = 0

    def landed_between_swaps() -> bool:
        return "d/f.txt:1:inside d" in outputs and "d/f.txt" in outputs

    try:
        # The rounds asked for, and more while no call has yet landed between two swaps (a loaded machine can
        # keep the swapping thread ahead for a long while), up to fifty times as many.
        while rounds < 60 * RACE_ROUNDS or (not landed_between_swaps() and rounds < 3000 * RACE_ROUNDS):
            rounds += 1
            for call in (
                Grep().run({"pattern": "SECRET|inside", "path": "d"}, ctx),
                Grep().run({"pattern": "SECRET|inside", "path": "d/f.txt"}, ctx),
                Glob().run({"pattern": "*.txt", "path": "d"}, ctx),
            ):
                try:
                    outputs.append(await call)
                except ToolError as exc:
                    outputs.append(str(exc))
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive(), "the swapping thread never stopped"
    assert not [out for out in outputs if "OUTSIDE" in out or "only-outside" in out]
    assert landed_between_swaps(), f"no call landed between swaps in {rounds} rounds"
    assert not [out for out in outputs if "unexpectedly" in out]


def test_globs_written_from_the_root_are_rewritten_for_the_folder_searched(tmp_path):
    from agentcli.core.tools.glob_patterns import rebased_globs

    root = tmp_path / "ws"
    src = root / "src"
    assert rebased_globs("*.py", root, src) == ["*.py"]  # no slash: any depth, anywhere
    assert rebased_globs("src/**/*.ts", root, src) == ["/**/*.ts"]
    assert rebased_globs("!src/gen/*.ts", root, src) == ["!/gen/*.ts"]
    assert rebased_globs("lib/*.ts", root, src) == []  # nothing under src can match
    assert rebased_globs("src", root, src / "a") == ["**"]  # the search lies inside what it names
    assert rebased_globs("*/secrets/", root, src) == ["/secrets/"]
    assert set(rebased_globs("**/x/y", root, src / "x")) == {"/y", "/**/x/y"}
    assert rebased_globs(str(tmp_path / "ws/src/.env"), root, src) == ["/.env"]  # absolute, as rules write them
