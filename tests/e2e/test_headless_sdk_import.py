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


def _python(repo, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh Python in ``repo``, given ``args``, without the environment's ANTHROPIC_ settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [sys.executable, "-c", script, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=90
    )


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
    proc = _python(repo, script)
    assert (proc.returncode, proc.stdout.split()) == (0, ["True", "True"]), proc.stderr


# -p's import thread waits, once what the first request needs is in, until that request goes out: Python runs one
# thread at a time, so an import beside the run's preparation would halve its pace. The stand-in is the API.
HELD_IMPORT = """
import asyncio, sys, threading
from agentcli.core.model import sdk_import
from agentcli.core.model.llm import LLM, Credentials

waiting = threading.Event()


class Watched(threading.Event):
    def wait(self, timeout=None):
        waiting.set()
        return super().wait(timeout)


sdk_import.FIRST_REQUEST = Watched()
sdk_import.HOLD_LIMIT = 600  # only the request may end the wait here
thread = sdk_import.start_sdk_import("httpx2", after_first_request=("agentcli.ui.view",))
waiting.wait(60)
print("anthropic" in sys.modules, "agentcli.ui.view" in sys.modules)


async def ask():
    llm = LLM(credentials=Credentials(api_key="sk-ant-held-0000", base_url=sys.argv[1]))
    try:
        await llm.stream(system="Be brief.", messages=[{"role": "user", "content": "hi"}], tools=[],
                         on_text=lambda text: print(text.strip()), on_retry=print)
    finally:
        await llm.aclose()


asyncio.run(ask())
thread.join(60)
print(thread.is_alive(), "anthropic" in sys.modules, "agentcli.ui.view" in sys.modules, sys.getswitchinterval())
"""


def test_the_import_waits_for_the_first_request_then_goes_on(server, repo):
    from tests.fakes.anthropic_server import text

    server.script(text("Held."))
    proc = _python(repo, HELD_IMPORT, server.base_url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["False False", "Held.", "False True True 0.005"], proc.stdout


def test_the_import_does_not_wait_when_the_first_request_is_the_sdks_own(repo):
    # with custom headers (or a proxy) the first request goes through the SDK, which it then needs at once
    script = (
        "import os, sys\nos.environ['ANTHROPIC_CUSTOM_HEADERS'] = 'X-Team: a'\n"
        "from agentcli.core.model import sdk_import\nsdk_import.HOLD_LIMIT = 600\n"
        "from agentcli import cli\ncli.start_sdk_import()\ncli.sdk_import.join(60)\n"
        "print(cli.sdk_import.is_alive(), 'anthropic' in sys.modules)\n"
    )
    proc = _python(repo, script)
    assert (proc.returncode, proc.stdout.split()) == (0, ["False", "True"]), proc.stderr
