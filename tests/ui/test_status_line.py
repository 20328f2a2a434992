"""The status line (Claude Code's ``statusLine`` setting): the command's stdin JSON, the line it prints under the
prompt, its refreshes, its timeout, and a repository's status line that must not run without trust."""

from __future__ import annotations

import json
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.formatted_text import to_formatted_text

from agentcli import trust
from agentcli.config import ConfigError, load_settings
from agentcli.ui.status_line import clean
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.widgets.status_line import StatusLine
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, answer, is_child, is_main, send, until
from tests.ui.test_tui_support import plain as shown_text

# Logs each stdin it gets (one JSON object a line) and prints a coloured line of the facts.
SCRIPT = r"""
import json, sys
facts = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(facts) + "\n")
running = ",".join(a["id"] for a in facts["agentcli"]["subagents_running"]) or "none"
print(f"\x1b[32m{facts['model']['id']}\x1b[0m {facts['permission_mode']} "
      f"cost={facts['cost']['total_cost_usd']} running={running}\x1b]0;title\x07\x1b[2J")
print("a second line is not shown")
sys.stderr.write("stderr is ignored\n")
"""


def status_command(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    script, log = tmp_path / "status.py", tmp_path / "stdin.jsonl"
    script.write_text(SCRIPT)
    return {"type": "command", "command": f"{shlex.quote(sys.executable)} {script} {log}", "padding": 2}, log


def received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def line_of(app: Any) -> str:
    widget = app.query_one(StatusLine)
    return "" if widget.has_class("-empty") else shown_text(widget)


async def test_the_command_gets_the_sessions_facts_and_its_line_shows_under_the_prompt(server, tui, repo, tmp_path):
    setting, log = status_command(tmp_path)
    release = threading.Event()
    server.when(
        is_main,
        tool_use("task", {"description": "Find auth", "prompt": "Find where auth is handled."}),
        text("Auth is in src/app/auth.py."),
    )
    server.when(is_child, text("src/app/auth.py", gate=release, gate_timeout=120))
    app = tui(status_line=setting)
    async with app.run_test(size=SIZE) as pilot:
        model = app.session.main.model
        widget = app.query_one(StatusLine)
        # The line is laid out on a refresh after its text is set: on a loaded machine, after the text is seen.
        await until(
            pilot,
            lambda: line_of(app).startswith(f"  {model} default cost=0.0 running=none") and widget.region.height > 0,
            "the first status line, laid out",
        )
        assert widget.region.y > app.prompt.region.y  # under the prompt
        assert "second line" not in line_of(app) and "title" not in line_of(app)  # one line, no other escapes
        [span] = widget.content.spans  # its colour kept: green (SGR 32) over the model's name
        assert span.style.color.number == 2 and widget.content.plain[span.start : span.end] == model
        first = received(log)[0]
        assert first["session_id"] == app.session.id and first["cwd"] == str(repo)
        assert first["workspace"] == {"current_dir": str(repo), "project_dir": str(repo)}
        assert first["model"]["id"] == model and first["permission_mode"] == "default"
        assert first["context_window"]["context_window_size"] == app.session.context_window()
        assert first["transcript_path"] == str(app.session.store.main_path)
        assert first["cost"]["total_duration_ms"] >= 0 and first["agentcli"]["busy"] is False

        await send(pilot, "where is auth handled?")
        await until(pilot, lambda: "running=sa-1" in line_of(app), "the running child in the line")
        running = next(f for f in received(log) if f["agentcli"]["subagents_running"])
        assert running["agentcli"]["subagents_running"] == [
            {"id": "sa-1", "subagent_type": "general-purpose", "description": "Find auth", "background": False}
        ]
        assert running["agentcli"]["busy"] is True
        release.set()
        await until(pilot, lambda: not app.busy, "the turn to end")
        await until(
            pilot,
            lambda: "running=none" in line_of(app) and "cost=0.0 " not in line_of(app),
            "the line after the turn, with its cost",
        )
        last = received(log)[-1]
        assert last["cost"]["total_cost_usd"] > 0 and last["context_window"]["current_usage"]["input_tokens"] > 0
        assert last["context_window"]["used_percentage"] > 0

        await pilot.press("shift+tab")  # the mode changed: the line follows
        await until(pilot, lambda: " acceptEdits " in line_of(app), "the new mode in the line")


async def test_a_command_that_hangs_is_stopped_the_line_kept_and_said_once(tui, tmp_path):
    first = tmp_path / "ran-once"
    command = f"if [ -e {first} ]; then sleep 60; else touch {first}; echo first line; fi"
    app = tui(
        status_line={"type": "command", "command": command, "timeout": 5}
    )  # the first run must fit on a loaded machine
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: line_of(app) == "first line", "the first line")
        await pilot.press("shift+tab")
        await until(pilot, lambda: app._notifications, "a note that the command was stopped")
        runner = app.query_one(StatusLine).runner
        runs = runner.runs
        await pilot.press("shift+tab")
        await until(pilot, lambda: runner.runs > runs and runner._task.done(), "another run to its end")
        notes = [n.message for n in app._notifications]
        assert notes == [
            f"The status line command {command} did not finish within 5 s and was stopped; "
            "the line shows its last output."
        ]
        assert line_of(app) == "first line"


