"""Language servers a Claude Code plugin brings (``lspServers``: ``.lsp.json`` or plugin.json's), read into the
lsp tool's servers; one from a plugin that lives in the workspace needs the workspace's trust."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentcli.config import load_settings
from agentcli.core.lsp.server import LanguageServers
from agentcli.core.lsp.specs import available
from agentcli.core.lsp.tool import LspTool
from agentcli.core.system.sandbox import Sandbox
from agentcli.core.system.secret_env import command_env
from tests.core.test_lsp import PYLSP, context, project


def plugin(folder: Path, servers: dict[str, object], inline: dict[str, object] | None = None) -> Path:
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "langs", **({"lspServers": inline} if inline else {})})
    )
    (folder / ".lsp.json").write_text(json.dumps(servers))
    return folder


def python_server(**more: object) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": [PYLSP],
        "extensionToLanguage": {".py": "python", ".pyi": "python"},
        **more,
    }


async def test_a_plugin_s_language_server_serves_the_lsp_tool_with_its_folder_named(tmp_path):
    folder = plugin(
        tmp_path / "langs",
        {"py": python_server(env={"WHERE": "${CLAUDE_PLUGIN_ROOT}/bin"})},
        inline={"go": {"command": "gopls", "extensionToLanguage": {".go": "go"}, "startupTimeout": 5}},
    )
    root = project(tmp_path / "repo")
    settings = load_settings(root, plugin_dirs=[str(folder)])
    [py, go] = settings.plugin_lsp
    assert (py.command, py.languages, py.patterns, py.env, py.plugin_root) == (
        (sys.executable, PYLSP),
        ("python",),
        ("*.py", "*.pyi"),
        (("WHERE", f"{folder.resolve()}/bin"),),
        str(folder.resolve()),
    )
    assert (go.command, go.patterns) == (("gopls",), ("*.go",))
    servers = LanguageServers(
        available({}, on_path=False, plugins=settings.plugin_lsp), root, command_env(), Sandbox("auto"), timeout=60
    )
    try:
        found = await LspTool(servers).run(
            {"operation": "references", "path": "pkg/a.py", "line": 1, "symbol": "handle_request"}, context(root)
        )
    finally:
        await servers.stop()
    assert found.splitlines()[0] == "references of `handle_request`: 3 places"


def test_a_malformed_lsp_json_skips_the_plugin_in_one_sentence(tmp_path):
    folder = plugin(tmp_path / "langs", {"py": {"command": "pylsp", "extensionToLanguage": {"py": "python"}}})
    settings = load_settings(tmp_path, plugin_dirs=[str(folder)])
    assert settings.plugin_lsp == [] and settings.plugins == []
    assert settings.notices == [
        "Skipped the plugin langs@inline: the plugin langs: lspServers.py.extensionToLanguage "
        'must map file endings to languages ({".py": "python"}).'
    ]


def test_a_plugin_that_lives_in_an_untrusted_workspace_starts_no_language_server(tmp_path):
    """The attack: the user installed a plugin from a marketplace kept in a repository they cloned (a local folder
    is used where it is); the repository then gives the plugin a .lsp.json whose command is its own. Untrusted,
    no server of that plugin is offered to start; trusted, it is."""
    root = tmp_path / "repo"
    folder = plugin(root / "tools" / "langs", {"py": python_server(command="./tools/run-me")})
    claude = Path.home() / ".claude"
    (claude / "plugins").mkdir(parents=True)
    (claude / "plugins" / "installed_plugins.json").write_text(
        json.dumps(
            {
                "version": 2,
                "plugins": {"langs@repo-tools": [{"scope": "user", "installPath": str(folder), "version": "1.0.0"}]},
            }
        )
    )
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"langs@repo-tools": True}}))
    untrusted = load_settings(root, trusted=False)
    assert [plugin.key for plugin in untrusted.plugins] == ["langs@repo-tools"] and untrusted.plugin_lsp == []
    assert (
        "The language servers of the plugin langs@repo-tools do not start: the workspace provides the plugin, "
        "and it is not trusted."
    ) in untrusted.notices
    assert [spec.command[0] for spec in load_settings(root, trusted=True).plugin_lsp] == ["./tools/run-me"]
    given = load_settings(root, trusted=False, plugin_dirs=[str(folder)])  # one the user names is theirs
    assert [spec.command[0] for spec in given.plugin_lsp] == ["./tools/run-me"]
