"""A Claude Code user's own ~/.claude/settings.json: its hooks run and its permission rules apply in agentcli, as
the user's own (no trust asked, no sandbox), and what agentcli cannot use in it is left out with one notice."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.config import load_settings
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use

HOOK = 'cat > "$HOME/hook-input.json"'  # the user's own hook: it writes into their home, outside any workspace


def claude_settings(data: dict[str, object], folder: Path | None = None) -> Path:
    path = (folder or Path.home() / ".claude") / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_a_claude_code_users_hooks_and_rules_work_unchanged(server, api_env, repo):
    claude_settings(
        {
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": HOOK}]}]},
            "permissions": {"deny": ["Bash(git push:*)"]},
            "enabledPlugins": {},
        }
    )
    server.script(
        tool_use("bash", {"command": "git push origin main"}), tool_use("bash", {"command": "true"}), text("Done.")
    )
    proc = agentcli("-p", "push it", "--permission-mode", "bypassPermissions", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    refused = tool_result_text(tool_results(server.requests[1])[0])
    assert "denied by the rule `Bash(git push:*)`" in refused  # the user's deny rule held, even in bypass
    seen = json.loads((Path.home() / "hook-input.json").read_text())  # the hook ran, on the bash call that ran
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_input"]["command"] == "true"
    assert "not trusted" not in proc.stderr  # the user's own file asks no trust


def test_what_agentcli_cannot_use_is_left_out_with_one_notice(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))  # Claude Code's own way to move it
    claude_settings(
        {
            "hooks": {
                "TeammateIdle": [{"hooks": [{"type": "command", "command": "true"}]}],
                "Stop": [
                    {"hooks": [{"type": "prompt", "prompt": "Is it done?"}]},
                    {"hooks": [{"type": "command", "command": "echo stop"}]},
                ],
            },
            "permissions": {
                "allow": ["Bash(npm test:*)", "NoSuchTool(((", "Read(src/**)"],
                "defaultMode": "acceptEdits",
            },
            "model": "opus",
        },
        tmp_path / "claude-config",
    )
    settings = load_settings(repo)
    assert [group["hooks"][0]["command"] for group in settings.hooks["Stop"]] == ["echo stop"]
    assert settings.permissions["allow"] == ["Bash(npm test:*)", "Read(src/**)"]
    assert settings.permission_mode == "acceptEdits"
    [notice] = [n for n in settings.notices if "settings.json" in n]
    assert "TeammateIdle hooks" in notice and "type 'command'" in notice and "NoSuchTool" in notice
    assert load_settings(repo, sources=["project"]).hooks == {}  # --setting-sources without user leaves it out

    claude_settings({"hooks": "not a table"}, tmp_path / "claude-config")
    assert any("settings.json" in n for n in load_settings(repo).notices)
    (tmp_path / "claude-config" / "settings.json").write_text("{ not json")
    assert any("not a readable JSON file" in n for n in load_settings(repo).notices)  # and agentcli still starts
