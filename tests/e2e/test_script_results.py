"""What a script learns from `-p`'s json and stream-json results (issue 23, part 7): the calls refused,
the compactions, and why a run that failed ended."""

from __future__ import annotations

import json

import pytest

from tests.core.test_compaction import is_summarizer
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import reply, text, tool_use, tool_use_block


def lines_of(proc):
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_refused_calls_are_listed_as_permission_denials(server, api_env, repo, output_format):
    """-p in the default mode refuses what would ask, and a deny rule refuses the rest: each is an entry."""
    write = tool_use_block("write_file", {"path": "notes.txt", "content": "hi"})
    rm = tool_use_block("bash", {"command": "rm -rf src"})
    server.script(reply(write), reply(rm), tool_use("read_file", {"path": "README.md"}), text("Could not write."))
    (repo / ".agentcli").mkdir()
    (repo / ".agentcli" / "settings.toml").write_text('[permissions]\ndeny = ["Bash(rm:*)"]\n')
    args = ["--output-format", output_format] + (["--verbose"] if output_format == "stream-json" else [])
    proc = agentcli("-p", "Write a note", *args, cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    result = lines_of(proc)[-1]
    assert result["type"] == "result"
    # Claude Code's names and input shapes, as can_use_tool and hooks see the calls (one naming for the SDK)
    assert result["permission_denials"] == [
        {
            "tool_name": "Write",
            "tool_use_id": write["id"],
            "tool_input": {"path": "notes.txt", "content": "hi", "file_path": str(repo.resolve() / "notes.txt")},
        },
        {"tool_name": "Bash", "tool_use_id": rm["id"], "tool_input": {"command": "rm -rf src"}},
    ]
    assert not (repo / "notes.txt").exists() and (repo / "src").exists()
    server.assert_no_rejections()


def test_stream_json_says_when_the_conversation_was_compacted(server, api_env, repo):
    for n in range(3):
        server.script(tool_use("grep", {"pattern": f"login # step {n}"}))
    server.script(tool_use("glob", {"pattern": "*.md"}, usage={"input_tokens": 180_000}), text("Done after it."))
    server.when(is_summarizer, text("The user wants login traced; grep found auth.py."))
    proc = agentcli("-p", "Trace login", "--output-format", "stream-json", "--verbose", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    lines = lines_of(proc)
    [boundary] = [line for line in lines if line.get("subtype") == "compact_boundary"]
    assert boundary["type"] == "system" and boundary["session_id"] == lines[-1]["session_id"]
    assert boundary["compact_metadata"]["trigger"] == "auto"
    assert boundary["compact_metadata"]["pre_tokens"] >= 180_000
    # It comes before the answer that followed the compaction.
    answer = next(
        i
        for i, line in enumerate(lines)
        if line["type"] == "assistant" and line["message"]["content"][0].get("text") == "Done after it."
    )
    assert lines.index(boundary) < answer
    server.assert_no_rejections()


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_an_error_result_says_why_it_ended(server, api_env, repo, output_format):
    server.script(
        tool_use("grep", {"pattern": "login"}, usage={"input_tokens": 10}),
        reply("Still looking.", tool_use_block("grep", {"pattern": "auth"})),
    )
    args = ["--output-format", output_format] + (["--verbose"] if output_format == "stream-json" else [])
    proc = agentcli("-p", "Find login", "--max-turns", "2", *args, cwd=repo, env=api_env)
    assert proc.returncode == 1, proc.stderr
    result = lines_of(proc)[-1]
    assert (result["is_error"], result["subtype"]) == (True, "error_max_turns")
    assert result["errors"] == ["stopped after --max-turns 2 turns"]
    assert result["result"] == "Still looking."  # what the model wrote is kept next to the reason


def test_a_successful_result_has_no_errors(server, api_env, repo):
    server.script(text("Fine."))
    proc = agentcli("-p", "Hi", "--output-format", "json", cwd=repo, env=api_env)
    result = json.loads(proc.stdout)
    assert result["permission_denials"] == [] and "errors" not in result and not result["is_error"]
