"""`-p` imports the SDK in a thread while it prepares the run: a run that fails while that import is
still going says its one sentence and exits with its code, with no traceback from the thread."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.test_headless import agentcli

NOISE = ("Traceback", "Exception in thread", "Fatal Python error", "sdk-import")


def one_sentence(stderr: str) -> str:
    assert not any(word in stderr for word in NOISE), stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    return stderr.strip()


def test_a_missing_key_is_one_sentence_and_exit_2(repo, isolated_home):
    proc = agentcli("-p", "hi", cwd=repo)
    assert proc.returncode == 2, proc.stderr
    assert one_sentence(proc.stderr).startswith("agentcli: No API key")


def test_bad_settings_fail_while_the_sdk_imports(repo, api_env, isolated_home):
    settings = repo / ".agentcli" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text("model = 123\n")
    proc = agentcli("-p", "hi", cwd=repo, env=api_env)
    assert proc.returncode == 2, proc.stderr
    assert one_sentence(proc.stderr) == f"agentcli: {settings}: 'model' must be a string, not 123."


@pytest.mark.parametrize(
    "args, code", [(["-p", "hi", "--bogus"], 2), (["-p", "hi", "--resume", "nosuch"], 1), (["-p", "   "], 2)]
)
def test_usage_and_session_errors_exit_cleanly(repo, api_env, isolated_home, args, code):
    proc = agentcli(*args, cwd=repo, env=api_env)
    assert proc.returncode == code, proc.stderr
    assert one_sentence(proc.stderr).startswith("agentcli: ")


def test_an_answer_still_arrives(server, api_env, repo, isolated_home):
    from tests.fakes.anthropic_server import text

    server.script(text("Four."))
    proc = agentcli("-p", "two plus two?", cwd=repo, env=api_env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "Four.\n", "")


def test_garbage_collection_is_back_on_after_the_import(repo):
    script = (
        "import gc, sys\nfrom agentcli import cli\ncli.start_sdk_import()\n"
        "cli.sdk_imported()\n"
        "print(gc.isenabled(), 'anthropic' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=90)
    assert (proc.returncode, proc.stdout.split()) == (0, ["True", "True"]), proc.stderr
