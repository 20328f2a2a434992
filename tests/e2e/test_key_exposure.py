"""The API key is out of reach of every process agentcli starts, even one that reads /proc of its ancestors.

Each test runs `python -m agentcli` as a user would, against the stand-in server, with a model that
makes bash print the environment and command line of every ancestor it can find.
"""

from __future__ import annotations

import base64
import json
import os
import pty
import secrets
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.test_bad_setup import one_sentence
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use
from tests.waiting import wait_until

# Every ancestor of bash, up to pid 1: "== pid", then its environment and argv, one entry a line.
DUMP_ANCESTORS = (
    "cat /proc/$PPID/environ /proc/$PPID/cmdline | tr '\\0' '\\n'; "
    'p=$$; while [ "$p" -gt 1 ]; do echo "== $p"; '
    "tr '\\0' '\\n' < /proc/$p/environ; tr '\\0' '\\n' < /proc/$p/cmdline; "
    "p=$(awk '/^PPid:/{print $2}' /proc/$p/status); done"
)


def fresh(label: str) -> str:
    return f"{label}-{secrets.token_hex(12)}"


def dump_script(server, repo: Path) -> Path:
    """The model runs the dump through bash; bash also keeps a full copy in the workspace."""
    dump = repo / "dump.txt"
    server.script(tool_use("bash", {"command": f"{{ {DUMP_ANCESTORS}; }} | tee dump.txt"}), text("Looked."))
    return dump


# Inside the OS sandbox /proc shows no ancestor at all: the scrubbing is tested on its own, without it.
NO_SANDBOX = {"AGENTCLI_SANDBOX": "off"}


def run_dump(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return agentcli(
        "-p",
        "show me your environment",
        "--permission-mode",
        "bypassPermissions",
        "--output-format",
        "json",
        cwd=repo,
        env={**env, **NO_SANDBOX},
    )


def tool_output(server) -> str:
    [result] = tool_results(server.requests[1])
    return tool_result_text(result)


def sent_key(server) -> str | None:
    """The key of the first request, whichever header the SDK put it in."""
    headers = server.request_headers[0]
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ") or None


def check_dump(dump: Path, *secret_values: str) -> str:
    text_ = dump.read_text()
    assert f"== {os.getpid()}\n" in text_, "the walk never reached the test process, so it proves nothing"
    assert "PATH=" in text_ and "agentcli" in text_  # environments and command lines were read
    for value in secret_values:
        assert value not in text_
    return text_


@pytest.mark.parametrize("credential", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "password in ANTHROPIC_BASE_URL"])
def test_bash_finds_no_secret_in_any_ancestor(server, repo, credential):
    key, other = fresh("sk-ant-e2e"), fresh("ghp")
    env = {"ANTHROPIC_BASE_URL": server.base_url, "GITHUB_TOKEN": other}
    if credential.startswith("password"):
        env["ANTHROPIC_BASE_URL"] = server.base_url.replace("://", f"://agent:{key}@")
    else:
        env[credential] = key
    dump = dump_script(server, repo)
    proc = run_dump(repo, env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == "Looked."
    text_ = check_dump(dump, key, other)
    assert "python\n-m\nagentcli\n-p\nshow me your environment" in text_  # agentcli's own argv was read
    output = tool_output(server)
    assert "== " in output
    for value in (key, other):
        assert value not in output and value not in proc.stdout and value not in proc.stderr
    # The secret still reached the API, in a header only.
    if credential.startswith("password"):
        basic = "Basic " + base64.b64encode(f"agent:{key}".encode()).decode()
        assert server.request_headers[0].get("authorization") == basic
    else:
        assert sent_key(server) == key


def test_keep_secret_env_still_hands_secrets_to_bash_but_not_through_proc(server, repo, isolated_home):
    key, other = fresh("sk-ant-e2e"), fresh("ghp")
    config = isolated_home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("keep_secret_env = true\n")
    server.script(
        tool_use("bash", {"command": "echo \"token=$GITHUB_TOKEN\"; tr '\\0' '\\n' < /proc/$PPID/environ"}),
        text("Done."),
    )
    proc = agentcli(
        "-p",
        "env",
        "--permission-mode",
        "bypassPermissions",
        cwd=repo,
        env={"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": key, "GITHUB_TOKEN": other, **NO_SANDBOX},
    )
    assert proc.returncode == 0, proc.stderr
    output = tool_output(server)
    assert f"token={other}\n" in output  # what the user asked for
    assert output.count(other) == 1 and key not in output  # and nothing from agentcli's own environment


def helper_config(isolated_home: Path, command: str) -> None:
    config = isolated_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"api_key_helper = {json.dumps(command)}\n")


