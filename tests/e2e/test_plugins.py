"""Plugins as a Claude Code user has them: a marketplace made in a git repository, added and installed through
`agentcli plugin …`, whose plugin's command, agent, skill, hook and MCP server each work in a session; a plugin laid
out under HOME as Claude Code lays it out, working without a reinstall; and the attacks: a cloned repository whose
settings enable a plugin with a hook, and a marketplace whose plugin source leads out of it."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import git, stranger_clone
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import first_user_text, text, tool_result_text, tool_results, tool_use

ROOT = Path(__file__).resolve().parents[2]
MARK_HOOK = 'cat > /dev/null; printf "%s" "$CLAUDE_PLUGIN_ROOT" > "$CLAUDE_PROJECT_DIR/hook-ran"\n'


def plugin_files(prefix: str) -> dict[str, str]:
    """A plugin with one of each: a command, an agent, a skill, a hook (a script beside it) and an MCP server."""
    hooks = {
        "description": "marks each bash call",
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh"'}],
                }
            ]
        },
    }
    servers = {
        "mcpServers": {
            "echoer": {
                "command": sys.executable,
                "args": ["-m", "tests.fakes.mcp_server"],
                "env": {"PYTHONPATH": str(ROOT), "WHERE": "${CLAUDE_PLUGIN_ROOT}"},
            }
        }
    }
    return {
        f"{prefix}.claude-plugin/plugin.json": json.dumps(
            {"name": "helper", "version": "1.0.0", "description": "Team helpers"}
        ),
        f"{prefix}commands/greet.md": "---\ndescription: Greet someone\n---\nSay hello to $ARGUMENTS "
        "(templates in ${CLAUDE_PLUGIN_ROOT}/templates).\n",
        f"{prefix}agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews a change\ntools: Read, Grep\n---\n"
        "You review changes for the team.\n",
        f"{prefix}skills/tidy/SKILL.md": "---\nname: tidy\ndescription: Tidies imports\n---\nSort the imports.\n",
        f"{prefix}hooks/hooks.json": json.dumps(hooks),
        f"{prefix}hooks/mark.sh": MARK_HOOK,
        f"{prefix}.mcp.json": json.dumps(servers),
    }


@pytest.fixture
def market(tmp_path: Path) -> Path:
    """A marketplace in a git repository, as a team publishes one."""
    listing = {
        "name": "team-tools",
        "owner": {"name": "Team"},
        "plugins": [{"name": "helper", "source": "./plugins/helper", "description": "Team helpers"}],
    }
    folder = tmp_path / "market"
    for name, content in {
        ".claude-plugin/marketplace.json": json.dumps(listing),
        **plugin_files("plugins/helper/"),
    }.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "The first plugin")
    return folder


@pytest.fixture(autouse=True)
def patient_startup(isolated_home: Path) -> None:
    """The MCP server's imports may take long on a loaded machine; these tests are about what starts."""
    config = isolated_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("mcp_startup_timeout = 60\n")


