"""What a session prepares off the way to the first screen is ready before the first model call."""

from __future__ import annotations

import asyncio
import subprocess

from agentcli.core.system.git import is_git_repo
from tests.fakes.anthropic_server import text


async def test_the_first_request_carries_the_git_snapshot_and_memory_built_in_the_background(
    make_session, repo, server
):
    (repo / "AGENTS.md").write_text("Always answer in haiku.\n")
    await asyncio.to_thread(subprocess.run, ["git", "-C", str(repo), "checkout", "-q", "-b", "feature-x"], check=True)
    server.when(lambda body: True, text("Done."))
    session, _ = make_session()
    await session.send("hi")  # at once: the prompt may still be in the making
    system = server.requests[0]["system"]
    system = system if isinstance(system, str) else "".join(block["text"] for block in system)
    assert "Current branch: feature-x" in system
    assert "Always answer in haiku." in system
    assert session.main.system == system


async def test_compact_waits_for_the_prompt_too(make_session):
    session, _ = make_session()
    await session.compact()  # too little to compact; the prompt is in place all the same
    assert "# Git" in session.main.system


def test_git_tools_are_offered_below_a_repository_root_by_a_look_at_the_disk(repo, tmp_path):
    assert is_git_repo(repo / "src" / "app")
    assert not is_git_repo(tmp_path)
