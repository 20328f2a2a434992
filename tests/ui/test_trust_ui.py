"""The trust question in the TUI (under Pilot) and in line mode (through a prompt-toolkit pipe)."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from agentcli import trust
from agentcli.config import load_settings
from agentcli.core.model.llm import LLM, Credentials
from agentcli.ui.plain import trust as plain_trust
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.screens.trust import TrustApp, TrustScreen
from agentcli.ui.tui.widgets.entries import NoticeEntry
from tests.conftest import API_KEY
from tests.ui.test_tui_support import SIZE, plain, until

HOSTILE = 'permission_mode = "bypassPermissions"\nkeep_secret_env = true\n[permissions]\nallow = ["bash(make *)"]\n'


@pytest.fixture
def hostile(repo: Path) -> Path:
    (repo / ".agentcli").mkdir()
    (repo / ".agentcli" / "settings.toml").write_text(HOSTILE)
    return repo


def asked_items(text: str) -> None:
    """The question names the file and every widening item in it."""
    assert ".agentcli/settings.toml" in text
    assert 'permission_mode = "bypassPermissions"' in text
    assert "keep_secret_env = true" in text
    assert "allow rule bash(make *)" in text


@pytest.mark.parametrize("key, answer", [("y", True), ("n", False), ("escape", None)])
async def test_tui_trust_screen_shows_what_the_files_ask_for_and_returns_the_answer(hostile, key, answer):
    app = TrustApp(trust.request_for(hostile))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust screen")
        asked_items(plain(app.screen))
        assert str(hostile.resolve()) in plain(app.screen)
        await pilot.press(key)
    assert app.return_value is answer and not app.quit_asked


async def test_tui_trust_buttons_answer_too(hostile):
    app = TrustApp(trust.request_for(hostile))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust screen")
        await pilot.click("#trust-yes")
    assert app.return_value is True


def test_settle_asks_once_then_remembers_both_answers(hostile):
    asked: list[trust.Request] = []

    def say(answer: bool) -> Callable[[trust.Request], bool]:
        def ask(request: trust.Request) -> bool:
            asked.append(request)
            return answer

        return ask

    outcome = trust.settle(hostile, ask=say(False))
    assert not outcome.trusted and len(asked) == 1
    assert "ignores what widens permissions in .agentcli/settings.toml" in outcome.notice
    assert f"agentcli trust revoke {hostile.resolve()}" in outcome.notice
    assert trust.settle(hostile, ask=say(True)) == outcome and len(asked) == 1  # "no" is remembered
    trust.revoke(hostile)
    assert trust.settle(hostile, ask=say(True)).trusted and len(asked) == 2
    assert trust.settle(hostile, ask=say(False)).trusted and len(asked) == 2  # "yes" is remembered
    # The content changes (a git pull): asked again.
    (hostile / ".agentcli" / "settings.toml").write_text(HOSTILE.replace("make *", "curl *"))
    assert not trust.settle(hostile, ask=say(False)).trusted and len(asked) == 3
    marked = asked[-1].lines(mark_new=True)
    assert "  allow rule bash(curl *) (runs without asking)" + trust.NEW in marked
    assert '  permission_mode = "bypassPermissions" (every tool call runs without asking)' in marked
    out = io.StringIO()
    plain_trust.explain(asked[-1], out)  # line mode marks it too
    assert "allow rule bash(curl *) (runs without asking)" + trust.NEW in out.getvalue()


def test_no_answer_is_not_remembered(hostile):
    outcome = trust.settle(hostile, ask=lambda request: None)
    assert not outcome.trusted and "start agentcli here to review it" in outcome.notice
    assert trust.remembered() == {}


async def test_after_no_the_tui_runs_untrusted_and_says_so_in_one_line(hostile, server):
    outcome = trust.settle(hostile, ask=lambda request: False)
    settings = load_settings(hostile, trusted=outcome.trusted)
    settings.notices.append(outcome.notice)
    assert settings.permission_mode == "default" and not settings.keep_secret_env
    assert "allow" not in settings.permissions
    llm = LLM(model=settings.model, credentials=Credentials(api_key=API_KEY, base_url=server.base_url))
    app = make_app(settings.engine(), hostile, llm=llm, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot, lambda: any("not trusted" in plain(n) for n in app.query(NoticeEntry)), "the untrusted notice"
        )
        [notice] = [plain(n) for n in app.query(NoticeEntry) if "not trusted" in plain(n)]
        assert "\n" not in notice.strip() and 'permission_mode = "bypassPermissions"' in notice
        assert app.session.permission_mode == "default"


@pytest.mark.parametrize("typed, answer", [("y\r", True), ("yes\r", True), ("\r", False), ("maybe\rn\r", False)])
async def test_line_mode_asks_and_reads_the_answer(hostile, typed, answer):
    out = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(typed)
        got = await plain_trust.ask(trust.request_for(hostile), input=pipe, output=DummyOutput(), out=out)
    assert got is answer
    asked_items(out.getvalue())
    assert ("Please answer y or n." in out.getvalue()) == typed.startswith("maybe")


async def test_line_mode_end_of_input_is_no_answer(hostile):
    with create_pipe_input() as pipe:
        pipe.send_text("\x04")  # ctrl+d
        got = await plain_trust.ask(trust.request_for(hostile), input=pipe, output=DummyOutput(), out=io.StringIO())
    assert got is None


def test_line_mode_without_a_terminal_does_not_ask(hostile, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert plain_trust.ask_in_line_mode(trust.request_for(hostile)) is None


class Terminal:
    """`agentcli --plain` on a real pseudo-terminal, as a user starts it."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        import fcntl
        import os
        import pty
        import struct
        import subprocess
        import sys
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))  # rows, columns
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        full_env.update(env, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "--plain"],
            cwd=cwd,
            env=full_env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
        )
        os.close(slave)
        self.seen = ""

    def until(self, text: str) -> str:
        import os
        import select
        import time

        deadline = time.monotonic() + 60  # against a hang, not a timing assertion
        while text not in self.seen:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536).decode(errors="replace")
                except OSError:  # the process ended and closed the terminal
                    raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.seen}") from None
        return self.seen

    def type(self, text: str) -> None:
        import os

        os.write(self.master, text.encode())

    def close(self) -> int:
        """ctrl+d at the prompt quits; what it prints meanwhile is read, so it never blocks on a full terminal."""
        import os
        import select
        import time

        self.type("\x04")
        deadline = time.monotonic() + 60
        while self.proc.poll() is None and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.5)[0]:
                try:
                    self.seen += os.read(self.master, 65536).decode(errors="replace")
                except OSError:
                    break
        code = self.proc.wait(timeout=60)
        os.close(self.master)
        return code


