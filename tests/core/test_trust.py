"""Which project settings need the workspace trusted, and how the answers are remembered."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from agentcli import config, trust
from agentcli.config import ConfigError, Settings, load_settings, split_widening


def write_project(root: Path, text: str) -> None:
    (root / ".agentcli").mkdir(exist_ok=True)
    (root / ".agentcli" / "settings.toml").write_text(text)


def test_every_setting_is_classified_neutral_or_widening():
    fields = {f.name for f in dataclasses.fields(Settings)} - config.NOT_SETTINGS
    assert fields == config.NEUTRAL | config.WIDENING, "classify each new setting in config.NEUTRAL or WIDENING"
    assert not config.NEUTRAL & config.WIDENING


def test_split_keeps_narrowing_and_neutral_settings():
    kept, widening = split_widening(
        {
            "model": "opus",
            "max_turns": 5,
            "permission_mode": "plan",
            "keep_secret_env": False,
            "permissions": {"deny": ["bash(rm *)"], "ask": ["bash(git push *)"], "allow": ["bash"]},
        }
    )
    assert kept == {
        "model": "opus",
        "max_turns": 5,
        "permission_mode": "plan",
        "keep_secret_env": False,
        "permissions": {"deny": ["bash(rm *)"], "ask": ["bash(git push *)"]},
    }
    assert widening == {"permissions": {"allow": ["bash"]}}
    for mode in ("acceptEdits", "bypassPermissions"):
        assert split_widening({"permission_mode": mode}) == ({}, {"permission_mode": mode})
    assert split_widening({"keep-secret-env": "yes"}) == ({}, {"keep-secret-env": "yes"})


def test_untrusted_project_widening_is_ignored_and_trusted_applies(tmp_path, isolated_home):
    user = isolated_home / "config" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[permissions]\nallow = ["bash(npm test *)"]\n')
    write_project(
        tmp_path,
        'permission_mode = "bypassPermissions"\nkeep_secret_env = true\nmax_turns = 7\n'
        '[permissions]\nallow = ["bash"]\ndeny = ["bash(rm *)"]\n',
    )
    untrusted = load_settings(tmp_path, env={})
    assert (untrusted.permission_mode, untrusted.keep_secret_env, untrusted.max_turns) == ("default", False, 7)
    assert untrusted.permissions == {"allow": ["bash(npm test *)"], "deny": ["bash(rm *)"]}  # the user's own stay
    trusted = load_settings(tmp_path, env={}, trusted=True)
    assert (trusted.permission_mode, trusted.keep_secret_env) == ("bypassPermissions", True)
    assert trusted.permissions == {"allow": ["bash(npm test *)", "bash"], "deny": ["bash(rm *)"]}
    # The user's own flags still widen in an untrusted workspace: they are the user's.
    assert load_settings(tmp_path, {"permission_mode": "acceptEdits"}, env={}).permission_mode == "acceptEdits"


def test_a_bad_widening_value_is_an_error_even_untrusted(tmp_path):
    write_project(tmp_path, 'permission_mode = "yolo"\n')
    with pytest.raises(ConfigError, match="permission mode must be one of"):
        load_settings(tmp_path, env={})
    write_project(tmp_path, 'keep_secret_env = "maybe"\n')
    with pytest.raises(ConfigError, match="'keep_secret_env' must be true or false"):
        load_settings(tmp_path, env={})


def test_the_request_lists_each_item_and_hashes_only_widening_content(tmp_path):
    assert trust.request_for(tmp_path).sources == ()
    write_project(tmp_path, 'model = "opus"\npermission_mode = "plan"\n[permissions]\ndeny = ["bash"]\n')
    assert trust.request_for(tmp_path).sources == ()  # narrowing only: nothing to trust
    write_project(tmp_path, 'permission_mode = "acceptEdits"\n[permissions]\nallow = ["bash(make *)", "edit_file"]\n')
    request = trust.request_for(tmp_path)
    assert request.root == tmp_path.resolve()
    assert request.lines() == [
        ".agentcli/settings.toml",
        '  permission_mode = "acceptEdits" (file edits run without asking)',
        "  allow rule bash(make *) (runs without asking)",
        "  allow rule edit_file (runs without asking)",
    ]
    digest = request.digest
    write_project(
        tmp_path,
        '# a comment\nmodel = "opus"\npermission_mode = "acceptEdits"\n'
        '[permissions]\nallow = ["bash(make *)", "edit_file"]\ndeny = ["bash(rm *)"]\n',
    )
    assert trust.request_for(tmp_path).digest == digest  # neutral and narrowing changes keep the answer
    write_project(tmp_path, 'permission_mode = "acceptEdits"\n[permissions]\nallow = ["bash(make *)", "bash"]\n')
    assert trust.request_for(tmp_path).digest != digest


def test_answers_are_kept_in_the_user_config_per_path_and_digest(tmp_path, isolated_home):
    write_project(tmp_path, "keep_secret_env = true\n")
    request = trust.request_for(tmp_path)
    assert trust.answer_for(request) is None
    trust.remember(request, True)
    assert trust.store_path() == isolated_home / "config" / "trusted-workspaces.json"
    assert trust.answer_for(request) is True
    other = tmp_path / "other"
    other.mkdir()
    write_project(other, "keep_secret_env = true\n")
    assert trust.answer_for(trust.request_for(other)) is None  # same content, another path
    assert trust.revoke(tmp_path) and not trust.revoke(tmp_path)
    assert trust.answer_for(request) is None


def test_a_damaged_answer_file_means_ask_again(tmp_path):
    write_project(tmp_path, "keep_secret_env = true\n")
    trust.store_path().parent.mkdir(parents=True)
    for damaged in ("{not json", '["a list"]', json.dumps({"workspaces": {str(tmp_path.resolve()): "yes"}})):
        trust.store_path().write_text(damaged)
        assert trust.answer_for(trust.request_for(tmp_path)) is None


def test_a_new_source_plugs_into_the_same_decision(tmp_path, monkeypatch):
    """What issue 17 adds (hooks; .mcp.json is one already): one more function in SOURCES, the same answer."""
    (tmp_path / "hooks.json").write_text('{"x": "evil"}')
    monkeypatch.setattr(
        trust,
        "SOURCES",
        trust.SOURCES + [lambda root: [trust.Source(root / "hooks.json", ("hook x: evil",), {"x": "evil"})]],
    )
    request = trust.request_for(tmp_path)
    assert request.lines() == ["hooks.json", "  hook x: evil"]
    assert not trust.settle(tmp_path, headless=True).trusted
    trust.remember(request, True)
    assert trust.settle(tmp_path, headless=True).trusted


def test_headless_without_anything_to_trust_says_nothing(tmp_path):
    assert trust.settle(tmp_path, headless=True) == trust.Outcome(True)
    write_project(tmp_path, "keep_secret_env = true\n")
    outcome = trust.settle(tmp_path, headless=True)
    assert not outcome.trusted and outcome.notice.endswith("pass --trust-workspace to apply it.")
    assert trust.settle(tmp_path, headless=True, flag=True) == trust.Outcome(True)
    assert trust.remembered() == {}  # the flag is for one run


def write_claude(root: Path, name: str, data: dict[str, Any]) -> None:
    import json

    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / name).write_text(json.dumps(data))


def test_claude_code_settings_narrow_untrusted_and_widen_trusted(tmp_path):
    write_claude(
        tmp_path,
        "settings.json",
        {
            "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(.env)"], "defaultMode": "acceptEdits"},
            "env": {"X": "1"},
            "hooks": {},
        },
    )  # keys agentcli does not read yet ask for nothing
    write_claude(tmp_path, "settings.local.json", {"permissions": {"ask": ["Bash(git push:*)"]}})
    untrusted = load_settings(tmp_path, env={})
    assert untrusted.permission_mode == "default"
    assert untrusted.permissions == {"deny": ["Read(.env)"], "ask": ["Bash(git push:*)"]}
    trusted = load_settings(tmp_path, env={}, trusted=True)
    assert trusted.permission_mode == "acceptEdits" and trusted.permissions["allow"] == ["Bash(npm run test:*)"]
    assert trust.request_for(tmp_path).lines() == [
        ".claude/settings.json",
        '  permissions.defaultMode = "acceptEdits" (file edits run without asking)',
        "  allow rule Bash(npm run test:*) (runs without asking)",
    ]
    # The agentcli file is read last, so it wins; both files are under the one decision.
    write_project(tmp_path, 'permission_mode = "plan"\n[permissions]\nallow = ["bash(make *)"]\n')
    assert load_settings(tmp_path, env={}, trusted=True).permission_mode == "plan"
    assert [line for line in trust.request_for(tmp_path).lines() if not line.startswith(" ")] == [
        ".claude/settings.json",
        ".agentcli/settings.toml",
    ]


def test_a_broken_claude_settings_file_is_one_sentence(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{nope")
    with pytest.raises(ConfigError, match=r"settings\.json is not valid JSON"):
        load_settings(tmp_path, env={})
    write_claude(tmp_path, "settings.json", {"permissions": {"defaultMode": "dontAsk", "deny": ["Bash(rm:*)"]}})
    assert load_settings(tmp_path, env={}).permission_mode == "default"  # a mode agentcli lacks is left out


def test_a_file_cannot_forge_lines_of_the_question_or_send_escapes(tmp_path):
    write_project(tmp_path, '[permissions]\nallow = ["bash(make *)\\n  (nothing else asked)\\u001b[2J"]\n')
    lines = trust.request_for(tmp_path).lines()
    assert lines == [
        ".agentcli/settings.toml",
        "  allow rule bash(make *)\\n  (nothing else asked)\\x1b[2J (runs without asking)",
    ]
    assert "\x1b" not in trust.request_for(tmp_path).summary()


def test_a_workspace_cannot_turn_the_sandbox_off_or_open_the_network_untrusted(tmp_path, isolated_home):
    write_project(tmp_path, 'sandbox = "off"\nsandbox_network = true\n')
    untrusted = load_settings(tmp_path, env={})
    assert (untrusted.sandbox, untrusted.sandbox_network) == ("auto", False)
    trusted = load_settings(tmp_path, env={}, trusted=True)
    assert (trusted.sandbox, trusted.sandbox_network) == ("off", True)
    [(_, asks, _)] = config.project_settings_sources(tmp_path)
    assert any(line.startswith("sandbox = 'off'") for line in asks) and any("sandbox_network" in a for a in asks)
    write_project(tmp_path, 'sandbox = "on"\nsandbox_network = false\n')  # tightening needs no trust
    assert load_settings(tmp_path, env={}).sandbox == "on"
    assert config.project_settings_sources(tmp_path) == []
    write_project(tmp_path, 'sandbox = "maybe"\n')
    with pytest.raises(ConfigError, match="sandbox must be one of auto, on, off"):
        load_settings(tmp_path, env={})
    assert load_settings(tmp_path / "elsewhere", env={"AGENTCLI_SANDBOX": "off"}).sandbox == "off"  # the user's own


def test_a_workspace_s_allowed_hosts_need_trust(tmp_path, isolated_home):
    write_project(tmp_path, 'sandbox_allowed_hosts = ["evil.example"]\n')
    assert load_settings(tmp_path, env={}).sandbox_allowed_hosts == []
    assert load_settings(tmp_path, env={}, trusted=True).sandbox_allowed_hosts == ["evil.example"]
    [(_, asks, _)] = config.project_settings_sources(tmp_path)
    assert asks == ["sandbox_allowed_hosts = ['evil.example'] (commands in the OS sandbox may connect to these hosts)"]
    write_project(tmp_path, 'sandbox_allowed_hosts = "pypi.org"\n')
    with pytest.raises(ConfigError, match="'sandbox_allowed_hosts' must be a list of host names"):
        load_settings(tmp_path, env={}, trusted=True)
