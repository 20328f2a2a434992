"""The README's way in: `make install` into a prefix, then `agentcli`, and `make uninstall`, which keeps the
sessions; and `agentcli --demo`, which needs no key and no network, and none of tests/ (an installed package
has no tests/)."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agentcli.config import Settings
from agentcli.core.engine.loop import Agent
from agentcli.core.model.llm import LLM, Credentials
from agentcli.core.session import Session
from agentcli.demo.app import make_demo_app
from agentcli.demo.intro import PROMPT
from agentcli.demo.sample import write_sample
from agentcli.demo.server import DemoServer
from agentcli.ui.tui.app import AgentApp
from agentcli.ui.tui.screens.transcript import TranscriptScreen
from tests.conftest import user_cache
from tests.fakes.anthropic_server import text
from tests.narrow import of
from tests.ui.test_tui_support import SIZE, until
from tests.waiting import DEADLINE, wait_until

REPO = Path(__file__).resolve().parents[2]
# Runs agentcli's entry point with tests/ unimportable, as from an installed package.
WITHOUT_TESTS = "import sys; sys.modules['tests'] = None; from agentcli.__main__ import main; main()"


def main_of(app: AgentApp) -> Agent:
    """The demo app's main agent: its session read beyond the surface (a Session once the app opened it)."""
    return of(Session, app.session).main


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(f.relative_to(folder)): f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file()}


def wheelhouse(env: dict[str, str]) -> Path | None:
    """Wheels of agentcli's dependencies and its build backend (not of agentcli: `make install` builds that from this
    clone), made once per pyproject.toml and Python and kept in the user's cache, so the install asks no index (about
    half its time). None when they cannot be built here: the install then asks the index, as a user's does."""
    project = (REPO / "pyproject.toml").read_bytes()
    key = hashlib.sha256(project + sys.version.encode()).hexdigest()[:16]
    house = user_cache() / "agentcli-tests" / f"wheelhouse-{key}"
    if house.is_dir():
        return house
    meta = tomllib.loads(project.decode())
    house.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix="building-", dir=house.parent))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(building),
            *meta["build-system"]["requires"],
            *meta["project"]["dependencies"],
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        shutil.rmtree(building, ignore_errors=True)
        return None
    try:
        building.rename(house)  # whole or not at all; a run beside this one may have made it first
    except OSError:
        shutil.rmtree(building, ignore_errors=True)
    return house


