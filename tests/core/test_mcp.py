"""MCP servers in a session: real servers written with the mcp SDK (tests/fakes/mcp_server.py),
started for real over stdio and streamable HTTP, and the stand-in API driving the model's calls."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.core.events import Notice
from agentcli.core.mcp.config import parse
from agentcli.core.mcp.remote import _alive
from agentcli.core.model.llm import LLMError
from agentcli.core.system import processes
from tests import waiting
from tests.fakes.anthropic_server import offers_tool, text, tool_names, tool_results, tool_use

ROOT = Path(__file__).resolve().parents[2]  # where `python -m tests.fakes.mcp_server` is found


def stdio(*extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server", *extra],
        "env": {"PYTHONPATH": str(ROOT), **(env or {})},
    }
    return spec


def servers(**specs: dict[str, Any]) -> dict[str, Any]:
    return parse({"mcpServers": specs}, "test")


def results(server: Any) -> list[dict[str, Any]]:
    """Every tool_result the model was sent, in order."""
    found: list[dict[str, Any]] = []
    for body in server.requests:
        for block in tool_results(body):
            if block not in found:
                found.append(block)
    return found


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


async def run(session: Any, prompt: str = "go") -> Any:
    try:
        return await session.send(prompt)
    finally:
        await session.aclose()


@pytest.fixture
def fake_server_settings() -> dict[str, Any]:
    return {"mcp_startup_timeout": 60.0}


async def test_a_stdio_servers_tools_are_offered_with_its_schema_and_called(make_session, server, fake_server_settings):
    server.when(
        lambda b: offers_tool(b, "mcp__fake__echo"),
        tool_use("mcp__fake__echo", {"text": "hi"}),
        text("The server said hi."),
    )
    session, events = make_session(
        mcp_servers=servers(fake=stdio()), permissions={"allow": ["mcp__fake"]}, **fake_server_settings
    )
    outcome = await run(session)
    assert outcome.text == "The server said hi."
    tools = {tool["name"]: tool for tool in server.requests[0]["tools"]}
    assert tools["mcp__fake__echo"]["description"] == "Echo the text back."
    assert tools["mcp__fake__add"]["input_schema"]["required"] == ["a", "b"]
    assert {"read_file", "bash", "task"} <= set(tools)
    [block] = results(server)
    assert block["is_error"] is False and result_text(block) == "echo: hi"


async def test_images_and_resource_links_become_blocks(make_session, server, fake_server_settings):
    server.when(lambda b: offers_tool(b, "mcp__fake__picture"), tool_use("mcp__fake__picture", {}), text("A picture."))
    session, _ = make_session(
        mcp_servers=servers(fake=stdio()), permission_mode="bypassPermissions", **fake_server_settings
    )
    await run(session)
    [block] = results(server)
    kinds = [b["type"] for b in block["content"]]
    assert kinds == ["text", "image"]
    assert block["content"][1]["source"]["media_type"] == "image/png"
    shown = block["content"][0]["text"]
    assert "a one-pixel picture" in shown and "[image: image/png" in shown
    assert "[resource link: notes <file:///notes.txt> (text/plain)]" in shown


async def test_mcp_tools_ask_by_default_and_an_allow_rule_names_one_tool(make_session, server, fake_server_settings):
    server.when(
        lambda b: offers_tool(b, "mcp__fake__echo"),
        tool_use("mcp__fake__add", {"a": 1, "b": 2}),
        tool_use("mcp__fake__echo", {"text": "x"}),
        text("done"),
    )
    session, _ = make_session(
        mcp_servers=servers(fake=stdio()), permissions={"allow": ["mcp__fake__echo"]}, **fake_server_settings
    )
    await run(session)
    add, echo = results(server)
    assert add["is_error"] and "mcp__fake__add needs approval" in result_text(add)
    assert "`mcp__fake__add`" in result_text(add)
    assert not echo["is_error"] and result_text(echo) == "echo: x"


async def test_arguments_are_checked_against_the_servers_schema(make_session, server, fake_server_settings):
    server.when(
        lambda b: offers_tool(b, "mcp__fake__add"),
        tool_use("mcp__fake__add", {"a": "one", "b": 2}),
        tool_use("mcp__fake__add", {"a": 1}),
        text("done"),
    )
    session, _ = make_session(
        mcp_servers=servers(fake=stdio()), permission_mode="bypassPermissions", **fake_server_settings
    )
    await run(session)
    wrong_type, missing = results(server)
    assert wrong_type["is_error"] and "'a' must be an integer, not a string" in result_text(wrong_type)
    assert missing["is_error"] and "missing required argument 'b'" in result_text(missing)


async def test_a_tool_error_from_the_server_is_an_error_result(make_session, server, fake_server_settings):
    server.when(lambda b: offers_tool(b, "mcp__fake__fail"), tool_use("mcp__fake__fail", {}), text("done"))
    session, _ = make_session(
        mcp_servers=servers(fake=stdio()), permission_mode="bypassPermissions", **fake_server_settings
    )
    await run(session)
    [block] = results(server)
    assert block["is_error"] and "the tool failed on purpose" in result_text(block)


async def test_a_server_that_crashes_mid_call_is_reported_and_the_session_goes_on(
    make_session, server, fake_server_settings
):
    server.when(
        lambda b: offers_tool(b, "mcp__fake__crash"),
        tool_use("mcp__fake__crash", {}),
        tool_use("mcp__fake__echo", {"text": "again"}),
        text("The server is gone; carrying on."),
    )
    session, events = make_session(
        mcp_servers=servers(fake=stdio()), permission_mode="bypassPermissions", **fake_server_settings
    )
    outcome = await run(session)
    assert outcome.text == "The server is gone; carrying on."
    crash, echo = results(server)
    assert crash["is_error"] and "exited during the call to crash" in result_text(crash)
    assert "crashing on purpose" in result_text(crash)  # its last words on stderr
    assert echo["is_error"] and "The MCP server 'fake' has exited" in result_text(echo)
    assert session.mcp.servers["fake"].state == "exited"
    assert any("MCP server 'fake' stopped working" in e.text for e in events.of(Notice))


async def test_a_call_the_server_never_answers_times_out_with_an_error(make_session, server):
    server.when(lambda b: offers_tool(b, "mcp__fake__hang"), tool_use("mcp__fake__hang", {}), text("It hung."))
    session, _ = make_session(
        mcp_servers=servers(fake=stdio()),
        permission_mode="bypassPermissions",
        mcp_startup_timeout=60.0,
        mcp_tool_timeout=1.0,
    )
    await run(session)
    [block] = results(server)
    assert block["is_error"] and "did not answer the call to hang within 1 s" in result_text(block)


async def test_a_server_that_never_answers_at_start_is_reported_and_its_tools_left_out(make_session, server, tmp_path):
    server.script(text("Worked without it."))
    pid_file = tmp_path / "mute.pid"
    session, events = make_session(
        mcp_servers=servers(mute=stdio("--mute", "--touch", str(pid_file)), fake=stdio()),
        permission_mode="bypassPermissions",
        mcp_startup_timeout=20.0,
    )
    outcome = await run(session)
    assert outcome.text == "Worked without it."
    names = tool_names(server.requests[0])
    assert "mcp__fake__echo" in names and not any(name.startswith("mcp__mute__") for name in names)
    mute = session.mcp.servers["mute"]
    assert mute.state == "failed" and "did not finish starting within 20 s" in mute.error
    assert any("MCP server 'mute' failed to start" in e.text for e in events.of(Notice))
    pid = int(pid_file.read_text())
    waiting.wait_until(lambda: not _alive(pid), "the server that never answered being stopped")


async def test_a_server_that_cannot_start_is_reported(make_session, server):
    server.script(text("Fine."))
    session, events = make_session(
        mcp_servers=servers(gone={"command": "/nonexistent/mcp-server"}), mcp_startup_timeout=60.0
    )
    assert (await run(session)).text == "Fine."
    gone = session.mcp.servers["gone"]
    assert gone.state == "failed" and "/nonexistent/mcp-server" in gone.error
    assert any("MCP server 'gone' failed to start" in e.text for e in events.of(Notice))


async def test_servers_get_the_scrubbed_environment_plus_their_own_env(
    make_session, server, monkeypatch, fake_server_settings
):
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-very-secret")
    server.when(
        lambda b: offers_tool(b, "mcp__fake__env"),
        tool_use("mcp__fake__env", {"name": "DEPLOY_TOKEN"}),
        tool_use("mcp__fake__env", {"name": "GREETING"}),
        tool_use("mcp__fake__env", {"name": "HOME"}),
        text("done"),
    )
    session, _ = make_session(
        mcp_servers=servers(fake=stdio(env={"GREETING": "hello"})),
        permission_mode="bypassPermissions",
        **fake_server_settings,
    )
    await run(session)
    token, greeting, home = (result_text(b) for b in results(server))
    assert token == "(unset)" and greeting == "hello" and home != "(unset)"


async def test_servers_are_stopped_with_the_session(make_session, server, tmp_path, fake_server_settings):
    server.script(text("Hello."))
    pid_file = tmp_path / "fake.pid"
    session, _ = make_session(mcp_servers=servers(fake=stdio("--touch", str(pid_file))), **fake_server_settings)
    await run(session)
    pid = int(pid_file.read_text())
    waiting.wait_until(lambda: not _alive(pid), "the MCP server stopping with the session")
    assert session.mcp.servers["fake"].marker not in processes.active


async def test_a_subagent_sees_only_the_mcp_tools_its_type_allows(make_session, server, repo, fake_server_settings):
    agents = repo / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "echoer.md").write_text(
        "---\nname: echoer\ndescription: Echoes.\ntools: mcp__fake__echo\n---\nEcho what you are told.\n"
    )
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Echo a word", "prompt": "Echo hi.", "subagent_type": "echoer"}),
        text("The child is done."),
    )
    server.when(
        lambda b: not offers_tool(b, "task"),
        tool_use("mcp__fake__add", {"a": 1, "b": 2}),
        tool_use("mcp__fake__echo", {"text": "hi"}),
        text("Echoed."),
    )
    session, _ = make_session(
        mcp_servers=servers(fake=stdio()), permission_mode="bypassPermissions", **fake_server_settings
    )
    await run(session)
    child = [body for body in server.requests if not offers_tool(body, "task")]
    assert child and all(tool_names(body) == ["mcp__fake__echo"] for body in child), [tool_names(b) for b in child]
    add, echo = [b for b in results(server) if "mcp" in result_text(b) or "echo" in result_text(b)][:2]
    assert add["is_error"] and "There is no tool named 'mcp__fake__add'" in result_text(add)
    assert result_text(echo) == "echo: hi"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_server(tmp_path):
    port = free_port()
    log = (tmp_path / "http-server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.mcp_server", "--http", str(port)], cwd=ROOT, stdout=log, stderr=log
    )

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    try:
        waiting.wait_until(
            listening, "the HTTP MCP server listening", detail=lambda: (tmp_path / "http-server.log").read_text()
        )
        yield f"http://127.0.0.1:{port}/mcp", proc, tmp_path / "http-server.log"
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
        log.close()


async def test_a_streamable_http_server_works_the_same_way(make_session, server, http_server, fake_server_settings):
    server.when(lambda b: offers_tool(b, "mcp__web__add"), tool_use("mcp__web__add", {"a": 2, "b": 3}), text("Five."))
    session, events = make_session(
        mcp_servers=servers(web={"type": "http", "url": http_server[0], "headers": {"X-Team": "blue"}}),
        permissions={"allow": ["mcp__web"]},
        **fake_server_settings,
    )
    try:
        outcome = await run(session)
    except LLMError:  # failed once under load: the first request did not offer the server's tools; say why
        pytest.fail(
            f"the server's tools were not offered; notices: {[n.text for n in events.of(Notice)]}, "
            f"server log: {(http_server[2]).read_text()[-2000:]!r}"
        )
    assert outcome.text == "Five."
    [block] = results(server)
    assert not block["is_error"] and result_text(block) == "5"


async def test_an_http_server_that_goes_away_gives_error_results(
    make_session, server, http_server, fake_server_settings
):
    url, proc, _ = http_server
    server.when(
        lambda b: offers_tool(b, "mcp__web__echo"),
        tool_use("mcp__web__echo", {"text": "a"}),
        tool_use("mcp__web__echo", {"text": "b"}),
        text("Carried on."),
    )
    session, _ = make_session(
        mcp_servers=servers(web={"type": "http", "url": url}),
        permission_mode="bypassPermissions",
        **fake_server_settings,
    )
    await session.mcp.wait_started()
    proc.terminate()
    proc.wait(timeout=30)
    assert (await run(session)).text == "Carried on."
    first, second = results(server)
    # The call finds the connection closed, or the server's subscriptions/listen stream found it first.
    assert first["is_error"] and any(
        words in result_text(first)
        for words in ("The MCP server 'web' closed the connection during the call", "The MCP server 'web' has exited")
    )
    assert second["is_error"] and "The MCP server 'web' has exited" in result_text(second)
