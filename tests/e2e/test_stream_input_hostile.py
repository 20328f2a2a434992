"""`--input-format stream-json` lines no parser should choke on: each is one warning or stored safely,
and the run goes on to answer the lines after it."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.core.storage.store import read_records
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import last_user_text, text


def user_line(content: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"


def test_a_line_nested_too_deep_is_skipped_and_half_a_character_is_stored_safely(
    server, api_env, repo, isolated_home: Path
):
    server.script(text("Got the first."), text("Got the second."))
    deep = '{"type": "user", "message": {"role": "user", "content": ' + "[" * 100_000 + "]" * 100_000 + "}}\n"
    lone = '{"type": "user", "message": {"role": "user", "content": "half \\ud800 a character"}}\n'
    proc = agentcli(
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        cwd=repo,
        env=api_env,
        stdin=deep + lone + user_line("and then this"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("agentcli: standard input held a line nested too deeply to read; it was skipped") == 1
    results = [json.loads(line) for line in proc.stdout.splitlines() if json.loads(line)["type"] == "result"]
    assert [r["result"] for r in results] == ["Got the first.", "Got the second."]
    assert last_user_text(server.requests[0]) == "half \ufffd a character"
    server.assert_no_rejections()
    [path] = isolated_home.rglob(f"{results[0]['session_id']}.jsonl")
    records, warnings = read_records(path)
    assert warnings == []
    assert "half \ufffd a character" in json.dumps(records, ensure_ascii=False)


def test_a_prompt_argument_that_is_not_utf_8_is_asked_with_its_bytes_replaced(server, api_env, repo):
    server.script(text("Read it."))
    proc = agentcli("-p", "hi \udcff there", cwd=repo, env=api_env)  # the argument's bytes: b"hi \xff there"
    assert (proc.returncode, proc.stdout) == (0, "Read it.\n"), proc.stderr
    assert last_user_text(server.requests[0]) == "hi \ufffd there"
