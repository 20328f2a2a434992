"""The subagent ledger survives a crash: kill -9 of a real agentcli with one background child running and
another's result not yet read by the main agent, then `--continue`: the running child is interrupted
and resumable, and the unread result (and the interruption) reach the main agent exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import (
    first_user_text,
    message_text,
    offers_tool,
    reply,
    text,
    tool_use,
    tool_use_block,
)
from tests.waiting import wait_until

FINISHED = "Background subagent sa-1 (Find alpha) has finished."
INTERRUPTED = "Background subagent sa-2 (Find beta) was interrupted"


def is_main(body):
    return offers_tool(body, "task")


def child_about(word):
    return lambda body: not offers_tool(body, "task") and word in first_user_text(body)


def main_file(home: Path) -> Path:
    files = [f for f in home.rglob("*.jsonl") if f.parent.parent.name == "projects"]  # not the children's
    return files[0] if len(files) == 1 else Path("/nonexistent")


def records(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            pass  # a line still being written
    return out


def history_text(body) -> str:
    return "\n".join(message_text(m) for m in body["messages"])


def test_kill_9_with_a_child_running_and_a_result_unread_then_continue(server, api_env, repo, isolated_home):
    hold = threading.Event()  # what never comes before the kill
    main_waiting = threading.Event()  # sa-1 answers only once the main agent is in its next call

    def main_in_its_call(body):
        main_waiting.set()
        return text("never sent", gate=hold, gate_timeout=120)

    server.when(
        is_main,
        reply(
            tool_use_block("task", {"description": "Find alpha", "prompt": "Find alpha.", "run_in_background": True}),
            tool_use_block("task", {"description": "Find beta", "prompt": "Find beta.", "run_in_background": True}),
        ),
        main_in_its_call,
    )  # the main agent is mid-call at the kill: sa-1's result stays unread
    server.when(
        child_about("alpha"), text("alpha is defined in src/app/alpha.py.", gate=main_waiting, gate_timeout=120)
    )
    server.when(
        child_about("beta"), tool_use("grep", {"pattern": "beta"}), text("never sent", gate=hold, gate_timeout=120)
    )  # still working at the kill
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "-p", "Find alpha and beta in the background"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    def ready() -> bool:
        done = [r for r in records(main_file(isolated_home)) if r.get("type") == "subagent_finished"]
        beta_calls = [b for b in server.requests if child_about("beta")(b)]
        main_calls = [b for b in server.requests if is_main(b)]
        return proc.poll() is not None or (
            [r["id"] for r in done] == ["sa-1"] and len(beta_calls) == 2 and len(main_calls) == 2
        )

    try:
        wait_until(
            ready,
            "sa-1 finished, sa-2 and the main agent each in a model call",
            detail=lambda: (
                f"session file {main_file(isolated_home)} holds {[r.get('type') for r in records(main_file(isolated_home))]}"
                f"; the stand-in got {[first_user_text(b)[:30] for b in server.requests]}"
            ),
        )
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        hold.set()
    assert proc.returncode == -signal.SIGKILL
    before = records(main_file(isolated_home))
    assert not [r for r in before if r.get("type") == "subagent_result_delivered"]  # sa-1's result was unread

    # --continue: the main agent's first call carries sa-1's result and sa-2's interruption, once each.
    server.when(is_main, text("sa-1 found alpha; sa-2 was cut off."))
    first = agentcli("--continue", "-p", "What came back?", "--output-format", "json", cwd=repo, env=api_env)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["result"] == "sa-1 found alpha; sa-2 was cut off."
    assert {c["id"]: c["status"] for c in out["subagents"]} == {"sa-1": "done", "sa-2": "interrupted"}
    sent = [b for b in server.requests if is_main(b)][-1]
    assert history_text(sent).count(FINISHED) == 1 and "alpha is defined in src/app/alpha.py." in history_text(sent)
    assert history_text(sent).count(INTERRUPTED) == 1

    # Again: nothing is delivered twice, and the interrupted child resumes with its history.
    server.when(
        is_main,
        tool_use("task", {"description": "Beta again", "prompt": "Finish the beta search.", "resume": "sa-2"}),
        text("beta is in src/app/beta.py."),
    )
    server.when(
        lambda b: not is_main(b) and "Finish the beta search." in history_text(b),
        text("beta is defined in src/app/beta.py."),
    )
    second = agentcli("--continue", "-p", "Resume sa-2.", "--output-format", "json", cwd=repo, env=api_env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["result"] == "beta is in src/app/beta.py."
    latest = [b for b in server.requests if is_main(b)][-1]
    assert history_text(latest).count(FINISHED) == 1 and history_text(latest).count(INTERRUPTED) == 1
    resumed = [b for b in server.requests if not is_main(b)][-1]
    assert first_user_text(resumed) == "Find beta."  # its own history, from its first brief on
    assert "beta is defined in src/app/beta.py." in json.dumps(latest["messages"])  # the resumed run's tool result
    delivered = [r["id"] for r in records(main_file(isolated_home)) if r.get("type") == "subagent_result_delivered"]
    assert delivered == ["sa-1", "sa-2"]
    server.assert_no_rejections()
