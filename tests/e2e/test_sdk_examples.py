"""The Agent SDK's own examples that use its extension points, run unchanged against agentcli.

They ship in the SDK's sdist (``examples/``): pip downloads it once into the user's cache folder
(``~/.cache/agentcli-tests/``, as the install test's wheelhouse), which later runs reuse without the network; each test unpacks its own copy, so
an example that works in its sdist folder (``setting_sources.py``) gets a fresh one. The examples pass
no ``cli_path``: the SDK (installed from its sdist, so without a bundled CLI) then runs ``claude`` from
PATH, here a two-line wrapper that runs agentcli. The endpoint is the stand-in server, through the
environment. Standard input is /dev/null: an example that asks with ``input()`` fails at once instead of
waiting for an answer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import __version__ as sdk_version

from agentcli import paths
from tests.conftest import user_cache
from tests.fakes.anthropic_server import message_text, offers_tool, text, tool_result_text, tool_results, tool_use

SDIST = f"claude_agent_sdk-{sdk_version}.tar.gz"
pytestmark = pytest.mark.timeout(600)  # each example starts agentcli several times: slow on a loaded machine


@pytest.fixture(scope="session")
def sdist() -> Path:
    """The SDK's sdist, from the cache folder, downloaded with pip into it the first time."""
    cache = user_cache() / "agentcli-tests"
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / SDIST
    if not archive.exists():
        with tempfile.TemporaryDirectory(dir=cache) as where:  # two workers may both fetch it: one rename wins
            got = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--no-binary",
                    ":all:",
                    "--retries",
                    "1",
                    "--timeout",
                    "20",
                    f"claude-agent-sdk=={sdk_version}",
                    "-d",
                    where,
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            fetched = Path(where) / SDIST
            if got.returncode != 0 or not fetched.exists():
                pytest.skip(
                    f"the claude-agent-sdk {sdk_version} sdist, whose examples these tests run, is not in "
                    f"{cache} and pip could not download it (offline?)"
                )
            os.replace(fetched, archive)
    return archive


@pytest.fixture
def sdk_dir(sdist: Path, tmp_path: Path) -> Path:
    """This test's own unpacked copy of the sdist."""
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data")
    return tmp_path / f"claude_agent_sdk-{sdk_version}"


