"""The transcript store when the disk says no, and the files it keeps open."""

from __future__ import annotations

import json
import os

import pytest

from agentcli.core.door import SessionError
from agentcli.core.events import AssistantMessage, Notice, SubagentFinished
from agentcli.core.storage.store import open_store, projects_home
from agentcli.ui.slash import goodbye
from tests.fakes.anthropic_server import offers_tool, text, tool_use


def delegate(server):
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}),
        text("Auth is in src/app/auth.py."),
    )
    server.when(
        lambda b: not offers_tool(b, "task"),
        tool_use("grep", {"pattern": "def handle_auth"}),
        text("handle_auth: src/app/auth.py:9"),
    )


async def test_a_full_disk_mid_session_is_one_warning_and_the_session_goes_on(server, make_session):
    delegate(server)
    session, recorder = make_session()
    session.store.subagent_dir.mkdir(parents=True)
    (session.store.subagent_dir / "sa-1.jsonl").symlink_to("/dev/full")  # every write: no space left on device
    run = await session.send("Use a subagent to find auth")
    assert run.status == "done" and run.text == "Auth is in src/app/auth.py."
    [warning] = [n for n in recorder.of(Notice) if n.level == "warning"]
    assert "sa-1.jsonl" in warning.text and "no space left" in warning.text
    assert warning.text.endswith("the rest of this session will not be saved.")
    # The front end still saw everything; the disk has what came before the failure.
    assert recorder.of(SubagentFinished, status="done") and recorder.of(AssistantMessage, agent_id="main")
    kinds = [json.loads(line)["type"] for line in session.store.main_path.read_text().splitlines()]
    assert kinds[:2] == ["session_started", "user_message"] and "subagent_started" not in kinds
    assert goodbye(session, "agentcli -c") == (
        f"Session {session.id} is saved only up to where writing failed "
        "(no space left on device); resume it with: agentcli -c"
    )
    session.clear()  # the store is off: no second warning, no exception
    assert len([n for n in recorder.of(Notice) if n.level == "warning"]) == 1
    server.assert_no_rejections()


def test_opening_a_session_makes_no_folder_until_its_first_record(repo):
    """`make run` quit with nothing sent left an empty project data folder."""
    store, _ = open_store(repo, "claude-sonnet-4-5")
    store.close()
    assert not projects_home().exists()
    store, _ = open_store(repo, "claude-sonnet-4-5")
    store.write(AssistantMessage(content=[{"type": "text", "text": "Hello."}]))
    store.close()
    assert store.main_path.exists()


@pytest.mark.parametrize("spoil", ["file", "read-only"])
def test_a_data_folder_that_cannot_be_written_is_one_sentence(repo, spoil):
    home = projects_home()
    if spoil == "file":
        home.parent.mkdir(parents=True)
        home.write_text("")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        home.mkdir(parents=True)
        home.chmod(0o555)
    with pytest.raises(SessionError) as caught:
        open_store(repo, "claude-sonnet-4-5")
    message = str(caught.value)
    assert message.startswith(f"Cannot save sessions in {home}/") and "AGENTCLI_HOME" in message
    assert "\n" not in message


def open_paths() -> list[str]:
    """The files this process has open now."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return found


async def test_a_finished_subagent_file_is_closed(server, make_session):
    delegate(server)
    session, _ = make_session()
    await session.send("Use a subagent to find auth")
    child = session.store.subagent_dir / "sa-1.jsonl"
    assert child.exists() and str(child) not in open_paths()
    assert str(session.store.main_path) in open_paths()  # the main file stays open: it holds the lock
    # A late record for the child opens its file again and lands after the finish.
    session.store.append_record("sa-1", {"type": "note", "text": "late"})
    assert json.loads(child.read_text().splitlines()[-1])["type"] == "note"
