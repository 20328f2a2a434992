"""`agentcli rewind` from a shell, after a real `-p` run that edited a file."""

from __future__ import annotations

import json

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import last_user_text, text, tool_use


def test_list_then_rewind_files_and_conversation(server, api_env, repo):
    server.when(lambda b: last_user_text(b) == "say hi", text("hi"))
    server.when(
        lambda b: "edit the readme" in json.dumps(b["messages"]),
        tool_use("read_file", {"path": "README.md"}),
        tool_use("edit_file", {"path": "README.md", "old_string": "Demo app", "new_string": "Changed app"}),
        text("Edited the readme."),
    )
    original = (repo / "README.md").read_text()
    first = agentcli("-p", "say hi", "--output-format", "json", cwd=repo, env=api_env)
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout)["session_id"]
    second = agentcli(
        "--resume", session, "-p", "edit the readme", "--permission-mode", "acceptEdits", cwd=repo, env=api_env
    )
    assert second.returncode == 0, second.stderr
    assert "Changed app" in (repo / "README.md").read_text()

    listing = agentcli("rewind", session, "--list", cwd=repo)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].lstrip().startswith("1 ") and lines[0].endswith("say hi")
    assert lines[1].lstrip().startswith("2 ") and lines[1].endswith("edit the readme")
    assert lines[2].strip() == "changed: README.md"

    missing = agentcli("rewind", session, "--to", "7", cwd=repo)
    assert missing.returncode == 1 and "There is no prompt 7" in missing.stderr and "Traceback" not in missing.stderr

    done = agentcli("rewind", session, "--to", "2", "--both", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "Restored to before prompt 2: README.md" in done.stdout
    assert (repo / "README.md").read_text() == original

    server.when(lambda b: last_user_text(b) == "what now", text("fresh"))
    third = agentcli("--resume", session, "-p", "what now", cwd=repo, env=api_env)
    assert third.returncode == 0, third.stderr
    sent = json.dumps(server.requests[-1]["messages"])
    assert "say hi" in sent and "edit the readme" not in sent
    server.assert_no_rejections()
