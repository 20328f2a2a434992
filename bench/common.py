"""What several measures share: sessions on the stand-in server, memory readings, paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.config import Settings
from agentcli.core.assembly import assemble
from agentcli.core.events import Event
from agentcli.core.model.llm import LLM, Credentials
from agentcli.core.session import Session
from agentcli.core.system.workspace import Workspace
from tests.fakes.anthropic_server import FakeAnthropic, estimate_tokens

from .probes import API_KEY, rss_mb, screen_text  # noqa: F401  (re-exported: several measures use them)

StandIn = FakeAnthropic  # the stand-in server sets TCP_NODELAY itself, as real API front ends do

REPO_ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # the venv's bin: python, agentcli, rg


def make_session(
    server: FakeAnthropic, root: Path, sink: Callable[[Event], None] | None = None, **overrides: Any
) -> Session:
    """A Session on ``root`` talking to ``server`` through the real SDK (as tests/conftest.py builds one)."""
    settings = Settings(**overrides)
    llm = LLM(
        model=settings.model,
        max_tokens=settings.max_tokens,
        max_retries=0,
        credentials=Credentials(api_key=API_KEY, base_url=server.base_url),
    )
    return assemble(settings.engine(), Workspace.at(root), sink or (lambda event: None), interactive=False, llm=llm)


TOOLS = Settings().engine().tools  # the default settings of the tools, for a ToolContext of its own


async def close_session(session: Session) -> None:
    await session.aclose()


def run_to_exit(
    argv: list[str], *, timeout: float, check: bool = False, **options: Any
) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run`` for a process timed to its exit, whose streams are no pipes: the wait blocks until the
    exit (waitpid), and a timer kills a process that outlives ``timeout`` (then ``TimeoutExpired``). With a
    timeout, ``subprocess.run`` polls for the exit instead, sleeping 1, 2, 4 ... then 50 ms between looks, which
    added up to 50 ms to a row timed to the exit (0-50 ms by where the exit fell between two looks) and set a
    short process's time on the grid of those looks."""
    timed_out = threading.Event()
    with subprocess.Popen(argv, **options) as proc:

        def kill() -> None:
            timed_out.set()
            proc.kill()

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            code = proc.wait()
        finally:
            timer.cancel()
    if timed_out.is_set():
        raise subprocess.TimeoutExpired(argv, timeout)
    done: subprocess.CompletedProcess[bytes] = subprocess.CompletedProcess(argv, code)
    if check:
        done.check_returncode()
    return done


def api_env(server: FakeAnthropic) -> dict[str, str]:
    """The environment for an agentcli subprocess pointed at ``server``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update({"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": API_KEY})
    return env


def request_bytes(body: dict[str, Any]) -> int:
    """Size of one request body as JSON on the wire."""
    return len(json.dumps(body, ensure_ascii=False).encode())


def request_tokens(body: dict[str, Any]) -> int:
    """Input tokens of one request, estimated as the stand-in server counts them (JSON chars / 4)."""
    return estimate_tokens(body)


def committed_repo(root: Path, files: dict[str, str], message: str) -> None:
    """A git repository at ``root`` whose one commit holds ``files`` (path: text), made with no user config."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", message]):
        subprocess.run(
            ["git", *args],
            cwd=root,
            check=True,
            capture_output=True,
            env={
                "GIT_AUTHOR_NAME": "b",
                "GIT_AUTHOR_EMAIL": "b@example.com",
                "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@example.com",
                "PATH": "/usr/bin:/bin",
                "HOME": str(root),
            },
        )
