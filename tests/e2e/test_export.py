"""`agentcli sessions export ID`: a session with a delegated child as Markdown and JSON, the child's transcript and
receipt where it was delegated, a secret the exporting process holds redacted; an unknown id or an unwritable
file is one sentence and a non-zero exit."""

from __future__ import annotations

import json

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import offers_tool, text, tool_use

PLANTED = "sk-planted-0123456789abcdef"  # a deploy token a file of the repository holds


def test_export_holds_the_childs_transcript_and_receipt_and_no_secret(server, api_env, repo, isolated_home, tmp_path):
    (repo / "deploy.env").write_text(f"DEPLOY_TOKEN={PLANTED}\n")
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use(
            "task", {"description": "Read the deploy settings", "prompt": "What does deploy.env set?", "model": "haiku"}
        ),
        text("It sets the deploy token."),
    )
    server.when(
        lambda b: not offers_tool(b, "task"),
        tool_use("read_file", {"path": "deploy.env"}),
        text("deploy.env sets DEPLOY_TOKEN."),
    )
    env = {**api_env, "DEPLOY_TOKEN": PLANTED}  # held by agentcli as a secret, as the user's shell would have it
    run = agentcli("-p", "what does deploy.env set? ask a subagent", "--output-format", "json", cwd=repo, env=env)
    assert run.returncode == 0, run.stderr
    session_id = json.loads(run.stdout)["session_id"]
    [child_file] = isolated_home.rglob("sa-1.jsonl")
    assert PLANTED in child_file.read_text()  # the stored transcript holds the file as the child read it

    shown = agentcli("sessions", "export", session_id, cwd=repo, env=env)
    assert shown.returncode == 0, shown.stderr
    document = shown.stdout
    assert document.startswith(f"# agentcli session {session_id}")
    assert "## User\n\nwhat does deploy.env set? ask a subagent" in document
    child_at = document.index("<summary>Subagent sa-1 · general-purpose · claude-haiku-5-5 · done")
    assert document.index("**task** Read the deploy settings") < child_at < document.index("It sets the deploy token.")
    child = document[child_at : document.index("</details>\n\n## Assistant", child_at)]
    assert "#### Brief\n\nWhat does deploy.env set?" in child and "**read_file** deploy.env" in child
    assert "deploy.env sets DEPLOY_TOKEN." in child
    assert "#### Receipt" in child and "Read: deploy.env" in child and "[sa-1 · done · 2 turns" in child
    assert PLANTED not in document and "DEPLOY_TOKEN=***" in document

    out = tmp_path / "session.json"
    written = agentcli("sessions", "export", session_id[:12], "--format", "json", "-o", str(out), cwd=repo, env=env)
    assert written.returncode == 0 and written.stdout.strip() == f"Exported to {out}."
    data = json.loads(out.read_text())
    [sub] = data["subagents"]
    assert sub["id"] == "sa-1" and sub["model"] == "claude-haiku-5-5" and sub["report"]["status"] == "done"
    assert "Read: deploy.env" in sub["receipt"] and any(
        r.get("type") == "tool_call_finished" for r in sub["transcript"]
    )
    assert PLANTED not in out.read_text() and "DEPLOY_TOKEN=***" in out.read_text()

    unknown = agentcli("sessions", "export", "no-such-session", cwd=repo, env=env)
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert len(unknown.stderr.strip().splitlines()) == 1 and "no-such-session" in unknown.stderr
    blocked = agentcli("sessions", "export", session_id, "-o", str(tmp_path / "missing" / "x.md"), cwd=repo, env=env)
    assert blocked.returncode == 1 and blocked.stderr.strip().count("\n") == 0
    assert "Cannot write" in blocked.stderr and "Traceback" not in blocked.stderr
