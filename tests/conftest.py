"""Shared fixtures: an isolated home, the stand-in API server, a workspace, and sessions on top."""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from agentcli.config import Settings
from agentcli.core.assembly import assemble
from agentcli.core.door import open_session
from agentcli.core.events import Event, Notice, Retrying
from agentcli.core.model.llm import LLM, Credentials
from agentcli.core.session import Session
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import ToolSettings
from tests import retries
from tests.fakes.anthropic_server import FakeAnthropic
from tests.model_clients import close
from tests.model_clients import closing as closing  # what a test opens beside make_session, closed at its end
from tests.model_clients import model_clients_closed as model_clients_closed  # autouse: none is left open
from tests.worker_exit import pytest_sessionfinish as pytest_sessionfinish  # execnet's SIGINT at a worker's end

API_KEY = "sk-ant-test-SECRET-0123456789"

# AGENTCLI_TEST_PROFILE=thorough runs the property and race tests much longer (docs/testing.md); the default is
# what `make test` runs on CI.
THOROUGH = os.environ.get("AGENTCLI_TEST_PROFILE") == "thorough"
settings.register_profile("default", max_examples=100)
settings.register_profile("thorough", max_examples=2000)
settings.load_profile("thorough" if THOROUGH else "default")
RACE_ROUNDS = 10 if THOROUGH else 1  # how many times over the race tests repeat their attack