def run_example(
    script: Path, cwd: Path, api_env: dict[str, str], tmp_path: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentcli "$@"\n')
    claude.chmod(0o755)
    user_config = paths.user_config_file()
    user_config.parent.mkdir(parents=True, exist_ok=True)  # a loaded machine imports the MCP SDK slowly
    user_config.write_text("mcp_startup_timeout = 120\n")
    env = {**os.environ, **api_env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "too old" not in proc.stderr, proc.stderr[-3000:]
    return proc


def prompt_has(words: str) -> Callable[[dict[str, Any]], bool]:
    """A request of the turn whose prompt (the latest user message that is no tool result) has ``words``."""

    def match(body: dict[str, Any]) -> bool:
        prompts = [m for m in body["messages"] if m["role"] == "user" and not tool_results({"messages": [m]})]
        return bool(prompts) and words in message_text(prompts[-1])

    return match


def result_of(server: Any, tool_use_id: str) -> dict[str, Any]:
    """The tool_result agentcli sent the model for one call."""
    return next(b for r in server.requests for b in tool_results(r) if b["tool_use_id"] == tool_use_id)


@pytest.fixture
def outside_tmp() -> Any:
    """A workspace whose path does not start with /tmp/ (see the tool_permission_callback test)."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here, and the example needs a workspace outside /tmp")
    where = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="agentcli-sdk-example-"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


def test_tool_permission_callback_example(sdk_dir, server, api_env, outside_tmp, tmp_path):
    # The example's callback lets a Write through without asking only when it redirects it to
    # ./safe_output/: a path under /tmp/ (every pytest tmp_path, and agentcli passes absolute paths, as
    # Claude Code does) falls through to its input() prompt. A workspace in /var/tmp takes the path the
    # example is about; with stdin at /dev/null a stray input() would fail the run, never hang it.
    server.when(
        prompt_has("List the files"),
        tool_use("glob", {"pattern": "*"}, id="toolu_ls"),
        tool_use("write_file", {"path": "hello.py", "content": "print('Hello, world!')\n"}, id="toolu_w"),
        tool_use("bash", {"command": "python3 safe_output/hello.py"}, id="toolu_run"),
        text("Listed, written to safe_output/hello.py, and run."),
    )
    proc = run_example(sdk_dir / "examples" / "tool_permission_callback.py", outside_tmp, api_env, tmp_path)
    out = proc.stdout
    assert "Tool Permission Request: Write" in out and "Redirecting write from" in out
    assert "./safe_output/hello.py" in out and "Allow this tool?" not in out
    assert "Allowing bash command: python3 safe_output/hello.py" in out and "Task completed!" in out
    assert (outside_tmp / "safe_output" / "hello.py").read_text() == "print('Hello, world!')\n"
    assert not (outside_tmp / "hello.py").exists()
    assert "Hello, world!" in tool_result_text(result_of(server, "toolu_run"))
    server.assert_no_rejections()


def test_hooks_example(sdk_dir, server, api_env, repo, tmp_path):
    server.when(
        prompt_has("./foo.sh --help"),
        tool_use("bash", {"command": "./foo.sh --help"}, id="toolu_foo"),
        text("The hook blocked foo.sh."),
    )
    server.when(
        prompt_has("Hello from hooks example!"),
        tool_use("bash", {"command": "echo 'Hello from hooks example!'"}, id="toolu_echo"),
        text("It printed the greeting."),
    )
    server.when(prompt_has("favorite color"), text("Hot pink."))
    server.when(
        prompt_has("ls /nonexistent_directory"),
        tool_use("bash", {"command": "ls /nonexistent_directory"}, id="toolu_ls"),
        text("No such directory."),
    )
    server.when(
        prompt_has("important_config.txt"),
        tool_use("write_file", {"path": "important_config.txt", "content": "test data"}, id="toolu_imp"),
        text("That write was blocked."),
    )
    server.when(
        prompt_has("regular_file.txt"),
        tool_use("write_file", {"path": "regular_file.txt", "content": "test data"}, id="toolu_reg"),
        text("Written."),
    )
    server.when(
        prompt_has("CRITICAL ERROR"),
        tool_use("bash", {"command": "echo 'CRITICAL ERROR: system failure'"}, id="toolu_crit"),
        text("never: the hook stopped the turn"),
    )
    proc = run_example(sdk_dir / "examples" / "hooks.py", repo, api_env, tmp_path, "all")
    out = proc.stdout
    # PreToolUse: foo.sh refused with the hook's reason, echo ran.
    assert "Command contains invalid pattern: foo.sh" in tool_result_text(result_of(server, "toolu_foo"))
    assert "Hello from hooks example!" in tool_result_text(result_of(server, "toolu_echo"))
    # UserPromptSubmit: the hook's context reached the model.
    colour = next(r for r in server.requests if prompt_has("favorite color")(r))
    assert "My favorite color is hot pink" in str(colour["messages"])
    assert "Claude: Hot pink." in out
    # PostToolUse: the failed ls brings the hook's context into the next request.
    after_ls = next(r for r in server.requests if any(b["tool_use_id"] == "toolu_ls" for b in tool_results(r)))
    assert "The command encountered an error" in str(after_ls["messages"])
    # DecisionFields: the hook denies the important file and allows the other, in a mode that would refuse both.
    assert "Security policy blocks writes to important files" in tool_result_text(result_of(server, "toolu_imp"))
    assert not (repo / "important_config.txt").exists()
    assert (repo / "regular_file.txt").read_text() == "test data"
    # ContinueControl: continue_=False stops the turn after the tool; the model is not called again.
    assert not any(any(b["tool_use_id"] == "toolu_crit" for b in tool_results(r)) for r in server.requests)
    assert "never: the hook stopped the turn" not in out
    assert "agentcli: A hook ended the turn: Critical error detected in tool output" in proc.stderr
    assert out.count("Result ended") == 7
    server.assert_no_rejections()


def test_agents_example(sdk_dir, server, api_env, tmp_path):
    def child_of(words: str) -> Callable[[dict[str, Any]], bool]:
        return lambda body: not offers_tool(body, "task") and words in str(body.get("system"))

    for agent, prompt, job, answer in (
        (
            "code-reviewer",
            "review the code",
            tool_use("read_file", {"path": "src/claude_agent_sdk/types.py"}),
            "types.py is well typed.",
        ),
        (
            "doc-writer",
            "explain what AgentDefinition",
            tool_use("grep", {"pattern": "class AgentDefinition"}),
            "AgentDefinition describes a subagent.",
        ),
        (
            "analyzer",
            "find all Python files",
            tool_use("glob", {"pattern": "examples/*.py"}),
            "The examples folder has the examples.",
        ),
    ):
        server.when(
            lambda body, p=prompt: offers_tool(body, "task") and prompt_has(p)(body),
            tool_use("task", {"description": f"Ask {agent}", "prompt": f"Please {prompt}.", "subagent_type": agent}),
            text(f"The {agent} says: {answer}"),
        )
        server.when(
            child_of(
                {
                    "code-reviewer": "You are a code reviewer",
                    "doc-writer": "documentation expert",
                    "analyzer": "You are a code analyzer",
                }[agent]
            ),
            job,
            text(answer),
        )
    proc = run_example(sdk_dir / "examples" / "agents.py", sdk_dir, api_env, tmp_path)
    out = proc.stdout
    for agent, answer in (
        ("code-reviewer", "types.py is well typed."),
        ("doc-writer", "AgentDefinition describes a subagent."),
        ("analyzer", "The examples folder has the examples."),
    ):
        assert f"Claude: The {agent} says: {answer}" in out
    assert out.count("Cost: $") == 3
    children = [r for r in server.requests if not offers_tool(r, "task")]
    reviewer = next(r for r in children if "You are a code reviewer" in str(r.get("system")))
    assert sorted(t["name"] for t in reviewer["tools"]) == ["grep", "read_file"]
    read = next(b for r in children for b in tool_results(r))
    assert "class AgentDefinition" in tool_result_text(read)  # the child read the sdist's types.py
    server.assert_no_rejections()


def test_setting_sources_example(sdk_dir, server, api_env, tmp_path):
    # The SDK's own repository has .claude/commands/commit.md, which the example looks for; its sdist does
    # not, so this copy gets one. A command in the user's folder shows the user source loading too.
    (sdk_dir / ".claude" / "commands").mkdir(parents=True)
    (sdk_dir / ".claude" / "commands" / "commit.md").write_text("Commit the staged changes.\n")
    (paths.config_home() / "commands").mkdir(parents=True)
    (paths.config_home() / "commands" / "standup.md").write_text("Write my standup.\n")
    server.responder = lambda body: text("4")  # each client stops reading at its init message
    proc = run_example(sdk_dir / "examples" / "setting_sources.py", tmp_path, api_env, tmp_path, "all")
    out = proc.stdout
    assert "❌" not in out and out.count("✓") == 4, out
    lines = [line for line in out.splitlines() if line.startswith("Available slash commands:")]
    assert len(lines) == 4
    default, none, user, both = lines
    assert "'commit'" in default and "'standup'" in default
    assert none == "Available slash commands: []"
    assert "'standup'" in user and "'commit'" not in user
    assert "'commit'" in both and "'standup'" in both


def test_max_budget_usd_example(sdk_dir, server, api_env, repo, tmp_path):
    server.when(prompt_has("What is 2 + 2?"), text("4"), text("4"))
    server.when(
        prompt_has("README.md"),
        *[tool_use("read_file", {"path": "README.md"}) for _ in range(3)],
        text("never: the budget is spent"),
    )
    proc = run_example(sdk_dir / "examples" / "max_budget_usd.py", repo, api_env, tmp_path)
    out = proc.stdout
    assert out.count("Claude: 4") == 2 and out.count("Status: success") == 2
    assert "Status: error_max_budget_usd" in out and "Budget limit exceeded!" in out
    assert "never: the budget is spent" not in out
    server.assert_no_rejections()


@pytest.mark.timeout(900)  # six clients, each starting agentcli and its MCP server: slow on a loaded machine
def test_mcp_calculator_example(sdk_dir, server, api_env, repo, tmp_path):
    def asks(words: str) -> Callable[[dict[str, Any]], bool]:
        return lambda body: any(words in message_text(m) for m in body["messages"][:1])

    server.when(asks("List your tools"), text("I have add, subtract, multiply, divide, sqrt and power."))
    server.when(asks("15 + 27"), tool_use("mcp__calc__add", {"a": 15, "b": 27}), text("15 + 27 = 42"))
    server.when(asks("divided by 7"), tool_use("mcp__calc__divide", {"a": 100, "b": 7}), text("About 14.29"))
    server.when(asks("square root"), tool_use("mcp__calc__sqrt", {"n": 144}), text("12"))
    server.when(asks("power of 8"), tool_use("mcp__calc__power", {"base": 2, "exponent": 8}), text("256"))
    server.when(asks("(12 + 8)"), text("50"))
    run_example(sdk_dir / "examples" / "mcp_calculator.py", repo, api_env, tmp_path)
    outputs = [b for r in server.requests for b in tool_results(r)]
    assert len(outputs) == 4 and not any(b.get("is_error") for b in outputs)
    assert "42" in str(outputs[0]["content"]) and "256" in str(outputs[3]["content"])
    server.assert_no_rejections()
