"""Claude Code's other hook events (issue 39 §2): SessionStart, SessionEnd, SubagentStart, SubagentStop with the
child's receipt, PreCompact, Notification, PermissionRequest and PostToolUseFailure; each run for real, as a
script in a temporary folder, by sessions against the stand-in server. What each hook got is read back from the
log it wrote; what it answered must change what the model or the user sees."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from agentcli.config import load_settings
from agentcli.core.events import ALLOW_ONCE, DENY, ApprovalRequested, Event
from tests.core.test_compaction import is_summarizer
from tests.fakes.anthropic_server import message_text, offers_tool, text, tool_result_text, tool_results, tool_use

# One hook script for every event: it logs its input, then answers as its first argument says.
SCRIPT = r"""
import json, sys
data = json.load(sys.stdin)
open("hook-log.jsonl", "a").write(json.dumps(data) + "\n")
mode = sys.argv[1] if len(sys.argv) > 1 else "log"
if mode == "say":  # plain stdout: context, where the event takes it
    print(sys.argv[2])
elif mode == "context":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": data["hook_event_name"], "additionalContext": sys.argv[2]}}))
elif mode == "no-report-without-calls" and data["receipt"]["tool_calls"] == 0:
    print("Read the code before you report.", file=sys.stderr)
    sys.exit(2)
elif mode == "permission":  # allow touch made, as touch made-by-hook; deny the rest
    allowed = "made" in data["tool_input"].get("command", "")
    decision = {"behavior": "allow", "updatedInput": {"command": "touch made-by-hook"}} if allowed else \
        {"behavior": "deny", "message": "not on Fridays"}
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}))
"""


def hook_script(tmp_path: Path) -> str:
    path = tmp_path / "hook.py"
    path.write_text(SCRIPT)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def hooks(script: str, **events: str) -> dict[str, Any]:
    """``events``: each event's arguments to the script ("" to log only)."""
    return {
        event: [{"matcher": "", "hooks": [{"type": "command", "command": f"{script} {args}".strip()}]}]
        for event, args in events.items()
    }


def logged(repo: Path, event: str) -> list[dict[str, Any]]:
    log = repo / "hook-log.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [entry for entry in map(json.loads, lines) if entry["hook_event_name"] == event]


def is_child(body: dict[str, Any]) -> bool:
    return not offers_tool(body, "task")


def answering(decision: str):  # noqa: ANN201
    """A sink that answers every approval question with ``decision`` (so a test that expects none cannot hang)."""

    def sink(event: Event) -> None:
        if isinstance(event, ApprovalRequested) and event.future and not event.future.done():
            event.future.set_result(decision)

    return sink


async def test_session_start_adds_context_and_clear_ends_one_conversation_and_starts_another(
    make_session, server, repo, tmp_path
):
    script = hook_script(tmp_path)
    session, _ = make_session(hooks=hooks(script, SessionStart="say 'The build uses tox.'", SessionEnd=""))
    server.script(text("ok"), text("ok again"))
    await session.send("hello")
    assert "A SessionStart hook added: The build uses tox." in message_text(server.requests[0]["messages"][0])
    [start] = logged(repo, "SessionStart")
    assert start["source"] == "startup" and start["session_id"] == session.id and start["cwd"] == str(repo)
    assert start["transcript_path"] == str(session.store.main_path) and start["permission_mode"] == "default"
    assert "agent_id" not in start  # the main agent's work
    session.clear()
    await session.send("again")
    assert [e["source"] for e in logged(repo, "SessionStart")] == ["startup", "clear"]
    assert [e["reason"] for e in logged(repo, "SessionEnd")] == ["clear"]
    assert "The build uses tox." in message_text(server.requests[1]["messages"][0])  # the new conversation's too


async def test_subagent_hooks_name_the_child_and_a_report_without_tool_calls_is_sent_back(
    make_session, server, repo, tmp_path
):
    script = hook_script(tmp_path)
    server.when(
        lambda b: not is_child(b),
        tool_use("task", {"description": "Find login", "prompt": "Find login."}),
        text("Done."),
    )
    server.when(
        is_child,
        text("It is in auth.py."),  # no tool call: the SubagentStop hook sends it back
        tool_use("read_file", {"path": "src/app/auth.py"}),
        text("login is in src/app/auth.py."),
    )
    session, _ = make_session(
        permission_mode="bypassPermissions",
        hooks=hooks(
            script, SubagentStart="context 'Cite line numbers.'", SubagentStop="no-report-without-calls", PreToolUse=""
        ),
    )
    await session.send("delegate")
    children = [b for b in server.requests if is_child(b)]
    assert "A SubagentStart hook added: Cite line numbers." in message_text(children[0]["messages"][0])
    assert "Read the code before you report." in message_text(children[1]["messages"][-1])
    [start] = logged(repo, "SubagentStart")
    assert start["agent_id"] == "sa-1" and start["agent_type"]
    first, second = logged(repo, "SubagentStop")
    assert (first["receipt"]["tool_calls"], first["stop_hook_active"]) == (0, False)
    assert (second["receipt"]["tool_calls"], second["stop_hook_active"]) == (1, True)
    assert second["last_assistant_message"] == "login is in src/app/auth.py."
    assert second["agent_id"] == "sa-1" and second["agent_type"] == start["agent_type"]
    assert second["agent_transcript_path"].endswith("sa-1.jsonl")
    main_call, child_call = logged(repo, "PreToolUse")
    assert "agent_id" not in main_call and main_call["tool_name"] == "Task"  # Claude Code's name for task
    assert (child_call["agent_id"], child_call["agent_type"]) == ("sa-1", start["agent_type"])
    [result] = tool_results([b for b in server.requests if not is_child(b)][1])
    assert tool_result_text(result).startswith("login is in src/app/auth.py.")