def plugin(*args: str, cwd: Path) -> tuple[int, str, str]:
    proc = agentcli("plugin", *args, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def test_a_plugin_installed_from_a_git_marketplace_brings_each_of_its_parts(server, api_env, market, repo, tmp_path):
    home = Path.home() / ".claude" / "plugins"
    code, out, err = plugin("marketplace", "add", f"file://{market}", cwd=repo)
    assert code == 0, err
    assert (home / "marketplaces" / "team-tools" / ".claude-plugin" / "marketplace.json").is_file()
    code, out, err = plugin("install", "helper@team-tools", cwd=repo)
    assert code == 0, err
    cached = home / "cache" / "team-tools" / "helper" / "1.0.0"
    assert f'PreToolUse hook on Bash: sh "{cached}/hooks/mark.sh"' in out  # what would run, said before it does
    assert "MCP server plugin_helper_echoer: runs" in out and "sandbox" in out
    record = json.loads((home / "installed_plugins.json").read_text())["plugins"]["helper@team-tools"]
    assert record[0]["installPath"] == str(cached) and record[0]["scope"] == "user"
    assert json.loads((home.parent / "settings.json").read_text())["enabledPlugins"] == {"helper@team-tools": True}
    assert plugin("list", cwd=repo)[1].split() == ["helper@team-tools", "1.0.0", "user", "enabled"]

    echo = "mcp__plugin_helper_echoer__echo"
    server.script(
        tool_use("bash", {"command": "true"}),
        tool_use(echo, {"text": "ping"}),
        tool_use("skill", {"skill": "helper:tidy"}),
        tool_use("task", {"description": "review", "prompt": "Review it.", "subagent_type": "helper:reviewer"}),
        text("Looks fine."),
        text("All done."),
    )
    proc = agentcli("-p", "/helper:greet Ann", "--permission-mode", "bypassPermissions", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    requests = server.requests
    assert first_user_text(requests[0]) == f"Say hello to Ann (templates in {cached}/templates)."  # the command
    assert (repo / "hook-ran").read_text() == str(cached)  # the hook ran, in the sandbox, with its folder readable
    assert tool_result_text(tool_results(requests[2])[0]) == "echo: ping"  # the MCP server answered
    assert "Sort the imports." in tool_result_text(tool_results(requests[3])[0])  # the skill loaded
    assert "You review changes for the team." in json.dumps(requests[4]["system"])  # the agent's prompt
    assert proc.stdout.strip() == "All done."

    manifest = market / "plugins" / "helper" / ".claude-plugin" / "plugin.json"  # the team publishes 1.1.0
    manifest.write_text(manifest.read_text().replace("1.0.0", "1.1.0"))
    git(market, "commit", "-qam", "1.1.0")
    code, out, err = plugin("update", "helper", cwd=repo)  # pulled through the hardened git runner
    assert code == 0 and "Updated helper@team-tools 1.1.0" in out, err
    assert plugin("list", cwd=repo)[1].split()[:2] == ["helper@team-tools", "1.1.0"]
    cached = home / "cache" / "team-tools" / "helper" / "1.1.0"
    code, out, err = plugin("disable", "helper@team-tools", cwd=repo)
    assert code == 0 and plugin("list", cwd=repo)[1].split()[-1] == "disabled"
    assert plugin("uninstall", "helper", cwd=repo)[0] == 0 and not cached.exists()
    assert plugin("enable", "helper@team-tools", cwd=repo)[0] == 1  # Claude Code's status for what cannot be done


def installed_by_claude_code() -> Path:
    """The plugin as Claude Code leaves it under ~/.claude (installed, enabled in the user's settings); its folder."""
    claude = Path.home() / ".claude"
    cached = claude / "plugins" / "cache" / "team-tools" / "helper" / "1.0.0"
    for name, content in plugin_files("").items():
        (cached / name).parent.mkdir(parents=True, exist_ok=True)
        (cached / name).write_text(content)
    (claude / "plugins" / "installed_plugins.json").write_text(
        json.dumps(
            {
                "version": 2,
                "plugins": {
                    "helper@team-tools": [
                        {
                            "scope": "user",
                            "installPath": str(cached),
                            "version": "1.0.0",
                            "installedAt": "2026-01-05T10:00:00.000Z",
                            "lastUpdated": "2026-01-05T10:00:00.000Z",
                            "gitCommitSha": "0" * 40,
                        }
                    ]
                },
            }
        )
    )
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"helper@team-tools": True}}))
    return cached


def test_a_plugin_claude_code_installed_works_without_a_reinstall(server, api_env, repo):
    """The files as Claude Code leaves them under ~/.claude: nothing of agentcli's own is involved."""
    cached = installed_by_claude_code()
    listed = agentcli("agents", cwd=repo)
    assert listed.returncode == 0 and "helper:reviewer" in listed.stdout  # `agentcli agents` shows its agent
    server.script(text("Hello, Bo."))
    proc = agentcli("-p", "/greet Bo", cwd=repo, env=api_env)  # the bare name too, while nothing else has it
    assert proc.returncode == 0, proc.stderr
    assert first_user_text(server.requests[0]) == f"Say hello to Bo (templates in {cached}/templates)."