@pytest.mark.parametrize("where", ["user config", "environment"])
def test_api_key_helper_key_reaches_the_api_and_no_environment(server, repo, isolated_home, tmp_path, where):
    key = fresh("sk-ant-helper")
    key_file = tmp_path / "key.txt"
    key_file.write_text(key + "\n")
    env = {"ANTHROPIC_BASE_URL": server.base_url}
    if where == "user config":
        helper_config(isolated_home, f"cat {key_file}")
    else:
        env["AGENTCLI_API_KEY_HELPER"] = f"cat {key_file}"
    dump = dump_script(server, repo)
    proc = run_dump(repo, env)
    assert proc.returncode == 0, proc.stderr
    assert sent_key(server) == key
    check_dump(dump, key)
    assert key not in tool_output(server) and key not in proc.stdout and key not in proc.stderr


def test_a_project_cannot_name_an_api_key_helper(server, repo):
    settings = repo / ".agentcli" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text('api_key_helper = "touch helper-ran; echo stolen"\n')
    server.script(text("Hi."))
    key = fresh("sk-ant-e2e")
    proc = agentcli("-p", "hi", cwd=repo, env={"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": key})
    assert proc.returncode == 0, proc.stderr
    assert sent_key(server) == key
    assert not (repo / "helper-ran").exists()  # the helper would have run before the request


@pytest.mark.parametrize(
    "command, message",
    [
        (
            "echo 'vault: permission denied' >&2; exit 3",
            "agentcli: api_key_helper failed with exit code 3: vault: permission denied.",
        ),
        ("true", "agentcli: api_key_helper printed nothing; it must print the API key."),
        ("no-such-helper-command-xyz", "agentcli: api_key_helper failed with exit code 127: "),
    ],
)
def test_a_failing_api_key_helper_is_one_sentence_and_exit_1(server, repo, isolated_home, command, message):
    helper_config(isolated_home, command)
    proc = agentcli("-p", "hi", cwd=repo, env={"ANTHROPIC_BASE_URL": server.base_url})
    assert proc.returncode == 1
    assert one_sentence(proc.stderr).startswith(message)
    assert server.requests == []


def test_a_stray_handover_variable_means_no_key(repo):
    proc = agentcli("-p", "hi", cwd=repo, env={"AGENTCLI_SECRETS_FD": f"{os.getpid()}:0"})
    assert proc.returncode == 2
    assert one_sentence(proc.stderr).startswith("agentcli: No API key: set ANTHROPIC_API_KEY")


def test_the_tui_runs_on_its_terminal_and_its_environment_holds_no_key(server, repo):
    key = fresh("sk-ant-tui")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=key, TERM="xterm-256color")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli"],
        cwd=repo,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    try:
        seen = read_until(leader, proc, b"\x1b[?1049h", "the TUI never switched to the alternate screen")
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes()
        assert b"AGENTCLI_SECRETS_FD=" not in environ  # wiped in place: the process that draws never restarted
        assert key.encode() not in environ and key.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:  # ctrl+c twice on an empty input quits
            os.write(leader, b"\x03")
            seen += read_some(leader, 0.5)
        assert proc.poll() == 0, f"the TUI did not quit on ctrl+c; it showed: {seen[-2000:]!r}"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        os.close(leader)


def read_some(fd: int, wait: float) -> bytes:
    ready, _, _ = select.select([fd], [], [], wait)
    if not ready:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:  # the other side closed
        return b""


def read_until(fd: int, proc: subprocess.Popen[bytes], wanted: bytes, failure: str) -> bytes:
    seen = bytearray()

    def arrived() -> bool:
        assert proc.poll() is None, f"{failure}: agentcli exited; it printed {bytes(seen[-2000:])!r}"
        seen.extend(read_some(fd, 0.5))
        return wanted in seen

    wait_until(arrived, failure, detail=lambda: repr(bytes(seen[-2000:])))
    return bytes(seen)


def test_the_telemetry_collector_s_headers_reach_the_collector_and_not_bash(server, repo):
    """OTEL_EXPORTER_OTLP_HEADERS holds the collector's credentials: held like a key, handed to the exporter."""
    import http.server
    import threading

    secret = fresh("otlp-secret")
    seen: list[str] = []

    class Collector(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the standard library's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(self.headers.get("Authorization", ""))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    collector = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    try:
        server.script(tool_use("bash", {"command": 'echo "headers=$OTEL_EXPORTER_OTLP_HEADERS"; env'}), text("Done."))
        proc = agentcli(
            "-p",
            "env",
            "--permission-mode",
            "bypassPermissions",
            cwd=repo,
            env={
                "ANTHROPIC_BASE_URL": server.base_url,
                "ANTHROPIC_API_KEY": fresh("sk-ant-e2e"),
                **NO_SANDBOX,
                "OTEL_TRACES_EXPORTER": "otlp",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.server_port}",
                "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{secret}",
            },
        )
        assert proc.returncode == 0, proc.stderr
        output = tool_output(server)
        assert "headers=\n" in output and "PATH=" in output
        assert secret not in output
        wait_until(lambda: seen, "the collector receiving spans")
        assert seen[0] == f"Bearer {secret}"  # the exporter still had its credentials
    finally:
        collector.shutdown()
        collector.server_close()
