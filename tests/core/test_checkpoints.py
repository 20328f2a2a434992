"""Checkpoints and rewind: files the agents changed go back as they were; the conversation goes back
to a valid history; an edit the user made by hand is never overwritten silently."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from agentcli.core.door import SessionError
from agentcli.core.events import Rewound
from agentcli.core.storage.checkpoints import BASH_UNKNOWN, TOO_LARGE
from tests.fakes.anthropic_server import last_user_text, offers_tool, reply, text, tool_use, tool_use_block

EDITS = {"bypassPermissions": "permission_mode"}


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the work tree but .git, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def child(server, marker: str, *steps) -> None:
    """A subagent whose brief holds ``marker`` takes ``steps``, then answers."""
    server.when(
        lambda b: not offers_tool(b, "task") and marker in json.dumps(b["messages"][0]), *steps, text(f"{marker} done")
    )


async def test_three_parallel_children_then_rewind_files_leaves_the_tree_as_it_was(server, make_session, repo):
    server.when(
        lambda b: offers_tool(b, "task"),
        reply(
            tool_use_block("task", {"description": "Edit auth", "prompt": "child-1: edit auth"}),
            tool_use_block("task", {"description": "Edit views", "prompt": "child-2: edit views"}),
            tool_use_block("task", {"description": "New notes", "prompt": "child-3: add notes"}),
        ),
        text("All three are done."),
    )
    child(
        server,
        "child-1",
        tool_use("read_file", {"path": "src/app/auth.py"}),
        tool_use("edit_file", {"path": "src/app/auth.py", "old_string": "import hashlib", "new_string": "import hmac"}),
    )
    child(server, "child-2", tool_use("bash", {"command": "printf 'broken\\n' > src/app/views.py"}))
    child(
        server,
        "child-3",
        tool_use("write_file", {"path": "NOTES.md", "content": "notes\n"}),
        tool_use("bash", {"command": "mkdir -p out && echo x > out/made.txt && rm README.md"}),
    )
    before = tree(repo)
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("Make three changes in parallel")
    after = tree(repo)
    children = [json.dumps(body["messages"])[-600:] for body in server.requests if not offers_tool(body, "task")]
    assert after != before and "NOTES.md" in after and "README.md" not in after, children  # what each child saw
    assert after["src/app/views.py"] == b"broken\n"

    [point] = session.checkpoints.list()
    assert point.prompt == 1
    assert set(point.files) == {"src/app/auth.py", "src/app/views.py", "NOTES.md", "out/made.txt", "README.md"}
    restore = session.rewind(1, conversation=False, files=True)
    assert restore.changed_by_hand == [] and restore.not_kept == []
    assert tree(repo) == before
    status = (
        await asyncio.to_thread(
            subprocess.run,
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=repo,
            capture_output=True,
            text=True,
        )
    ).stdout
    assert status == ""


async def test_rewinding_the_conversation_sends_the_history_before_that_prompt(server, make_session, resume):
    server.when(lambda b: last_user_text(b) == "first", text("one"))
    server.when(lambda b: last_user_text(b) == "second", text("two"))
    server.when(lambda b: last_user_text(b) == "third", text("three"))
    session, recorder = make_session()
    await session.send("first")
    await session.send("second")
    session.rewind(2, conversation=True, files=False)
    [event] = recorder.of(Rewound)
    assert event.to_prompt == 2 and event.prompt == "second"
    await session.send("third")  # the stand-in rejects a history the API would reject
    sent = server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert json.dumps(sent).count("second") == 0 and "first" in json.dumps(sent[0])
    session.close()

    # Resumed, the session has the rewound history too, and numbers the prompts on.
    resumed, _ = resume(continue_=True)
    texts = json.dumps(resumed.main.messages)
    assert "second" not in texts and "first" in texts and "third" in texts
    assert [p.text for p in resumed.prompt_list()] == ["first", "second", "third"]


async def test_a_file_edited_by_hand_after_the_checkpoint_is_reported_not_overwritten(server, make_session, repo):
    server.when(
        lambda b: True,
        tool_use("read_file", {"path": "README.md"}),
        tool_use("write_file", {"path": "README.md", "content": "agent text\n"}),
        text("Rewrote it."),
    )
    original = (repo / "README.md").read_bytes()
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("rewrite the readme")
    (repo / "README.md").write_text("my own edit\n")
    restore = session.rewind(1, conversation=False, files=True)
    assert restore.changed_by_hand == ["README.md"] and restore.restored == []
    assert (repo / "README.md").read_text() == "my own edit\n"
    restore = session.rewind(1, conversation=False, files=True, overwrite=True)
    assert restore.restored == ["README.md"] and (repo / "README.md").read_bytes() == original


async def test_checkpoints_survive_continue(server, make_session, repo, resume):
    server.when(
        lambda b: True,
        tool_use("read_file", {"path": "README.md"}),
        tool_use("edit_file", {"path": "README.md", "old_string": "Demo", "new_string": "Changed"}),
        text("Edited."),
    )
    original = (repo / "README.md").read_bytes()
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("edit the readme")
    session.close()
    resumed, _ = resume(continue_=True)
    assert [p.files for p in resumed.checkpoints.list()] == [["README.md"]]
    resumed.rewind(1, conversation=True, files=True)
    assert (repo / "README.md").read_bytes() == original
    assert resumed.main.messages == []
    with pytest.raises(SessionError, match="no prompt 5"):
        resumed.rewind(5, conversation=True, files=True)


async def test_too_large_and_unknown_bash_changes_are_noted(server, make_session, repo):
    (repo / "big.txt").write_text("x" * 4000)
    (repo / "src" / "app" / "views.py").write_text("edited by the user, not committed\n")
    server.when(
        lambda b: True,
        tool_use("read_file", {"path": "big.txt"}),
        tool_use("write_file", {"path": "big.txt", "content": "small\n"}),
        tool_use("bash", {"command": "echo more >> src/app/views.py"}),
        text("Done."),
    )
    session, _ = make_session(permission_mode="bypassPermissions", checkpoint_file_max_mb=0.001)
    await session.send("shrink big.txt and touch views")
    [point] = session.checkpoints.list()
    assert f"big.txt: {TOO_LARGE}" in point.notes
    assert f"src/app/views.py: {BASH_UNKNOWN}" in point.notes
    restore = session.rewind(1, conversation=False, files=True)
    assert sorted(restore.not_kept) == ["big.txt", "src/app/views.py"]
    assert (repo / "big.txt").read_text() == "small\n"


async def test_a_folder_turned_into_a_link_out_of_the_workspace_is_not_written_through(
    server, make_session, repo, tmp_path
):
    server.when(
        lambda b: True,
        tool_use("read_file", {"path": "src/app/auth.py"}),
        tool_use(
            "edit_file", {"path": "src/app/auth.py", "old_string": "hashlib", "new_string": "hmac", "replace_all": True}
        ),
        text("Edited."),
    )
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("edit auth")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "src" / "app" / "auth.py").rename(outside / "auth.py")
    (repo / "src" / "app" / "views.py").unlink()
    (repo / "src" / "app").rmdir()
    (repo / "src" / "app").symlink_to(outside)
    restore = session.rewind(1, conversation=False, files=True, overwrite=True)
    assert restore.not_kept == ["src/app/auth.py"] and restore.restored == []
    assert "hmac" in (outside / "auth.py").read_text()  # the file behind the link is untouched


async def test_a_worktree_child_s_changes_are_not_checkpoints_of_the_main_tree(server, make_session, repo):
    server.when(
        lambda b: offers_tool(b, "task"),
        reply(
            tool_use_block(
                "task", {"description": "Isolated", "prompt": "child in a worktree", "isolation": "worktree"}
            )
        ),
        text("Done."),
    )
    child(server, "child in a worktree", tool_use("bash", {"command": "echo changed > README.md && echo x > new.txt"}))
    before = tree(repo)
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("work in isolation")
    assert tree(repo) == before
    assert session.checkpoints.list() == []  # nothing of the main tree changed, so nothing to put back


def test_a_scan_leaves_out_a_write_in_flight(repo):
    """A scan taken while another agent's write_file is between its temporary file and the rename (parallel
    children) does not count the temporary file as a file of the tree; a file merely ending in .tmp counts."""
    from agentcli.core.storage.checkpoints import scan_tree

    (repo / "src" / "app" / ".auth.py.3e6445ec.tmp").write_text("half written")
    (repo / "notes.tmp").write_text("mine")
    scan = scan_tree(repo)
    assert scan is not None
    assert "notes.tmp" in scan.stats and "src/app/auth.py" in scan.stats
    assert "src/app/.auth.py.3e6445ec.tmp" not in scan.stats
