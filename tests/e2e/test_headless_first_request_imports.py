"""`-p` loads what a command, another output format or a review needs when it is first asked for, not before
its first request: the modules below cost its main thread milliseconds of imports before that request, and a
plain `-p hi` never uses them."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text

# Loaded by the agentcli process (PYTHONPATH): records each module the main thread imports (the SDK's import thread
# has its own list, held until the request goes out) and writes them down when the first connection to the
# stand-in server is made, just before the first request.
SITECUSTOMIZE = """
import os, sys, threading

def watch():
    port, out = int(os.environ["AGENTCLI_TEST_PORT"]), os.environ["AGENTCLI_TEST_IMPORTS"]
    imported, done = [], []

    def hook(event, args):
        if done or threading.current_thread() is not threading.main_thread():
            return
        if event == "import" and args[0] not in sys.modules:
            imported.append(args[0])
        elif event == "socket.connect" and isinstance(args[1], tuple) and args[1][1:2] == (port,):
            done.append(True)
            with open(out, "w") as file:
                file.write("\\n".join(imported))

    sys.addaudithook(hook)

if os.environ.get("AGENTCLI_TEST_IMPORTS"):
    watch()
"""

NOT_BEFORE_THE_FIRST_REQUEST = {
    "agentcli.core.engine.review",  # /review and `agentcli review`
    "agentcli.core.engine.review_diff",
    "agentcli.core.engine.review_findings",
    "agentcli.core.engine.context_usage",  # /context
    "agentcli.core.policy.status_command",  # the statusLine setting (the app's)
    "agentcli.ui.stream_json",  # --output-format stream-json and json
    "agentcli.ui.change",
    "agentcli.ui.slash",  # a prompt that starts with a slash
    "agentcli.core.comparison",  # a best-of-N errand's table (task with attempts)
}


def test_a_plain_prompt_loads_no_review_context_status_line_stream_json_commands_or_comparison(
    server, api_env: dict[str, str], repo: Path, tmp_path: Path, isolated_home: Path
) -> None:
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    record = tmp_path / "imported.txt"
    server.script(text("Hi."))
    env = {
        **api_env,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        "AGENTCLI_TEST_PORT": str(urlsplit(server.base_url).port),
        "AGENTCLI_TEST_IMPORTS": str(record),
    }
    proc = agentcli("-p", "hi", cwd=repo, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "Hi.\n", "")
    imported = set(record.read_text().split())
    assert "agentcli.core.session" in imported, "the record holds the main thread's imports before the request"
    assert sorted(imported & NOT_BEFORE_THE_FIRST_REQUEST) == []