# The longest tests start first, so that with two workers (`--dist worksteal`, pyproject.toml) the short ones fill
# in around them at the end instead of one worker running a long test alone after the other is done.
LONGEST_FIRST = ("tests/e2e/test_install_and_demo.py::test_make_install", "tests/e2e/", "tests/ui/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((n for n, start in enumerate(LONGEST_FIRST) if item.nodeid.startswith(start)), len(LONGEST_FIRST))

    items.sort(key=rank)  # stable: each module's tests stay together and in order


def user_cache() -> Path:
    """The real user's cache folder (each test's HOME is a temporary one), for what one run keeps for the next:
    pip's wheels, the install test's wheelhouse, the Agent SDK's examples (docs/testing.md)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path(pwd.getpwuid(os.getuid()).pw_dir, ".cache"))


# A gate (or delay) of the stand-in server holds a reply before its status and headers, where a real API would
# have begun it: a held first reply is no silent server, so every agentcli a test starts (and make_session's
# model client) waits for it as long as a gate holds. The tests of first_reply_timeout set it themselves.
PATIENT = ("AGENTCLI_FIRST_REPLY_TIMEOUT", "120")


def tool_settings(**overrides: Any) -> ToolSettings:
    """The tools' part of the settings (``ToolContext.settings``): config.py's defaults, ``overrides`` by setting name."""
    return Settings(**overrides).engine().tools


TOOLS = tool_settings()  # what a ToolContext of a test's own carries, unless the test is about a setting


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the real home: AGENTCLI_HOME and XDG dirs point into tmp."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("AGENTCLI_HOME", str(home / "agentcli"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(*PATIENT)
    # Every tool in every request, as the tests written before tools on demand expect (tests/core/test_on_demand.py
    # sets the routes it tests).
    monkeypatch.setenv("AGENTCLI_TOOL_SEARCH", "off")
    return home / "agentcli"


@pytest.fixture
def server() -> Any:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def api_env(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point the SDK at the stand-in server, with a key, through the environment."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    return {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": API_KEY}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=root,
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "PATH": "/usr/bin:/bin",
            "HOME": str(root),
        },
    )


def stranger_clone(tmp_path: Path, files: dict[str, str]) -> Path:
    """A repository a stranger wrote (``files``, by path), cloned with git the way a user gets one."""
    upstream = tmp_path / "upstream"
    for name, content in files.items():
        (upstream / name).parent.mkdir(parents=True, exist_ok=True)
        (upstream / name).write_text(content)
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "Initial commit")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    return clone


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small real git repository to explore."""
    root = tmp_path / "repo"
    (root / "src" / "app").mkdir(parents=True)
    (root / "src" / "app" / "auth.py").write_text(
        'import hashlib\n\n\ndef login(user, password):\n    """Check a password."""\n'
        "    return handle_auth(user, password)\n\n\ndef handle_auth(user, password):\n"
        "    return hashlib.sha256(password.encode()).hexdigest() == user.digest\n"
    )
    (root / "src" / "app" / "views.py").write_text("from .auth import login\n\n\ndef index():\n    return 'hi'\n")
    (root / "README.md").write_text("# Demo app\n\nA tiny app for tests.\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "auth.py").write_text("def handle_auth(): pass  # generated, ignored\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Initial commit")
    return root


class Recorder:
    """A sink that keeps every event, for assertions."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type, **match: Any) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind) and all(getattr(e, k) == v for k, v in match.items())]

    def warnings(self) -> list[str]:
        """The retry notes and warnings, for tests that count them, less a retry that tests/retries.py does not count."""
        return [
            e.text
            for e in self.events
            if (isinstance(e, Retrying) and retries.counted(e.text)) or isinstance(e, Notice) and e.level == "warning"
        ]

    def unreached_tries(self) -> int:
        """How many tries never reached the stand-in server (a loopback reset under load, tests/retries.py): a test
        that spends the whole budget counts ``len(server.requests)`` plus these as its tries."""
        return sum(1 for e in self.of(Retrying) if not retries.counted(e.text))

    def numbered_in_order(self, budget: int) -> bool:
        """Whether every retry note, a hidden one too, took the next number of one budget (tests/retries.py)."""
        return retries.numbered_in_order([(e.attempt, e.retries) for e in self.of(Retrying)], budget)


@pytest.fixture
async def make_session(server: FakeAnthropic, repo: Path) -> AsyncIterator[Callable[..., tuple[Session, Recorder]]]:
    """Build a Session on ``repo`` talking to the stand-in server through the real SDK."""
    made: list[Session] = []

    def build(root: Path | None = None, *, interactive: bool = False, **overrides: Any) -> tuple[Session, Recorder]:
        settings = Settings(
            **{"tool_search": "off", "notifications": "off", "lsp_discover": False, **overrides}
        )  # a test that wants a bell or a language server asks
        llm = LLM(
            model=settings.model,
            max_tokens=settings.max_tokens,
            retries=settings.api_retries,
            stall_timeout=settings.stall_timeout,
            retry_base_delay=0.01,
            retry_max_delay=0.05,
            first_reply_timeout=overrides.get("first_reply_timeout", float(PATIENT[1])),
            thinking=settings.thinking,
            thinking_budget=settings.max_thinking_tokens,
            credentials=Credentials(api_key=API_KEY, base_url=server.base_url),
        )
        recorder = Recorder()
        session = assemble(settings.engine(), Workspace.at(root or repo), recorder, interactive=interactive, llm=llm)
        made.append(session)
        return session, recorder

    yield build
    for session in made:  # the model client's connections too, on the loop they were made in: one left for
        await close(session)  # the collector would close them from a later test's loop (tests/model_clients.py)


@pytest.fixture
def resume(
    server: FakeAnthropic, repo: Path, closing: Callable[[Session], Session]
) -> Callable[..., tuple[Session, Recorder]]:
    """Open a saved session of ``repo`` the way front ends do (``resume`` an id, or ``continue_`` the latest), on the
    stand-in server with a model client of its own (``llm_options`` change it); closed at the test's end."""

    def open_(
        session_id: str | None = None, *, continue_: bool = False, **llm_options: Any
    ) -> tuple[Session, Recorder]:
        llm = LLM(
            **{
                "model": Settings().model,
                "max_tokens": 1000,
                "max_retries": 0,
                "credentials": Credentials(api_key=API_KEY, base_url=server.base_url),
                **llm_options,
            }
        )
        recorder = Recorder()
        session = open_session(
            Settings().engine(),
            Workspace.at(repo),
            recorder,
            interactive=False,
            llm=llm,
            resume=session_id,
            continue_=continue_,
        )
        return closing(session), recorder  # type: ignore[arg-type]  # open_session's SessionSurface is a Session

    return open_