@pytest.mark.timeout(900)  # pip installs every dependency into a fresh environment
def test_make_install_and_uninstall_keep_the_users_sessions(tmp_path, server, repo):
    """An upgrade from the old layout (the environment inside the data folder), then an uninstall: the
    program comes and goes, the sessions stay where agentcli reads them, byte for byte."""
    home = tmp_path / "home"
    prefix = home / ".local"  # the default PREFIX, so the data folder is prefix/share/agentcli
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_", "XDG_"))}
    env.update(
        HOME=str(home),
        PYTHON=sys.executable,
        ANTHROPIC_BASE_URL=server.base_url,
        ANTHROPIC_API_KEY="sk-ant-t",
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR") or str(user_cache() / "pip"),  # pip's wheels, reused
        PIP_COMPILE="0",
    )  # no .pyc at install: 13 s of CPU, and nothing here needs them (PIP_NO_COMPILE=1
    # would not do: pip reads it as compile=1)
    server.script(text("Hello."))
    first = subprocess.run(
        [sys.executable, "-m", "agentcli", "-p", "hi", "--output-format", "json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout)["session_id"]
    data = prefix / "share" / "agentcli"
    sessions = files_under(data)
    assert any(name.endswith(f"{session}.jsonl") for name in sessions)
    old_venv = data / "venv"  # as an install before this one left it, with its link
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(old_venv)], check=True, timeout=120)
    (old_venv / "bin" / "agentcli").write_text("#!/bin/sh\necho old\n")
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "agentcli").symlink_to(old_venv / "bin" / "agentcli")

    wheels = wheelhouse(env)
    pip_args = f"--no-index --find-links {shlex.quote(str(wheels))}" if wheels else ""

    def make(target: str) -> str:
        done = subprocess.run(
            ["make", "-C", str(REPO), target, f"INSTALL_PIP_ARGS={pip_args}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=840,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    said = make("install")
    command = prefix / "bin" / "agentcli"
    assert f"{prefix / 'bin'} is not on your PATH" in said and f"run {command} --demo" in said, (
        said
    )  # not "Now: agentcli"
    assert "Now: cd your-repo" not in said
    assert not old_venv.exists() and files_under(data) == sessions  # the old environment went, nothing else
    assert command.resolve().is_relative_to(prefix / "lib" / "agentcli" / "venv")
    version = subprocess.run([str(command), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("agentcli "), version.stderr
    listed = subprocess.run(
        [str(command), "sessions", "list"], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0 and session in listed.stdout, listed.stdout + listed.stderr
    # the installed package is the one in the prefix, not this clone
    where = subprocess.run(
        [
            str(prefix / "lib" / "agentcli" / "venv" / "bin" / "python"),
            "-c",
            "import agentcli, agentcli.demo.server; print(agentcli.__file__)",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.returncode == 0 and str(prefix) in where.stdout, where.stderr

    said = make("uninstall")
    assert not command.exists() and not command.is_symlink() and not (prefix / "lib" / "agentcli").exists()
    assert files_under(data) == sessions
    assert not (home / ".config" / "agentcli").exists()  # never made, so not named
    assert f"Your sessions and settings stay in {data}: delete it to remove them too." in said, said


def test_demo_answers_headless_without_a_key_and_without_tests(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_"))}
    env["ANTHROPIC_API_KEY"] = "sk-ant-the-users-real-key"  # the demo never needs nor sends it
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_TESTS, "--demo", "-p", PROMPT, "--output-format", "json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "login is handled in shop/auth.py" in result["result"]
    assert "system-reminder" not in result["result"] and "Receipt for" not in result["result"]  # the model's notes
    [child] = result["subagents"]
    assert child["status"] == "done"
    assert list(tmp_path.iterdir()) == []  # nothing left behind where it was started


def test_quitting_the_demo_s_app_says_where_its_session_went(tmp_path):
    """The full-screen demo quit without a word, where line mode says its session goes with its folder."""
    import pty

    from tests.e2e.test_key_exposure import read_some, read_until

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_"))}
    env["TERM"] = "xterm-256color"
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", WITHOUT_TESTS, "--demo"],
        cwd=tmp_path,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    try:
        seen = read_until(leader, proc, b"Findings", "the demo's first answer never came")  # its session is saved
        wait_until(
            lambda: proc.poll() is not None or os.write(leader, b"\x11") and False,  # ctrl+q until it quits
            "the demo quitting on ctrl+q",
        )
        while chunk := read_some(leader, 0.5):
            seen += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        os.close(leader)
    assert proc.returncode == 0
    assert b"The demo's session goes with its temporary folder, so there is nothing to resume" in seen, seen[-2000:]


def test_the_demo_s_line_mode_does_not_offer_to_resume_a_session_it_removes(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_"))}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_TESTS, "--demo", "--plain"],
        input="hello\n",
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "--continue" not in done.stdout and "is saved" not in done.stdout
    assert "The demo's session goes with its temporary folder, so there is nothing to resume" in done.stdout


async def test_demo_app_delegates_shows_the_panel_and_opens_the_transcript(tmp_path):
    root = write_sample(tmp_path / "tiny-shop")
    with DemoServer(pace=0) as server:
        llm = LLM(model="demo", credentials=Credentials(api_key="demo", base_url=server.base_url))
        app = make_demo_app(Settings(model="demo"), root, llm=llm, testing=True)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the transcript to open")
            assert app.panel.is_open and [s.status for s in app.subagents.values()] == ["done"]
            assert "login is handled in shop/auth.py" in main_of(app).last_text()
            await app.session.aclose()


async def test_the_demo_shows_a_plan_an_approved_edit_with_its_diff_and_rewind(tmp_path):
    """Beyond search, without a key: a plan, an edit asked with its diff and approved, and /rewind undoing it;
    an @ attachment is read, not grepped for; `find where cart is handled` names shop/cart.py, not the README."""
    from agentcli.ui.tui.widgets.plan import PlanBlock
    from tests.ui.test_tui_support import approval_shown, plain, send

    root = write_sample(tmp_path / "tiny-shop")
    before = (root / "shop" / "cart.py").read_text()
    with DemoServer(pace=0) as server:
        llm = LLM(model="demo", credentials=Credentials(api_key="demo", base_url=server.base_url))
        app = make_demo_app(Settings(model="demo"), root, llm=llm, testing=True)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the first question's transcript")
            await pilot.press("escape")
            await until(pilot, lambda: not app.busy, "the first question's end")
            await send(pilot, "add a discount to the cart")
            await until(pilot, lambda: approval_shown(app), "the edit's approval")
            shown = plain(app.screen.query_one("#approval-input"))
            assert "+    def total(self, prices: dict[str, int], percent_off: int = 0) -> int:" in shown, shown
            assert app.query(PlanBlock)  # the plan
            await pilot.press("y")
            await until(pilot, lambda: not app.busy and "/rewind" in main_of(app).last_text(), "the edit's end")
            assert "percent_off" in (root / "shop" / "cart.py").read_text()
            await send(pilot, "/rewind 2 files")
            await until(pilot, lambda: (root / "shop" / "cart.py").read_text() == before, "the file put back")
            await send(pilot, "@shop/cart.py what is in here?")
            await until(pilot, lambda: not app.busy and "What you attached" in main_of(app).last_text(), "an answer")
            assert "`Cart` (line 7)" in main_of(app).last_text()
            calls = of(list, [m for m in main_of(app).messages if m["role"] == "assistant"][-1]["content"])
            assert not [b for b in calls if b.get("type") == "tool_use"]  # no search for the file's path
            await send(pilot, "find where cart is handled")
            await until(pilot, lambda: not app.busy and "subagent found" in main_of(app).last_text(), "the search")
            assert "cart is handled in shop/cart.py:7" in main_of(app).last_text()  # the class, not README.md:3
            await app.session.aclose()


async def test_the_demo_runs_a_background_child_the_user_steers_and_reports_it(tmp_path):
    """ "check the tests in the background": a background child starts and the main agent says how to steer it;
    `/steer` sent while the child works reaches the child's next request, its answer says what the user told
    it, and the main agent reports the result when it arrives. The child's second request is held until the
    steer is in, so the steer cannot come too late however fast the machine is."""
    import threading

    from agentcli.demo import background, scenario
    from tests.ui.test_tui_support import send

    bodies: list[dict[str, Any]] = []
    held, release = threading.Event(), threading.Event()

    def answer(body: dict[str, Any]) -> list[dict[str, Any]]:
        child = background.is_child(scenario.first_user_text(body))
        if child:
            bodies.append(body)
            if len(scenario.tool_results(body)) and not held.is_set():  # its second request: wait for the steer
                held.set()
                release.wait(timeout=DEADLINE)
        return scenario.answer(body)

    root = write_sample(tmp_path / "tiny-shop")
    try:
        with DemoServer(responder=answer, pace=0) as server:
            llm = LLM(model="demo", credentials=Credentials(api_key="demo", base_url=server.base_url))
            app = make_demo_app(Settings(model="demo"), root, llm=llm, testing=True)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the first question's transcript")
                await pilot.press("escape")
                await until(pilot, lambda: not app.busy, "the first question's end")
                await send(pilot, "check the tests in the background")
                await until(pilot, held.is_set, "the background child's second request")
                # The server holds the request before the app has drawn the child's start (its events come through
                # the app's queue): under load the app had not seen it yet (StopIteration below, seen once).
                running = lambda: [r for r in app.subagents.values() if r.status == "running"]  # noqa: E731
                await until(pilot, running, "the app to show the background child")
                child = running()[0]
                assert child.background and child.description == background.DESCRIPTION
                await until(pilot, lambda: not app.busy, "the main agent's turn to end while the child works")
                assert f"/steer {child.id} look at orders too" in main_of(app).last_text()  # how to steer it
                await send(pilot, f"/steer {child.id} look at orders too")
                release.set()
                await until(
                    pilot,
                    lambda: not app.busy and f"{child.id} is back" in main_of(app).last_text(),
                    "the reported result",
                )
                steered = [b for b in bodies if "A message from the user while you work" in json.dumps(b)]
                assert steered and "look at orders too" in json.dumps(steered[0]["messages"][-1])
                replies = [m for m in steered[-1]["messages"] if m["role"] == "assistant"]
                assert "Got your message: “look at orders too”" in json.dumps(replies, ensure_ascii=False)
                report = main_of(app).last_text()
                assert "You told me while I worked: “look at orders too”" in report, report
                assert "`orders` appears in no test" in report and "Nothing tests `shop/auth.py`" in report, report
                await app.session.aclose()
    finally:
        release.set()  # a failed test leaves no request waiting


def test_the_demo_s_background_check_in_p_waits_for_the_child_and_reports_it(server, api_env, tmp_path):
    """`-p "check the tests in the background"` against the demo's script: the run waits for the background
    child and its answer holds the main agent's report of the child's result, not only "it started"."""
    from tests.e2e.test_headless import agentcli
    from tests.fakes.scenarios import demo_responder

    server.responder = demo_responder
    root = write_sample(tmp_path / "tiny-shop")
    proc = agentcli("-p", "check the tests in the background", "--output-format", "json", cwd=root, env=api_env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)["result"]
    assert "sa-1 is checking the tests in the background" in result, result
    assert "## sa-1 is back: Check the tests" in result and "Nothing tests `shop/auth.py`" in result, result
    assert result.index("is checking") < result.index("is back")
    server.assert_no_rejections()