async def test_a_permission_request_hook_answers_for_the_user(make_session, server, repo, tmp_path):
    session, events = make_session(interactive=True, hooks=hooks(hook_script(tmp_path), PermissionRequest="permission"))
    session.subscribe(answering(DENY))
    server.script(tool_use("bash", {"command": "touch made"}), tool_use("bash", {"command": "touch other"}), text("ok"))
    await session.send("touch both")
    assert (repo / "made-by-hook").exists() and not (repo / "made").exists() and not (repo / "other").exists()
    [denied] = tool_results(server.requests[2])
    assert denied["is_error"] and "not on Fridays" in tool_result_text(denied)
    assert not events.of(ApprovalRequested)  # the hook answered both: the user was never asked
    assert [(e["tool_name"], e["tool_input"]["command"]) for e in logged(repo, "PermissionRequest")] == [
        ("Bash", "touch made"),
        ("Bash", "touch other"),
    ]


async def test_a_failed_call_and_a_compaction_are_heard(make_session, server, repo, tmp_path):
    script = hook_script(tmp_path)
    server.when(is_summarizer, text("Summary."))
    server.when(
        lambda b: not is_summarizer(b),
        tool_use("read_file", {"path": "missing.py"}),
        tool_use("read_file", {"path": "README.md"}),
        text("done"),
    )
    session, _ = make_session(
        permission_mode="bypassPermissions",
        hooks=hooks(
            script,
            PostToolUseFailure="context 'Try src/ first.'",
            PreCompact="",
            SessionStart="say 'Compacted: reread the plan.'",
        ),
    )
    await session.send("read")
    [failed] = logged(repo, "PostToolUseFailure")  # README.md was read: only the missing file failed
    assert failed["tool_name"] == "Read" and failed["error"] and failed["is_interrupt"] is False
    assert "A PostToolUseFailure hook said: Try src/ first." in tool_result_text(tool_results(server.requests[1])[0])
    assert await session.compact("keep the API")
    [pre] = logged(repo, "PreCompact")
    assert (pre["trigger"], pre["custom_instructions"]) == ("manual", "keep the API")
    assert [e["source"] for e in logged(repo, "SessionStart")] == ["startup", "compact"]
    assert "A SessionStart hook added: Compacted: reread the plan." in message_text(session.main.messages[0])


async def test_the_user_is_told_when_an_approval_waits_and_when_the_turn_ends(make_session, server, repo, tmp_path):
    session, _ = make_session(interactive=True, hooks=hooks(hook_script(tmp_path), Notification=""))
    session.subscribe(answering(ALLOW_ONCE))
    told: list[tuple[str, str]] = []
    session.lifecycle.attention.append(lambda kind, message: told.append((kind, message)))
    server.script(tool_use("bash", {"command": "touch asked"}), text("ok"))
    await session.send("touch it")
    assert told == [
        ("permission_prompt", "agentcli needs your permission to use Bash"),
        ("idle_prompt", "agentcli is waiting for your input"),
    ]
    await session.hooks.settle()
    assert [(e["notification_type"], e["message"]) for e in logged(repo, "Notification")] == told


async def test_a_repository_s_own_hooks_for_the_new_events_run_only_once_it_is_trusted(make_session, server, repo):
    (repo / ".claude").mkdir(exist_ok=True)
    touch = {
        event: [{"hooks": [{"type": "command", "command": f"touch pwned-{event}"}]}]
        for event in ("SessionStart", "SubagentStart", "Notification", "PermissionRequest", "SessionEnd")
    }
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": touch}))
    untrusted = load_settings(repo, trusted=False)
    session, _ = make_session(interactive=True, hooks=untrusted.hooks)
    server.script(text("ok"), text("ok"))
    await session.send("hello")
    await session.aclose()
    assert not list(repo.glob("pwned-*"))
    trusted = load_settings(repo, trusted=True)  # the same files, trusted: the hooks run (in the OS sandbox)
    session, _ = make_session(interactive=True, hooks=trusted.hooks, trusted=True)
    await session.send("hello")
    await session.hooks.settle()
    assert (repo / "pwned-SessionStart").exists() and (repo / "pwned-Notification").exists()
