"""Damaged session files, as a user meets them: every reader skips a bad record with one warning.

Each test starts from a session that a real run against the stand-in server wrote, damages it the way
a bug, a crash or a hand edit could, and then lists, shows, and resumes it through the command line.
The stand-in validates every history it is sent, so a resume that would send a bad one fails here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentcli.paths import legacy_project_slug
from tests.conftest import API_KEY, git
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    first_user_text,
    last_user_text,
    offers_tool,
    text,
    tool_result_text,
    tool_results,
    tool_use,
)

DAMAGED = {
    "turn": '{"type": "turn_started", "agent_id": "main", "turn": "abc"}',
    "usage": '{"type": "usage_updated", "agent_id": "main", "usage": "x", "total": {"input_tokens": 5}}',
    "tokens_after": '{"type": "compacted", "agent_id": "main", "messages_summarized": 2, "tokens_before": 900, '
    '"tokens_after": "x", "summary": "s", "messages": [{"role": "user", "content": "summary"}]}',
    "id": '{"type": "tool_call_started", "agent_id": "main", "id": null, "name": "grep", "input": {}}',
    "output": '{"type": "tool_call_finished", "agent_id": "main", "id": "toolu_x", "name": "grep", "output": 17, '
    '"is_error": false, "seconds": 0.1}',
    "block id": '{"type": "assistant_message", "agent_id": "main", "content": [{"type": "tool_use", "id": null, '
    '"name": "grep", "input": {}}]}',
    "NaN": '{"type": "assistant_message", "agent_id": "main", "content": [{"type": "tool_use", "id": "toolu_n", '
    '"name": "read_file", "input": {"path": "README.md", "limit": NaN}}], "stop_reason": "tool_use"}',
    "too deep to parse": '{"type": "assistant_message", "agent_id": "main", "content": '
    + "[" * 100_000
    + "]" * 100_000
    + "}",
    "too deep": '{"type": "assistant_message", "agent_id": "main", "content": [{"type": "tool_use", "id": "toolu_d", '
    '"name": "grep", "input": {"pattern": ' + "[" * 500 + "]" * 500 + '}}], "stop_reason": "tool_use"}',
}


def is_main(body):
    return offers_tool(body, "task")


def session_with_a_child(server, repo, api_env, home: Path) -> tuple[str, Path, Path]:
    """A real session: the main agent delegates to sa-1, which greps; returns its id and both files."""
    server.when(
        is_main,
        tool_use("task", {"description": "Find auth", "prompt": "Find handle_auth."}),
        text("Auth is in src/app/auth.py."),
    )
    server.when(
        lambda b: not is_main(b),
        tool_use("grep", {"pattern": "def handle_auth"}),
        text("handle_auth is at src/app/auth.py:9."),
    )
    proc = agentcli("-p", "Find auth with a subagent", "--output-format", "json", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    session_id = json.loads(proc.stdout)["session_id"]
    [main] = home.rglob(f"{session_id}.jsonl")
    return session_id, main, main.parent / session_id / "subagents" / "sa-1.jsonl"


def append(path: Path, line: str) -> int:
    """Append one line; its line number."""
    with path.open("a") as f:
        f.write(line + "\n")
    return len(path.read_text().splitlines())


def one_warning(stderr: str, path: Path, line: int) -> None:
    assert "Traceback" not in stderr, stderr
    assert stderr.count(f"Skipped line {line} of {path}: ") == 1, stderr


@pytest.fixture(scope="module")
def saved_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """One real run's session (its workspace, its data folder, its id), made once for every kind of damage:
    each test damages a copy of the data folder, so each still starts from an untouched session."""
    place = tmp_path_factory.mktemp("saved")
    workspace = place / "repo"
    (workspace / "src" / "app").mkdir(parents=True)
    (workspace / "src" / "app" / "auth.py").write_text("def handle_auth(user, password):\n    return False\n")
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "Initial commit")
    home = place / "home"
    with FakeAnthropic() as server:
        env = {
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": API_KEY,
            "HOME": str(home),
            "AGENTCLI_HOME": str(home / "agentcli"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
        }
        session_id, _, _ = session_with_a_child(server, workspace, env, home / "agentcli")
    return workspace, home / "agentcli", session_id


@pytest.mark.parametrize("damage", DAMAGED)
def test_a_damaged_record_is_skipped_with_one_warning_by_every_reader(
    server, api_env, saved_session, isolated_home, damage
):
    repo, saved_home, session_id = saved_session
    shutil.copytree(saved_home, isolated_home, dirs_exist_ok=True)
    [main] = isolated_home.rglob(f"{session_id}.jsonl")
    child = main.parent / session_id / "subagents" / "sa-1.jsonl"
    line = append(main, DAMAGED[damage])
    child_line = append(child, DAMAGED[damage].replace('"agent_id": "main"', '"agent_id": "sa-1"'))

    listing = agentcli("sessions", "list", cwd=repo)
    assert listing.returncode == 0 and listing.stderr == ""  # the row says it, each time, without a warning
    [row] = [row for row in listing.stdout.splitlines() if session_id in row]
    assert re.search(r"  \[[12] damaged lines? skipped\] Find auth with a subagent$", row), listing.stdout

    shown = agentcli("sessions", "show", session_id, cwd=repo)
    assert shown.returncode == 0
    one_warning(shown.stderr, main, line)
    assert "> Find auth with a subagent" in shown.stdout and "Auth is in src/app/auth.py." in shown.stdout
    assert "▪ sa-1 done" in shown.stdout

    agent = agentcli("sessions", "show", session_id, "--agent", "sa-1", cwd=repo)
    assert agent.returncode == 0
    one_warning(agent.stderr, child, child_line)
    assert "Status: done" in agent.stdout and '● grep(pattern="def handle_auth")' in agent.stdout

    server.when(is_main, text("Yes, auth.py."))
    line_mode = agentcli("--plain", "-c", cwd=repo, env=api_env, stdin="Sure?\n")
    assert line_mode.returncode == 0 and "Yes, auth.py." in line_mode.stdout, line_mode.stderr
    unwrapped = re.sub(r"\s+", "", line_mode.stdout)  # line mode wraps long lines at its width
    assert unwrapped.count(re.sub(r"\s+", "", f"Skipped line {line} of {main}: ")) == 1, line_mode.stdout
    assert "Traceback" not in line_mode.stderr
    server.assert_no_rejections()
    assert last_user_text(server.requests[-1]) == "Sure?"

    server.when(is_main, text("Still auth.py."))
    resumed = agentcli("-c", "-p", "Where again?", cwd=repo, env=api_env)
    assert resumed.returncode == 0 and resumed.stdout == "Still auth.py.\n"
    one_warning(resumed.stderr, main, line)
    one_warning(resumed.stderr, child, child_line)
    server.assert_no_rejections()  # the stand-in took the resumed history
    sent = server.requests[-1]
    assert first_user_text(sent) == "Find auth with a subagent" and last_user_text(sent) == "Where again?"
    assert "Auth is in src/app/auth.py." in json.dumps(sent["messages"])


def test_a_repeated_tool_call_is_sent_once_on_resume(server, api_env, repo, isolated_home):
    """The same tool_use id twice in a file (a record written again): the API refuses ids it saw before."""
    server.script(tool_use("read_file", {"path": "README.md"}), text("It is a demo app."))
    proc = agentcli("-p", "What is this repo?", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    [main] = (isolated_home / "projects").rglob("*.jsonl")
    lines = main.read_text().splitlines()
    call = next(i for i, line in enumerate(lines) if '"tool_use"' in line and "assistant_message" in line)
    result = next(i for i, line in enumerate(lines) if '"tool_result"' in line and i > call)
    with main.open("a") as f:
        f.write(f"{lines[call]}\n{lines[result]}\n")

    server.script(text("Still a demo app."))
    resumed = agentcli("-c", "-p", "Sure?", cwd=repo, env=api_env)
    assert resumed.returncode == 0 and resumed.stdout == "Still a demo app.\n", resumed.stderr
    server.assert_no_rejections()
    sent = json.dumps(server.requests[-1]["messages"])
    tool_use_id = json.loads(lines[call])["content"][0]["id"]
    assert sent.count(f'"id": "{tool_use_id}"') == 1


def strict_json(line: str) -> dict[str, Any]:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in a session file: {line}")

    return json.loads(line, parse_constant=refuse)


def test_a_tool_call_with_nan_is_refused_and_never_stored_or_sent(server, api_env, repo, isolated_home):
    server.script(
        tool_use("read_file", {"path": "README.md", "limit": float("nan")}),  # streamed as raw `NaN`
        tool_use("read_file", {"path": "README.md", "offset": float("inf")}),
        tool_use("no_such_tool", {"size": float("-inf")}),  # refused for its name, yet in the history
        text("I could not read it that way."),
    )
    proc = agentcli("-p", "Read the README", cwd=repo, env=api_env)
    assert proc.returncode == 0 and proc.stdout == "I could not read it that way.\n", proc.stderr
    server.assert_no_rejections()
    assert len(server.requests) == 4  # each later request could be encoded
    for body, start in (
        (server.requests[1], "read_file: 'limit'"),
        (server.requests[2], "read_file: 'offset'"),
        (server.requests[3], "no_such_tool: 'size'"),
    ):
        [result] = tool_results(body)
        assert result["is_error"] is True
        assert tool_result_text(result).startswith(f"{start} held NaN or Infinity")
    [main] = (isolated_home / "projects").rglob("*.jsonl")
    records = [strict_json(line) for line in main.read_text().splitlines()]
    calls = [r["input"] for r in records if r["type"] == "tool_call_started"]
    assert calls == [{"path": "README.md", "limit": None}, {"path": "README.md", "offset": None}, {"size": None}]

    server.script(text("Shall I read it whole?"))
    resumed = agentcli("-c", "-p", "Try again", cwd=repo, env=api_env)
    assert resumed.returncode == 0 and resumed.stdout == "Shall I read it whole?\n", resumed.stderr
    assert "Skipped" not in resumed.stderr
    server.assert_no_rejections()


def run_in(folder: Path, prompt: str, server, api_env) -> str:
    server.script(text(f"Answer to {prompt}"))
    proc = agentcli("-p", prompt, "--output-format", "json", cwd=folder, env=api_env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["session_id"]


@pytest.fixture
def look_alikes(tmp_path: Path) -> tuple[Path, Path]:
    """Two workspaces whose paths read alike: /…/x/a/b and /…/x/a-b."""
    nested, dashed = tmp_path / "x" / "a" / "b", tmp_path / "x" / "a-b"
    nested.mkdir(parents=True)
    dashed.mkdir()
    return nested, dashed


def test_workspaces_whose_paths_read_alike_keep_their_own_sessions(server, api_env, look_alikes):
    nested, dashed = look_alikes
    nested_id = run_in(nested, "PROMPT-IN-A/B", server, api_env)
    dashed_id = run_in(dashed, "PROMPT-IN-A-B", server, api_env)  # the latest of the two

    listing = agentcli("sessions", "list", cwd=nested)
    assert nested_id in listing.stdout and dashed_id not in listing.stdout

    server.script(text("Carried on."))
    resumed = agentcli("-c", "-p", "Go on", "--output-format", "json", cwd=nested, env=api_env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["session_id"] == nested_id
    assert first_user_text(server.requests[-1]) == "PROMPT-IN-A/B"
    assert "PROMPT-IN-A-B" not in json.dumps(server.requests[-1]["messages"])


def test_sessions_saved_under_the_old_folder_name_are_still_found(server, api_env, look_alikes, isolated_home):
    """Before the hash both workspaces saved into one folder; each still finds only its own sessions there."""
    nested, dashed = look_alikes
    ids = {folder: run_in(folder, f"OLD-PROMPT-IN-{folder.name}", server, api_env) for folder in (nested, dashed)}
    legacy = isolated_home / "projects" / legacy_project_slug(nested)
    assert legacy == isolated_home / "projects" / legacy_project_slug(dashed)
    legacy.mkdir()
    for session_id in ids.values():  # move each session, with its own folder, to the old place
        [main] = (isolated_home / "projects").rglob(f"{session_id}.jsonl")
        os.rename(main, legacy / main.name)
        if (main.parent / session_id).exists():
            os.rename(main.parent / session_id, legacy / session_id)

    for folder, other in ((nested, dashed), (dashed, nested)):
        listing = agentcli("sessions", "list", cwd=folder)
        assert ids[folder] in listing.stdout and ids[other] not in listing.stdout, listing.stdout
    shown = agentcli("sessions", "show", ids[nested], cwd=nested)
    assert shown.returncode == 0 and "> OLD-PROMPT-IN-b" in shown.stdout

    server.script(text("Carried on."))
    resumed = agentcli("-c", "-p", "Go on", "--output-format", "json", cwd=nested, env=api_env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["session_id"] == ids[nested]
    assert first_user_text(server.requests[-1]) == "OLD-PROMPT-IN-b"
    assert "Go on" in (legacy / f"{ids[nested]}.jsonl").read_text()  # it goes on in its old file
    fresh = run_in(nested, "NEW", server, api_env)
    assert not (legacy / f"{fresh}.jsonl").exists()


UNREADABLE_COMMANDS = [
    ["sessions"],
    ["sessions", "list", "--all"],
    ["sessions", "show", "x"],
    ["-c", "-p", "hi"],
    ["-c", "--plain"],
    ["--resume", "x", "-p", "hi"],
]


@pytest.mark.parametrize("args", UNREADABLE_COMMANDS)
def test_a_data_folder_that_cannot_be_read_is_one_sentence(repo, api_env, isolated_home, args):
    isolated_home.parent.mkdir(parents=True, exist_ok=True)
    isolated_home.write_text("not a folder\n")  # what root, for whom no permission bit holds, cannot read either
    proc = agentcli(*args, cwd=repo, env=api_env)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(f"agentcli: Cannot read sessions in {isolated_home / 'projects'}")
    assert "(not a directory)" in proc.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its permission bits")
@pytest.mark.parametrize("args", [["sessions"], ["-c", "-p", "hi"]])
def test_a_data_folder_without_read_permission_is_one_sentence(repo, api_env, isolated_home, args):
    (isolated_home / "projects").mkdir(parents=True)
    isolated_home.chmod(0)
    try:
        proc = agentcli(*args, cwd=repo, env=api_env)
    finally:
        isolated_home.chmod(0o755)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "(permission denied)" in proc.stderr
