"""A slash command -p cannot run is refused in one sentence, not sent to the model as text."""

from __future__ import annotations

import json

from agentcli.ui.slash import not_sent_headless
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text


def test_an_unknown_or_interactive_command_is_refused_and_nothing_is_sent(server, api_env, repo):
    proc = agentcli("-p", "/frob the widget", cwd=repo, env=api_env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == (
        "agentcli: Unknown command /frob, so nothing was sent: -p runs only custom commands and "
        "MCP prompts; start the prompt with another character to send it as text.\n"
    )
    proc = agentcli("-p", "/cost", "--output-format", "json", cwd=repo, env=api_env)
    result = json.loads(proc.stdout)
    assert proc.returncode == 1 and result["is_error"]
    assert result["result"].startswith("/cost is a command of the app and line mode, which -p does not run")
    assert server.requests == []
    # A path is text, and a custom command runs.
    (repo / ".claude" / "commands").mkdir(parents=True)
    (repo / ".claude" / "commands" / "frob.md").write_text("Frob $ARGUMENTS.\n")
    server.script(text("It is full."), text("Frobbed."))
    assert agentcli("-p", "/usr/lib is full", cwd=repo, env=api_env).stdout == "It is full.\n"
    assert agentcli("-p", "/frob the widget", cwd=repo, env=api_env).stdout == "Frobbed.\n"
    assert server.requests[-1]["messages"][-1]["content"][-1]["text"].endswith("Frob the widget.")


def test_a_command_with_a_shell_equivalent_names_it():
    assert not_sent_headless("/plugin", {}) == (
        "/plugin is a command of the app and line mode; headless, run "
        "agentcli plugin list (or install, enable, disable NAME) instead."
    )
    assert not_sent_headless("/review main", {}).endswith("headless, run agentcli review [TARGET] instead.")
