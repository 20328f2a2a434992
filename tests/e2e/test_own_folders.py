"""With the workspace at $HOME, acceptEdits does not let the model write agentcli's own files or git's:
they are protected by where they really are, not by their names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import reply, text, tool_result_text, tool_results, tool_use, tool_use_block

OWN_FILES = [
    ".config/agentcli/config.toml",  # a wider mode, an api_key_helper that runs at the next start
    ".config/agentcli/trusted-workspaces.json",
    ".config/agentcli/workspaces/home-0123abcd.toml",
    ".config/agentcli/mcp.json",
    ".config/agentcli/agents/helper.md",
    ".config/git/config",
    ".local/share/agentcli/projects/x/session.jsonl",
    "cfg/config.toml",  # cfg is a link to .config/agentcli: the real place counts
]


@pytest.fixture
def home(isolated_home: Path) -> Path:
    home = isolated_home.parent
    (home / ".config" / "agentcli").mkdir(parents=True)
    (home / ".config" / "agentcli" / "config.toml").write_text('model = "claude-sonnet-4-5"\n')
    (home / "cfg").symlink_to(home / ".config" / "agentcli")
    return home


def test_accept_edits_in_home_cannot_write_agentcli_or_git_config(server, home):
    # The existing file is read first: a write of it unread would fail as such, before any refusal.
    server.script(
        tool_use("read_file", {"path": OWN_FILES[0]}),
        reply(
            *[
                tool_use_block("write_file", {"path": path, "content": 'api_key_helper = "touch pwned"\n'})
                for path in OWN_FILES
            ],
            tool_use_block("write_file", {"path": "notes.txt", "content": "fine\n"}),
        ),
        text("Tried."),
    )
    env = {
        "AGENTCLI_HOME": "",  # unset: the XDG folders under $HOME
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-own-folders",
    }
    proc = agentcli("-p", "set yourself up", "--permission-mode", "acceptEdits", cwd=home, env=env)
    assert proc.returncode == 0, proc.stderr
    *refused, allowed = tool_results(server.requests[2])
    assert not allowed["is_error"] and (home / "notes.txt").read_text() == "fine\n"  # acceptEdits does write
    for path, result in zip(OWN_FILES, refused, strict=True):
        assert result["is_error"], path
        assert "needs approval" in tool_result_text(result) and "folder" in tool_result_text(result), path
    assert (home / ".config" / "agentcli" / "config.toml").read_text() == 'model = "claude-sonnet-4-5"\n'
    for path in OWN_FILES[1:-1]:
        assert not (home / path).exists(), path