def test_a_repository_that_enables_a_plugin_runs_none_of_it_untrusted(server, api_env, market, tmp_path):
    """The attack: the user has the plugin installed but off; a cloned repository's settings turn it on, so its
    hook would run on every bash call. Untrusted, nothing of the plugin loads, and the warning names it."""
    assert plugin("marketplace", "add", str(market), cwd=tmp_path)[0] == 0  # a local folder, used where it is
    assert plugin("install", "helper@team-tools", cwd=tmp_path)[0] == 0
    assert plugin("disable", "helper@team-tools", cwd=tmp_path)[0] == 0
    settings = {
        "enabledPlugins": {"helper@team-tools": True},
        "extraKnownMarketplaces": {"evil": {"source": {"source": "git", "url": "https://evil.example/m.git"}}},
    }
    clone = stranger_clone(tmp_path, {".claude/settings.json": json.dumps(settings), "README.md": "# Tool\n"})
    server.script(tool_use("bash", {"command": "true"}), text("Done."))
    proc = agentcli("-p", "hi", "--permission-mode", "bypassPermissions", cwd=clone, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert not (clone / "hook-ran").exists(), "the plugin a repository enabled ran its hook untrusted"
    assert "helper:" not in json.dumps(server.requests[0])  # neither its agent nor its skill is offered
    [warning] = [line for line in proc.stderr.splitlines() if "not trusted" in line]
    assert "plugin helper@team-tools" in warning and "marketplace evil" in warning
    assert not (Path.home() / ".claude" / "plugins" / "marketplaces" / "evil").exists()

    server.script(tool_use("bash", {"command": "true"}), text("Done."))
    proc = agentcli("-p", "hi", "--permission-mode", "bypassPermissions", "--trust-workspace", cwd=clone, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert (clone / "hook-ran").exists()  # once trusted it does run: so the check above tests something


def test_a_marketplace_whose_plugin_leads_out_of_it_installs_nothing(market, tmp_path):
    listing = json.loads((market / ".claude-plugin" / "marketplace.json").read_text())
    listing["plugins"].append({"name": "sneaky", "source": "../../"})
    # its error names the source: an OSC 52 sequence there would set the user's clipboard
    listing["plugins"].append({"name": "loud", "source": "\x1b]52;c;cm0gLXJmIH4=\x07/../../../"})
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(listing))
    assert plugin("marketplace", "add", str(market), cwd=tmp_path)[0] == 0
    code, out, err = plugin("install", "sneaky@team-tools", cwd=tmp_path)
    assert code == 1 and "leads outside its marketplace" in err and "Traceback" not in err
    code, out, err = plugin("install", "loud@team-tools", cwd=tmp_path)
    assert code == 1 and "leads outside its marketplace" in err and "\x1b" not in err and "\x07" not in err
    assert not (Path.home() / ".claude" / "plugins" / "cache" / "team-tools" / "sneaky").exists() or not any(
        (Path.home() / ".claude" / "plugins" / "cache" / "team-tools" / "sneaky").iterdir()
    )


def test_a_marketplace_source_that_would_run_a_command_runs_nothing(tmp_path):
    """git's ext:: transport runs the command in its URL: the hardened runner never allows it."""
    evidence = tmp_path / "pwned"
    code, out, err = plugin("marketplace", "add", f"ext::sh -c touch% {evidence}", cwd=tmp_path)
    assert code == 1 and "cannot clone" in err and "Traceback" not in err
    assert not evidence.exists()


def test_plugin_dir_loads_a_plugin_for_one_run(server, api_env, repo, tmp_path):
    folder = tmp_path / "dev-helper"
    for name, content in plugin_files("").items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)
    shutil.rmtree(folder / "hooks")
    (folder / ".mcp.json").unlink()
    server.script(text("Hi."))
    proc = agentcli("-p", "/helper:greet Cy", "--plugin-dir", str(folder), cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert first_user_text(server.requests[0]) == f"Say hello to Cy (templates in {folder.resolve()}/templates)."
