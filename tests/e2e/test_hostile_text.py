"""Text a stranger wrote never drives the user's terminal, and the full-screen app needs a terminal.

A file in a cloned repository (or the model, quoting it) can hold escape sequences: a clipboard
write (OSC 52), a window title (OSC 0), a screen clear, a hidden link (OSC 8), an 8-bit CSI.
Each front end must show them as visible text instead of sending them to the terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentcli.core.events import ToolCallFinished
from agentcli.ui.escapes import visible, visible_event
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_tui_support import answer, shown, tui  # noqa: F401

EVIL = (
    "title\x1b]0;pwned\x07 clip\x1b]52;c;ZWNobyBwd25lZA==\x07 clear\x1b[2J "
    "link\x1b]8;;http://evil.example\x1b\\here\x1b]8;;\x1b\\ csi\x9b2J bell\x07 end"
)
RAW = ("\x1b", "\x9b", "\x07")  # what must never reach a terminal


def run(*args: str, cwd: Path, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=cwd,
        env=full_env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def assert_inert(output: str) -> None:
    for char in RAW:
        assert char not in output, f"a raw {char!r} reached the terminal: {output!r}"


def holds(value: object, needle: str) -> bool:
    """Whether a string somewhere in a parsed JSON value contains ``needle``."""
    if isinstance(value, str):
        return needle in value
    if isinstance(value, dict):
        return any(holds(v, needle) for v in value.values())
    if isinstance(value, list):
        return any(holds(v, needle) for v in value)
    return False


def plant(repo: Path) -> None:
    (repo / "evil.txt").write_text(f"notes\n{EVIL}\n")


def script_reading_the_file(server) -> None:
    server.script(tool_use("read_file", {"path": "evil.txt"}), text(f"The file says: {EVIL}"))


def test_visible_writes_controls_out_and_keeps_text_newlines_and_tabs():
    assert visible("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert visible("tab\there\nnext\r\nwin") == "tab\there\nnext\r\nwin"
    assert visible("over\rwrite") == "over\\rwrite"
    assert visible("\x9b2J\x07\x00") == "\\x9b2J\\a\\x00"
    event = ToolCallFinished(id="t1", name="bash", output=EVIL, is_error=False, seconds=0.1)
    assert_inert(visible_event(event).output)
    plain_event = ToolCallFinished(id="t1", name="bash", output="fine", is_error=False, seconds=0.1)
    assert visible_event(plain_event) is plain_event  # nothing to change, nothing copied


def test_headless_text_and_stream_json_print_escapes_visibly(server, api_env, repo):
    plant(repo)
    script_reading_the_file(server)
    proc = run("-p", "what does evil.txt say?", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout + proc.stderr)
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\a" in proc.stdout

    script_reading_the_file(server)
    proc = run("-p", "again", "--output-format", "events", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert any(holds(r, EVIL) for r in records)  # the data itself is unchanged


def test_sessions_show_prints_escapes_visibly_and_json_keeps_the_data(server, api_env, repo):
    plant(repo)
    script_reading_the_file(server)
    first = run("-p", "what does evil.txt say?", "--output-format", "json", cwd=repo, env=api_env)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]

    shown_text = run("sessions", "show", session_id, cwd=repo, env=api_env)
    assert shown_text.returncode == 0, shown_text.stderr
    assert_inert(shown_text.stdout)
    assert "\\x1b]0;pwned\\a" in shown_text.stdout

    as_json = run("sessions", "show", session_id, "--json", cwd=repo, env=api_env)
    assert as_json.returncode == 0, as_json.stderr
    assert_inert(as_json.stdout)
    records = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert any(holds(r, EVIL) for r in records)

    listed = run("sessions", "list", cwd=repo, env=api_env)
    assert listed.returncode == 0 and session_id in listed.stdout
    assert_inert(listed.stdout)


def test_line_mode_prints_escapes_visibly(server, api_env, repo):
    plant(repo)
    server.script(tool_use("bash", {"command": "cat evil.txt"}), text(f"It printed: {EVIL}"))
    proc = run("--plain", "--permission-mode", "bypassPermissions", cwd=repo, env=api_env, stdin="show me evil.txt\n")
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout + proc.stderr)
    assert "\\x1b]8;;http://evil.example" in proc.stdout


async def test_the_app_shows_escapes_visibly(server, repo, tui):  # noqa: F811
    plant(repo)
    server.script(tool_use("bash", {"command": "cat evil.txt"}), text(f"It printed: {EVIL}"))
    app = tui(permission_mode="bypassPermissions")
    async with app.run_test(size=(120, 40)) as pilot:
        await answer(pilot, "show me evil.txt")
        screen_text = shown(app.conversation)
        assert_inert(screen_text)
        assert "\\x1b]52;c;ZWNobyBwd25lZA==" in screen_text


def test_the_app_without_a_terminal_says_so_and_exits(repo):
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "needs a terminal" in proc.stderr and "-p" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
