"""`agentcli -p` with background and resumed subagents: it waits for them, and for the turn that reads them."""

from __future__ import annotations

import json
import threading

import pytest

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import (
    first_user_text,
    last_user_text,
    message_text,
    offers_tool,
    reply,
    text,
    tool_results,
    tool_use,
    tool_use_block,
)


def is_main(body):
    return offers_tool(body, "task")


def background_task(description, prompt):
    return tool_use("task", {"description": description, "prompt": prompt, "run_in_background": True})


def test_p_waits_for_a_child_that_finishes_after_the_main_turn_ended(server, api_env, repo):
    main_ended = threading.Event()  # the child answers only once the main agent's turn has its last reply

    def main_said_waiting(body):
        main_ended.set()
        return text("Started it; waiting for the result.")

    server.when(
        is_main,
        background_task("Find auth", "Find where auth is handled."),
        main_said_waiting,
        text("Auth is handled in src/app/auth.py:9 (from sa-1)."),
    )
    server.when(
        lambda b: not is_main(b), text("handle_auth is at src/app/auth.py:9.", gate=main_ended, gate_timeout=120)
    )
    proc = agentcli(
        "-p", "Find auth in the background", "--output-format", "stream-json", "--verbose", cwd=repo, env=api_env
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    results = [line for line in lines if line["type"] == "result"]
    assert results == [lines[-1]]  # one final result, at the very end
    # Both turns' texts, in order: the one that started the child and the one that read its result.
    assert lines[-1]["result"] == (
        "Started it; waiting for the result.\n\nAuth is handled in src/app/auth.py:9 (from sa-1)."
    )
    # The child's result is among the lines before the final one (whatever shape the stream gives it).
    assert any("Background subagent sa-1 (Find auth) has finished." in json.dumps(line) for line in lines[:-1])
    final_request = [b for b in server.requests if is_main(b)][-1]
    assert "Background subagent sa-1 (Find auth) has finished." in last_user_text(final_request)
    server.assert_no_rejections()


def test_p_text_output_is_the_answer_of_the_turn_that_read_the_results_while_busy(server, api_env, repo):
    child_answered = threading.Event()

    def main(body):
        if "Background subagent sa-1" in last_user_text(body):
            return text("Done: the README and the auth finding.")
        if not tool_results(body):
            return background_task("Find auth", "Find where auth is handled.")
        child_answered.wait(120)
        return tool_use("read_file", {"path": "README.md"})  # busy until the result arrives

    def child(body):
        child_answered.set()
        return text("Auth is in src/app/auth.py.")

    server.responder = lambda body: main(body) if is_main(body) else child(body)
    proc = agentcli("-p", "Find auth in the background and read the README", cwd=repo, env=api_env)
    assert (proc.returncode, proc.stdout) == (0, "Done: the README and the auth finding.\n"), proc.stderr
    final = [b for b in server.requests if is_main(b)][-1]
    last = final["messages"][-1]
    assert last["content"][0]["type"] == "tool_result"  # it arrived in the busy turn, next to a tool result
    assert "Auth is in src/app/auth.py." in message_text(last)
    server.assert_no_rejections()


def test_p_resumes_a_child_of_a_continued_session(server, api_env, repo):
    server.when(
        is_main,
        tool_use("task", {"description": "Find login", "prompt": "Where is login defined?"}),
        text("In auth.py."),
    )
    server.when(lambda b: not is_main(b), text("login is at src/app/auth.py:4."))
    first = agentcli("-p", "Find login", cwd=repo, env=api_env)
    assert first.returncode == 0, first.stderr
    server.when(
        is_main,
        tool_use("task", {"description": "Follow up", "prompt": "And who calls it?", "resume": "sa-1"}),
        text("views.py calls it."),
    )
    server.when(lambda b: not is_main(b), text("src/app/views.py imports login."))
    proc = agentcli("-p", "Who calls login?", "--continue", "--output-format", "json", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["result"] == "views.py calls it."
    [child] = out["subagents"]
    assert (child["id"], child["segments"], child["status"]) == ("sa-1", 2, "done")
    resumed = [b for b in server.requests if not is_main(b)][-1]
    assert first_user_text(resumed) == "Where is login defined?"
    assert last_user_text(resumed) == "And who calls it?"
    server.assert_no_rejections()


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_p_keeps_the_answer_written_before_waiting_for_a_background_child(server, api_env, repo, output_format):
    """A model that answers, then ends its turn to wait for a child, then writes about the child: every
    format gets both texts, in order, a blank line between."""
    main_ended = threading.Event()
    answered = "login is defined in src/app/auth.py:4. I started sa-1 to find its callers."

    def answer_and_wait(body):
        main_ended.set()
        return text(answered)

    server.when(
        is_main,
        reply(
            "Let me start a search.",
            tool_use_block(
                "task", {"description": "Find callers", "prompt": "Who calls login?", "run_in_background": True}
            ),
        ),
        answer_and_wait,
        text("sa-1 reports: views.py imports login."),
    )
    server.when(lambda b: not is_main(b), text("src/app/views.py:1 imports login.", gate=main_ended, gate_timeout=120))
    args = ["--output-format", output_format] + (["--verbose"] if output_format == "stream-json" else [])
    proc = agentcli("-p", "Where is login, and who calls it?", *args, cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    expected = f"Let me start a search.\n\n{answered}\n\nsa-1 reports: views.py imports login."
    if output_format == "text":
        assert proc.stdout == expected + "\n"
    else:
        result = json.loads(proc.stdout.splitlines()[-1])
        assert (result["type"], result["result"]) == ("result", expected)
    server.assert_no_rejections()
