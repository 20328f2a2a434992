"""Claude Code's setting sources (``--setting-sources``, the Agent SDK's ``setting_sources``) choose which
settings files, and which command, agent and skill folders, load; trust still limits the project's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeSDKClient, SystemMessage

from agentcli import paths
from agentcli.config import load_settings
from agentcli.core.engine.agents import load_agent_types
from agentcli.core.engine.custom_commands import load_commands
from agentcli.core.engine.skills import load_skills
from tests.e2e.test_agent_sdk import cli_path, options  # noqa: F401 - the fixture
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text
from tests.narrow import found


@pytest.fixture
def layered(tmp_path: Path) -> Path:
    """A workspace with a settings file of each source, each adding one deny rule that names it."""
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    (root / ".agentcli").mkdir()
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text('permissions = {deny = ["bash(user *)"]}\n')
    paths.workspace_config_file(root).parent.mkdir(parents=True, exist_ok=True)
    paths.workspace_config_file(root).write_text('permissions = {deny = ["bash(local-own *)"]}\n')
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(project-claude:*)"], "allow": ["Bash(widen:*)"]}})
    )
    (root / ".claude" / "settings.local.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(local-claude:*)"]}})
    )
    (root / ".agentcli" / "settings.toml").write_text('permissions = {deny = ["bash(project-own *)"]}\n')
    return root


def denied(settings) -> set[str]:
    return {found(r"^\w+\(([\w-]+)", rule)[1] for rule in settings.permissions.get("deny", [])}


@pytest.mark.parametrize(
    "sources, names",
    [
        (None, {"user", "local-own", "project-claude", "local-claude", "project-own"}),
        ([], set()),
        (["user"], {"user"}),
        (["project"], {"project-claude", "project-own"}),
        (["local"], {"local-own", "local-claude"}),
        (["user", "project"], {"user", "project-claude", "project-own"}),
    ],
)
def test_only_the_named_sources_load(layered, sources, names):
    settings = load_settings(layered, sources=sources)
    assert denied(settings) == names
    assert settings.setting_sources == [s for s in ("user", "project", "local") if sources is None or s in sources]


def test_project_settings_still_need_trust_to_widen(layered):
    assert "allow" not in load_settings(layered, sources=["project"]).permissions
    assert len(load_settings(layered, sources=["project"], trusted=True).permissions["allow"]) == 1
    assert "allow" not in load_settings(layered, sources=["user"], trusted=True).permissions


def test_command_agent_and_skill_folders_follow_the_sources(tmp_path):
    root = tmp_path / "ws"
    for where, name in ((paths.config_home(), "mine"), (root / ".claude", "theirs")):
        (where / "commands").mkdir(parents=True)
        (where / "commands" / f"{name}.md").write_text("Do it.\n")
        (where / "agents").mkdir(parents=True)
        (where / "agents" / f"{name}-agent.md").write_text(f"---\nname: {name}-agent\ndescription: d\n---\nBe brief.\n")
        (where / "skills" / f"{name}-skill").mkdir(parents=True)
        (where / "skills" / f"{name}-skill" / "SKILL.md").write_text(
            f"---\nname: {name}-skill\ndescription: d\n---\nx\n"
        )
    for sources, kept in (
        ((), set()),
        (("user",), {"mine"}),
        (("project",), {"theirs"}),
        (("user", "project"), {"mine", "theirs"}),
    ):
        assert set(load_commands(root, sources=sources)) == kept
        assert {
            n.removesuffix("-agent")
            for n in load_agent_types(root, trusted=True, sources=sources)
            if n.endswith("-agent")
        } == kept
        assert {n.removesuffix("-skill") for n in load_skills(root, sources=sources)} == kept


def test_the_flag_loads_no_settings_when_empty_and_names_an_unknown_source(server, api_env, layered):
    server.script(text("4"))
    paths.user_config_file().write_text('model = "claude-haiku-4-5"\n')
    proc = agentcli("-p", "2+2?", "--setting-sources", "", "--output-format", "json", cwd=layered, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == "4"
    assert server.requests[0]["model"] != "claude-haiku-4-5"  # the user's file was not read
    bad = agentcli("-p", "hi", "--setting-sources", "user,policy", cwd=layered, env=api_env)
    assert bad.returncode == 2 and "unknown setting source 'policy'" in bad.stderr
    assert "Traceback" not in bad.stderr and len(server.requests) == 1


async def test_the_sdk_sees_the_commands_of_the_sources_it_named(server, api_env, repo, cli_path):
    (repo / ".claude" / "commands").mkdir(parents=True)
    (repo / ".claude" / "commands" / "commit.md").write_text("---\ndescription: Commit it\n---\nCommit.\n")
    server.script(text("4"), text("4"))
    seen = []
    for sources in (["project"], []):
        async with ClaudeSDKClient(options(cli_path, repo, api_env, setting_sources=sources)) as client:
            info = await client.get_server_info()
            await client.query("2+2?")
            init = [m async for m in client.receive_response() if isinstance(m, SystemMessage)][0]
        seen.append((info and info["commands"], init.data["slash_commands"]))
    assert seen[0] == ([{"name": "commit", "description": "Commit it", "argumentHint": ""}], ["commit"])
    assert seen[1] == ([], [])