def test_clean_keeps_colours_and_drops_every_other_escape():
    assert clean("\x1b[1;32mok\x1b[0m\x1b]0;evil\x07\x1b[2J\x1b[10;1H\r\x08 end") == "\x1b[1;32mok\x1b[0m end"
    assert clean("\x1bP+q\x1b\\a\x00b\tc") == "ab c"


def claude_settings(repo: Path, command: str) -> None:
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"statusLine": {"type": "command", "command": command}}))


async def test_a_repositorys_status_line_never_runs_in_an_untrusted_workspace(server, make_session, repo, tmp_path):
    """The attack: a cloned repository's .claude/settings.json names a status line command. Untrusted, it never
    runs; trusted (the control), it does, in the OS sandbox where there is one."""
    ran = repo / "the-repository-ran-this"  # in the workspace: the sandbox lets a command write there
    claude_settings(repo, f"touch {ran}; echo pwned")
    request = trust.request_for(repo)
    assert f"  statusLine command touch {ran}; echo pwned (runs each time the status line refreshes)" in request.lines()
    for trusted in (False, True):
        settings = load_settings(repo, trusted=trusted)
        assert bool(settings.status_line) is trusted
        session, _ = make_session(**{k: getattr(settings, k) for k in ("status_line", "trusted")})
        app = make_app(session.settings, repo, session=session, testing=True)
        server.script(text("Hello."))
        async with app.run_test(size=SIZE) as pilot:
            await answer(pilot, "hi")  # the status line refreshes at the start and the end of a turn
            if trusted:
                await until(pilot, lambda: line_of(app) == "pwned", "the trusted workspace's line")
                assert ran.exists()
            else:
                assert app.query_one(StatusLine).runner is None and line_of(app) == ""
                assert not ran.exists()
        if trusted:
            assert settings.status_line.get("agentcli_from_workspace") is True  # so it runs in the sandbox


@pytest.mark.parametrize(
    "value, says",
    [
        ("echo hi", "'statusLine' must be a table"),
        ({"type": "command", "command": ""}, "'statusLine.command' must not be empty"),
        ({"type": "command", "command": "x", "padding": -1}, "'statusLine.padding' must be a number of columns"),
        ({"type": "command", "command": "x", "timeout": 0}, "'statusLine.timeout' must be a positive number"),
        ({"type": "command", "command": "x", "refresh": 1}, "unknown setting 'statusLine.refresh'"),
    ],
)
def test_a_bad_status_line_setting_is_one_sentence(repo, value, says):
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"statusLine": value}))
    with pytest.raises(ConfigError, match=says):
        load_settings(repo, trusted=True)


async def test_line_mode_shows_the_line_in_its_bottom_toolbar(plain, server, tmp_path):  # noqa: F811
    setting, log = status_command(tmp_path)
    server.script(text("Hello."))
    ui = plain(status_line=setting)
    await ui.idle()
    model = ui.app.session.main.model

    def toolbar() -> str:
        return "".join(part for _, part, *_ in to_formatted_text(ui.app.toolbar()))

    await ui.until(lambda: toolbar().startswith(f"   {model} default cost=0.0 running=none\n"), "the status line")
    assert f" {model} · default · context" in toolbar().split("\n")[1]  # agentcli's own line stays below it
    await ui.submit("hi")
    await ui.until(lambda: "cost=0.0 " not in toolbar(), "the line with the turn's cost")
    assert received(log)[-1]["cost"]["total_cost_usd"] > 0
    assert await ui.quit() == 0
