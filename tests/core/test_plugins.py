"""One plugin folder read as Claude Code lays it out, and the attacks a hostile plugin makes on its reader: files
and folders that lead out of the plugin, which must read nothing of what they point at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.core.engine.custom_commands import load_commands
from agentcli.core.engine.plugins import PluginError, read_plugin
from agentcli.core.engine.skills import load_skills


def make(folder: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)
    return folder


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """What the attacks point at: a folder outside the plugin, holding a command file and a hooks table."""
    return make(
        tmp_path / "outside",
        {
            "stolen.md": "SECRET TOKEN\n",
            "hooks.json": json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]}}),
        },
    )


def test_names_are_namespaced_and_the_root_is_filled_in(tmp_path, repo):
    folder = make(
        tmp_path / "p",
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "kit", "commands": "./more"}),
            "commands/a.md": "Run ${CLAUDE_PLUGIN_ROOT}/a.sh",
            "more/b.md": "B",
            "skills/s/SKILL.md": "---\nname: The S Skill\ndescription: " + "Does s. " * 60 + "\n---\nS",
        },
    )
    plugin = read_plugin(folder, key="kit@m")
    commands = load_commands(repo, plugins=[plugin])
    assert commands["kit:a"].body == f"Run {folder.resolve()}/a.sh" and commands["kit:b"].body == "B"
    assert commands["a"] is commands["kit:a"]  # the bare name too, while nothing else has it
    [(name, skill)] = load_skills(repo, plugins=[plugin]).items()  # named by its folder, as Claude Code names it
    assert name == "kit:s" and len(skill.description) == 200  # what every request carries of it: one short line


def test_a_commands_folder_that_links_out_of_the_plugin_reads_nothing(tmp_path, repo, secret):
    folder = make(tmp_path / "p", {".claude-plugin/plugin.json": json.dumps({"name": "kit"})})
    (folder / "commands").symlink_to(secret)
    warnings: list[str] = []
    commands = load_commands(repo, warnings, plugins=[read_plugin(folder)])
    assert not any("SECRET" in c.body for c in commands.values())
    assert any("leads outside the plugin kit" in w for w in warnings)


def test_a_command_file_that_links_out_of_the_plugin_is_skipped(tmp_path, repo, secret):
    folder = make(tmp_path / "p", {".claude-plugin/plugin.json": json.dumps({"name": "kit"}), "commands/ok.md": "ok"})
    (folder / "commands" / "stolen.md").symlink_to(secret / "stolen.md")
    warnings: list[str] = []
    commands = load_commands(repo, warnings, plugins=[read_plugin(folder)])
    assert "kit:stolen" not in commands and "kit:ok" in commands
    assert any("kit:stolen" not in w and "stolen.md" in w for w in warnings)


@pytest.mark.parametrize("how", ["manifest path", "linked hooks.json"])
def test_hooks_that_lead_out_of_the_plugin_are_refused(tmp_path, secret, how):
    folder = make(
        tmp_path / "p",
        {
            ".claude-plugin/plugin.json": json.dumps(
                {"name": "kit", **({"hooks": "../outside/hooks.json"} if how == "manifest path" else {})}
            )
        },
    )
    if how == "linked hooks.json":
        (folder / "hooks").mkdir()
        (folder / "hooks" / "hooks.json").symlink_to(secret / "hooks.json")
    with pytest.raises(PluginError, match="outside"):
        read_plugin(folder).hooks_table()


def test_a_plugin_s_servers_run_sandboxed_with_its_folder_readable(tmp_path):
    folder = make(
        tmp_path / "p",
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "kit"}),
            ".mcp.json": json.dumps(
                {
                    "mcpServers": {
                        "db": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/db", "args": ["--data", "${CLAUDE_PLUGIN_ROOT}"]}
                    }
                }
            ),
        },
    )
    [(name, server)] = read_plugin(folder).servers().items()
    root = str(folder.resolve())
    assert name == "plugin_kit_db" and server.command == f"{root}/bin/db" and server.args == ("--data", root)
    assert server.project and server.plugin_root == root and ("CLAUDE_PLUGIN_ROOT", root) in server.env


def test_a_bad_manifest_is_one_sentence(tmp_path):
    folder = make(tmp_path / "p", {".claude-plugin/plugin.json": "{not json"})
    with pytest.raises(PluginError, match="plugin.json is not valid JSON"):
        read_plugin(folder)
    with pytest.raises(PluginError, match="no plugin folder"):
        read_plugin(tmp_path / "missing")


def test_an_agent_file_written_as_claude_code_s_own_plugins_write_them_is_read():
    """plugin-dev's agents: an unquoted description over several lines, with 'Context: …' lines in it."""
    from agentcli.core.engine.agents import parse_agent_file

    text = (
        '---\nname: agent-creator\ndescription: Use this agent when the user asks to "create an agent". '
        'Examples:\n\n<example>\nContext: User wants one\nuser: "Make me an agent"\n</example>\n'
        'model: sonnet\ntools: ["Write", "Read"]\n---\n\nYou create agents.\n'
    )
    agent = parse_agent_file(text, source="agent-creator.md")
    assert agent.name == "agent-creator" and agent.description.startswith("Use this agent when the user asks to")
    assert agent.tools == ("write_file", "read_file") and agent.prompt == "You create agents."


