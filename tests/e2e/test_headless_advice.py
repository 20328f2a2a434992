"""A headless refusal's advice, followed as a user would follow it, lets the next `agentcli -p` run the call.

The advice once named the repository's `.agentcli/settings.toml`; an allow rule there widens permissions, so
the next run ignored the file in the untrusted workspace and gave the same advice: a loop."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use

CALLS = {
    "write": tool_use("write_file", {"path": "notes/todo.txt", "content": "ship it\n"}),
    "bash": tool_use("bash", {"command": "touch made-by-bash"}),
}
MADE = {"write": "notes/todo.txt", "bash": "made-by-bash"}


def run(server, api_env, repo: Path, call: str, *flags: str) -> tuple[dict[str, Any], str]:
    server.reset()
    server.script(CALLS[call], text("done"))
    proc = agentcli("-p", "do it", *flags, cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    [result] = tool_results(server.requests[1])
    return result, proc.stderr


def test_each_way_a_headless_refusal_names_lets_the_next_run_through(server, api_env, repo, isolated_home):
    for call in CALLS:
        result, _ = run(server, api_env, repo, call)
        said = tool_result_text(result)
        assert result["is_error"] and "no one can give it in a headless run" in said, said
        assert ".agentcli/settings.toml" not in said, said
        assert not (repo / MADE[call]).exists()

        # The flag, as the sentence quotes it, for one run.
        [flag] = re.findall(r"pass --allowedTools ('[^']*')", said)
        result, _ = run(server, api_env, repo, call, "--allowedTools", *shlex.split(flag))
        assert not result.get("is_error"), tool_result_text(result)
        assert (repo / MADE[call]).exists()
        (repo / MADE[call]).unlink()

        # The rule in your own settings for this workspace, the file the sentence names, for every run.
        [rules, own] = re.findall(
            r"add (.*) to the allow list under \[permissions\] in your own settings for "
            r"this workspace, (\S+\.toml)",
            said,
        )[0]
        own_file = Path(own)
        assert own_file.is_relative_to(isolated_home)  # yours, outside the repository
        own_file.parent.mkdir(parents=True, exist_ok=True)
        own_file.write_text(
            "[permissions]\nallow = [" + ", ".join(f'"{rule}"' for rule in re.findall(r"`([^`]*)`", rules)) + "]\n"
        )
        result, stderr = run(server, api_env, repo, call)
        assert not result.get("is_error"), tool_result_text(result)
        assert (repo / MADE[call]).exists() and "not trusted" not in stderr
        own_file.unlink()