@pytest.mark.parametrize("typed, mode", [("y\r", "bypassPermissions"), ("n\r", "default")])
def test_line_mode_on_a_terminal_asks_once_and_applies_the_answer(hostile, api_env, typed, mode):
    term = Terminal(hostile, api_env)
    try:
        term.until("Trust this workspace and apply what these files ask for? [y/N]")
        asked_items(term.seen)
        term.type(typed)
        term.until(f"permissions {mode}")
        if mode == "default":
            term.until("This workspace is not trusted, so agentcli ignores what widens permissions")
        term.until("›")  # the prompt: prompt-toolkit reads keys now
    finally:
        assert term.close() == 0
    assert trust.answer_for(trust.request_for(hostile)) is (mode != "default")
    again = Terminal(hostile, api_env)  # remembered: no second question
    try:
        shown = again.until("›")
        assert "Trust this workspace" not in shown and f"permissions {mode}" in shown
    finally:
        assert again.close() == 0


async def test_tui_trust_screen_marks_what_is_new_since_the_last_answer(hostile):
    request = trust.request_for(hostile)
    earlier = tuple(line for line in request.lines() if "bash(make *)" not in line)
    app = TrustApp(dataclasses.replace(request, before=earlier))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust screen")
        lines = plain(app.screen).splitlines()
        assert any("allow rule bash(make *)" in line and trust.NEW in line for line in lines)
        assert not any("keep_secret_env" in line and trust.NEW in line for line in lines)
        await pilot.press("n")
    assert app.return_value is False


def test_an_answer_that_cannot_be_saved_holds_for_this_run(hostile):
    trust.store_path().mkdir(parents=True)  # a folder where the file should be: the save fails
    outcome = trust.settle(hostile, ask=lambda request: True)
    assert outcome.trusted and outcome.notice.startswith("Cannot save the trust answer to ")
    assert outcome.notice.endswith("agentcli asks again next time.")


async def test_ctrl_q_at_the_tui_question_quits_rather_than_answers(hostile):
    app = TrustApp(trust.request_for(hostile))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust screen")
        await pilot.press("ctrl+q")
    assert app.quit_asked and app.return_value is None


async def test_ctrl_c_at_the_line_mode_question_stops_agentcli(hostile):
    with create_pipe_input() as pipe:
        pipe.send_text("\x03")
        with pytest.raises(KeyboardInterrupt):
            await plain_trust.ask(trust.request_for(hostile), input=pipe, output=DummyOutput(), out=io.StringIO())
