"""`agentcli -p` in text mode says each denied tool call on stderr, one line each: a script's user sees
why the answer is what it is without reading the transcript."""

from __future__ import annotations

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import reply, text, tool_use_block


def test_each_denied_call_is_one_line_on_stderr_in_text_mode(server, api_env, repo):
    calls = [
        tool_use_block("bash", {"command": "touch ran.txt"}),
        tool_use_block("read_file", {"path": "README.md"}),
        tool_use_block("write_file", {"path": "new.txt", "content": "x\n"}),
        tool_use_block("bash", {"command": "echo hi\necho there"}),
    ]
    server.script(reply(*calls), text("I could only read."))
    proc = agentcli("-p", "do things", cwd=repo, env=api_env)
    assert (proc.returncode, proc.stdout) == (0, "I could only read.\n"), proc.stderr
    denials = [line for line in proc.stderr.splitlines() if line.startswith("agentcli: denied ")]
    assert len(denials) == 3, proc.stderr
    assert denials[0].startswith("agentcli: denied bash: bash needs approval")
    assert denials[1].startswith("agentcli: denied write_file: ")
    assert denials[2].startswith("agentcli: denied bash: ")
    assert not (repo / "ran.txt").exists() and not (repo / "new.txt").exists()
    assert "read_file" not in proc.stderr  # an allowed call is not one


def test_other_formats_keep_stderr_for_notices(server, api_env, repo):
    server.script(reply(tool_use_block("bash", {"command": "touch ran.txt"})), text("Denied."))
    proc = agentcli("-p", "do it", "--output-format", "json", cwd=repo, env=api_env)
    assert proc.returncode == 0 and "denied" not in proc.stderr