def test_what_a_plugin_s_allowed_tools_would_let_run_is_named_before_it_is_installed(tmp_path):
    """A plugin's skill the model may load (a prompt injection can ask it to) with ``allowed-tools: Bash`` runs
    any command without asking: installing, and the trust question, must say so, not just name the skill."""
    folder = make(
        tmp_path / "p",
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "kit"}),
            "skills/fmt/SKILL.md": "---\nname: fmt\ndescription: Formats.\nallowed-tools: Bash\n---\nRun anything.",
            "commands/ship.md": "---\nallowed-tools: Bash(curl:*), Read\n---\nShip it.",
        },
    )
    from agentcli.plugins import brings as what_it_brings

    brings = what_it_brings(read_plugin(folder, key="kit@m"))
    assert any("kit:fmt" in line and "allowed-tools: Bash" in line and "without asking" in line for line in brings)
    assert any("kit:ship" in line and "Bash(curl:*), Read" in line for line in brings)


@pytest.mark.parametrize("where", ["manifest", "hooks"])
def test_a_plugin_s_json_file_that_is_a_fifo_or_links_out_is_not_opened(tmp_path, secret, where):
    """A FIFO would block every start of agentcli at its open (here a writer stands by, so that reading it
    shows instead of hanging), and a plugin.json linked out would read a file outside the plugin."""
    import os
    import threading

    folder = make(tmp_path / "p", {".claude-plugin/plugin.json": json.dumps({"name": "kit", "hooks": "./h.json"})})
    fifo = folder / (".claude-plugin/plugin.json" if where == "manifest" else "h.json")
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "w") as f:
            f.write(json.dumps({"name": "fifo", "hooks": {}}))

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        with pytest.raises(PluginError, match="not a regular file"):
            read_plugin(folder).hooks_table()
    finally:
        held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so a writer still to open can write and go
        thread.join()
        os.close(held)
    linked = tmp_path / "q"
    (linked / ".claude-plugin").mkdir(parents=True)
    (linked / ".claude-plugin" / "plugin.json").symlink_to(secret / "hooks.json")
    with pytest.raises(PluginError, match="leads outside"):
        read_plugin(linked)


def test_a_marketplace_entry_adds_its_parts_to_plugin_json_by_default(tmp_path, repo):
    """Claude Code's default (``"strict": true``): plugin.json rules, and what the entry names adds to it."""
    folder = make(
        tmp_path / "p",
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "kit", "commands": "./own"}),
            "own/a.md": "A",
            "theirs/b.md": "B",
        },
    )
    plugin = read_plugin(
        folder, key="kit@m", entry={"name": "kit", "source": "./p", "commands": "./theirs", "name_ignored": True}
    )
    assert {"kit:a", "kit:b"} <= set(load_commands(repo, plugins=[plugin]))
    with pytest.raises(PluginError, match="outside"):  # an entry's path is held inside the plugin as plugin.json's
        read_plugin(folder, entry={"name": "kit", "commands": "../../outside"}).places("commands")
