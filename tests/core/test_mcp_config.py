"""MCP configuration: Claude Code's format, where it comes from, trust, rules and agent files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli import trust
from agentcli.config import ConfigError, load_settings
from agentcli.core.engine.agents import parse_agent_file
from agentcli.core.mcp.config import McpConfigError, ServerConfig, from_flag, load, parse
from agentcli.core.mcp.tool import tool_name
from agentcli.core.policy.rules import Rule


def write(path: Path, servers: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def test_claude_code_format_stdio_and_http():
    servers = parse(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "srv"], "env": {"LEVEL": "debug"}},
                "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "${DOCS_KEY}"}},
                "plain-url": {"url": "http://localhost:9/mcp"},
            }
        },
        "f.json",
    )
    assert servers["files"] == ServerConfig(
        "files", "stdio", "f.json", command="npx", args=("-y", "srv"), env=(("LEVEL", "debug"),)
    )
    assert servers["docs"].transport == "http" and servers["docs"].headers == (("X-Key", "${DOCS_KEY}"),)
    assert servers["plain-url"].transport == "http"


@pytest.mark.parametrize(
    "spec, problem",
    [
        ({"type": "ftp"}, "unknown type 'ftp'"),
        ({"command": ""}, 'needs a "command"'),
        ({"command": "x", "args": "a b"}, '"args" must be a list of strings'),
        ({"command": "x", "env": {"A": 1}}, '"env" must be an object of strings'),
        ({"type": "http", "url": "ftp://x"}, 'needs a "url"'),
    ],
)
def test_bad_server_definitions_are_one_sentence(spec, problem):
    with pytest.raises(McpConfigError, match="f.json: MCP server 'x'") as caught:
        parse({"mcpServers": {"x": spec}}, "f.json")
    assert problem in str(caught.value)


def test_a_server_name_must_fit_a_tool_name():
    with pytest.raises(McpConfigError, match="letters, digits"):
        parse({"mcpServers": {"my server": {"command": "x"}}}, "f.json")
    assert tool_name("srv", "do.thing/now") == "mcp__srv__do_thing_now"
    assert len(tool_name("s" * 40, "t" * 60)) == 64


def test_variables_are_filled_in_when_the_server_starts():
    server = parse(
        {
            "mcpServers": {
                "x": {"type": "http", "url": "https://${HOST}/mcp", "headers": {"A": "Bearer ${TOKEN:-none}"}}
            }
        },
        "f",
    )["x"]
    filled = server.expanded({"HOST": "example.com"})
    assert filled.url == "https://example.com/mcp" and filled.headers == (("A", "Bearer none"),)
    with pytest.raises(McpConfigError, match=r"\$\{HOST\} is not set"):
        server.expanded({})


def test_flag_takes_inline_json_or_a_file(tmp_path):
    assert "a" in from_flag('{"mcpServers": {"a": {"command": "x"}}}')
    write(tmp_path / "m.json", {"b": {"command": "y"}})
    assert "b" in from_flag(str(tmp_path / "m.json"))
    with pytest.raises(McpConfigError, match="not valid"):
        from_flag("{nope")


def test_project_servers_need_trust_and_the_users_own_win_by_name(tmp_path, isolated_home):
    write(tmp_path / ".mcp.json", {"shared": {"command": "repo-version"}, "repo-only": {"command": "r"}})
    write(isolated_home / "config" / "mcp.json", {"shared": {"command": "my-version"}})
    untrusted = load(tmp_path, ['{"mcpServers": {"flagged": {"command": "f"}}}'], trusted=False)
    assert set(untrusted.servers) == {"shared", "flagged"} and untrusted.servers["shared"].command == "my-version"
    assert set(untrusted.untrusted) == {"repo-only"}
    trusted = load(tmp_path, [], trusted=True)
    assert set(trusted.servers) == {"shared", "repo-only"} and trusted.servers["shared"].command == "my-version"
    assert trusted.servers["repo-only"].project
    assert set(load_settings(tmp_path, trusted=False).mcp_servers) == {"shared"}


def test_the_trust_question_shows_what_would_start_and_a_change_asks_again(tmp_path):
    write(tmp_path / ".mcp.json", {"helper": {"command": "python", "args": ["-m", "helper"]}})
    request = trust.request_for(tmp_path)
    assert request.lines() == [".mcp.json", "  MCP server helper: runs `python -m helper`"]
    trust.remember(request, True)
    assert trust.settle(tmp_path, headless=True).trusted
    write(tmp_path / ".mcp.json", {"helper": {"command": "python", "args": ["-m", "helper", "--evil"]}})
    outcome = trust.settle(tmp_path, headless=True)
    assert not outcome.trusted and "MCP server helper" in outcome.notice


def test_the_trust_question_shows_env_and_header_values_that_could_pass_on_a_secret(tmp_path):
    write(
        tmp_path / ".mcp.json",
        {
            "a": {"command": "srv", "env": {"KEY": "${ANTHROPIC_API_KEY}"}},
            "b": {
                "type": "http",
                "url": "https://x.example/mcp",
                "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
            },
        },
    )
    lines = trust.request_for(tmp_path).lines()
    assert "  MCP server a: runs `srv` with env KEY='${ANTHROPIC_API_KEY}'" in lines
    assert (
        "  MCP server b: connects to https://x.example/mcp (http) with headers Authorization='Bearer ${GITHUB_TOKEN}'"
    ) in lines


def test_a_broken_project_file_is_a_clear_error(tmp_path):
    (tmp_path / ".mcp.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"\.mcp\.json is not valid JSON"):
        trust.request_for(tmp_path)


def test_rules_name_a_server_or_one_tool():
    server_rule, tool_rule = Rule.parse("mcp__docs"), Rule.parse("mcp__docs__search")
    assert server_rule.covers("mcp__docs__search") and server_rule.covers("mcp__docs__fetch")
    assert not server_rule.covers("mcp__docsextra__search") and not server_rule.covers("mcp__other__x")
    assert tool_rule.covers("mcp__docs__search") and not tool_rule.covers("mcp__docs__fetch")


def test_agent_files_may_list_mcp_tools():
    agent = parse_agent_file(
        "---\nname: a\ndescription: d\ntools: read_file, mcp__docs__search, mcp__web\n---\nx", source="a.md"
    )
    assert agent.tools == ("read_file", "mcp__docs__search", "mcp__web")


def test_opening_a_session_with_servers_loads_no_mcp_sdk(tmp_path):
    """The SDK is imported when the servers start (after the first screen), in a thread: never before."""
    code = (
        "import sys; from agentcli.config import Settings; from agentcli.core.mcp.config import parse; "
        "from agentcli.core.assembly import assemble; from agentcli.core.system.workspace import Workspace; "
        "s = Settings(); s.mcp_servers = parse({'mcpServers': {'x': {'command': 'true'}}}, 't'); "
        f"assemble(s.engine(), Workspace.at({str(tmp_path)!r}), None, interactive=True, store=False); "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'pydantic'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
