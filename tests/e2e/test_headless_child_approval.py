"""In `-p`, a background child's call that needs approval follows the main agent's rules: refused, saying
what would allow it, never queued for a user who is not there (the run does not hang)."""

from __future__ import annotations

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import offers_tool, text, tool_result_text, tool_results, tool_use


def is_main(body):
    return offers_tool(body, "task")


def test_a_background_child_s_call_that_would_ask_is_refused_in_p(server, api_env, repo):
    server.when(
        is_main,
        tool_use(
            "task", {"description": "Make a file", "prompt": "Create made-by-child.txt.", "run_in_background": True}
        ),
        text("Started it."),
        text("The child could not create the file."),
    )
    server.when(
        lambda b: not is_main(b),
        tool_use("bash", {"command": "touch made-by-child.txt"}),
        text("I was not allowed to run touch."),
    )
    proc = agentcli("-p", "Make the file in the background", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert not (repo / "made-by-child.txt").exists()
    child_calls = [b for b in server.requests if not is_main(b)]
    [refusal] = tool_results(child_calls[-1])
    said = tool_result_text(refusal)
    assert refusal["is_error"] and "needs approval" in said and "no one can give it in a headless run" in said
    assert "--permission-mode bypassPermissions" in said
    server.assert_no_rejections()
