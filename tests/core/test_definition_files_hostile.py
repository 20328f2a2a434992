"""Memory, command and agent files a cloned repository holds are read as read_file reads: a link to a secret
elsewhere, to /dev/zero, or a FIFO is skipped with one warning, and the session goes on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcli import paths
from agentcli.core.engine.agents import load_agent_types
from agentcli.core.engine.context import main_system_prompt
from agentcli.core.engine.custom_commands import load_commands
from agentcli.core.events import Notice
from agentcli.core.system.workspace import Workspace
from tests.fakes.anthropic_server import text

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAsecret\n"


@pytest.fixture
def ssh_key(isolated_home: Path) -> Path:
    key = isolated_home.parent / ".ssh" / "id_ed25519"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text(PRIVATE_KEY)
    return key


@pytest.mark.parametrize("case", ["link to ~/.ssh/id_ed25519", "link to /dev/zero", "FIFO", "link outside to a FIFO"])
def test_a_hostile_memory_file_is_skipped_with_one_warning(repo, ssh_key, tmp_path, case):
    (repo / "AGENTS.md").write_text("Use tabs.\n")
    hostile = repo / "CLAUDE.md"
    if case.startswith("link to ~"):
        hostile.symlink_to(ssh_key)
    elif case == "link to /dev/zero":
        hostile.symlink_to("/dev/zero")
    elif case == "FIFO":
        os.mkfifo(hostile)
    else:
        os.mkfifo(tmp_path / "pipe")
        hostile.symlink_to(tmp_path / "pipe")
    warnings: list[str] = []
    system = main_system_prompt(Workspace.at(repo), warnings=warnings)  # returns: no hang, no memory exhausted
    assert "Use tabs." in system  # the run goes on with the files that are fine
    assert "PRIVATE KEY" not in system and "## CLAUDE.md" not in system
    [warning] = warnings
    assert warning.startswith("Skipped the memory file CLAUDE.md: ")
    if case == "FIFO":
        assert "not a regular file" in warning
    else:
        assert "leads outside the workspace" in warning


def test_the_user_memory_may_not_lead_outside_the_users_folders(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("not yours\n")
    user_memory = paths.config_home() / "AGENTS.md"
    user_memory.parent.mkdir(parents=True, exist_ok=True)
    user_memory.symlink_to(elsewhere)
    warnings: list[str] = []
    assert "not yours" not in main_system_prompt(Workspace.at(repo), warnings=warnings)
    assert len(warnings) == 1 and "leads outside your own folders" in warnings[0]


async def test_a_session_says_which_memory_file_it_skipped_and_carries_on(server, make_session, repo, ssh_key):
    (repo / "AGENTS.md").symlink_to(ssh_key)
    server.script(text("Hello."))
    session, recorder = make_session()
    await session.send("hi")
    assert "PRIVATE KEY" not in server.requests[0]["system"][0]["text"]
    notices = [e.text for e in recorder.events if isinstance(e, Notice)]
    assert [n for n in notices if "memory file" in n] == [
        f"Skipped the memory file AGENTS.md: it leads outside the workspace (to {ssh_key})."
    ]
    assert recorder.events[-1].stop_reason == "end_turn"


def test_hostile_command_files_and_folders_are_skipped(repo, ssh_key, tmp_path):
    commands = repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fine.md").write_text("Say hi.\n")
    (commands / "steal.md").symlink_to(ssh_key)
    (commands / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(commands / "hang.md")
    (repo / ".agentcli").mkdir()
    (repo / ".agentcli" / "commands").symlink_to(ssh_key.parent)  # a whole folder elsewhere
    (ssh_key.parent / "walked.md").write_text("from ~/.ssh\n")
    warnings: list[str] = []
    found = load_commands(repo, warnings)
    assert sorted(found) == ["fine"]
    assert sorted(warnings) == sorted(
        [
            "Skipped command file .claude/commands/hang.md: it is not a regular file (it is a device, pipe or socket).",
            f"Skipped command file .claude/commands/steal.md: it leads outside the workspace (to {ssh_key}).",
            "Skipped command file .claude/commands/zero.md: it leads outside the workspace (to /dev/zero).",
            f"Skipped the command folder .agentcli/commands: it leads outside the workspace (to {ssh_key.parent}).",
        ]
    )


def test_hostile_agent_files_are_skipped(repo, ssh_key):
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(agents / "hang.md")
    (agents / "big.md").write_text("---\nname: big\ndescription: d\n---\n" + "x" * 300_000)
    warnings: list[str] = []
    types = load_agent_types(repo, warnings)
    assert "big" not in types and "zero" not in types
    assert sorted(warnings) == [
        "Skipped agent file .claude/agents/big.md: it is larger than 256 kB.",
        "Skipped agent file .claude/agents/hang.md: it is not a regular file (it is a device, pipe or socket).",
        "Skipped agent file .claude/agents/zero.md: it leads outside the workspace (to /dev/zero).",
    ]
