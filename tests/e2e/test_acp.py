"""`agentcli acp` driven by the ACP SDK's own client, over stdio, against the stand-in API and a real git repo."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import schema as s

from tests.fakes.anthropic_server import offers_tool, text, tool_use
from agentcli.ui.acp.children import UPDATE_FIELDS
from tests.waiting import until


class Client:
    """An editor, as the SDK's Client: records every update and answers permission requests from a list."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.questions: list[s.RequestPermissionRequest] = []
        self.answers = list(answers or [])
        self.raw: list[dict[str, Any]] = []
        self.invalid: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: s.ToolCallUpdate,
                                 options: list[s.PermissionOption], **kwargs: Any) -> s.RequestPermissionResponse:
        self.questions.append(s.RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options))
        if not self.answers:
            return s.RequestPermissionResponse(outcome=s.DeniedOutcome(outcome="cancelled"))
        return s.RequestPermissionResponse(outcome=s.AllowedOutcome(outcome="selected", option_id=self.answers.pop(0)))

    def observe(self, event: Any) -> None:
        """Every raw message from the agent, checked against the SDK's own models (acp.schema); the one update
        the SDK does not model yet, subagent_update, against the fields of the protocol's subagent spec."""
        message = event.message
        if event.direction.value != "incoming":
            return
        self.raw.append(message)
        try:
            if message.get("method") == "session/update":
                update = message["params"]["update"]
                content = update.get("content")
                if update.get("sessionUpdate") == "subagent_update" or (
                        isinstance(content, list) and any(c.get("type") == "session" for c in content)):
                    assert set(message["params"]["update"]) <= set(UPDATE_FIELDS) | {"toolCallId", "content"}
                else:
                    s.SessionNotification.model_validate(message["params"])
            elif message.get("method") == "session/request_permission":
                s.RequestPermissionRequest.model_validate(message["params"])
            elif "error" in message:
                assert isinstance(message["error"]["code"], int) and message["error"]["message"]
        except Exception as exc:  # the SDK's client drops an invalid update with a log line: fail instead
            self.invalid.append(f"{message}: {exc}")

    def of(self, kind: type, session_id: str | None = None) -> list[Any]:
        return [u for sid, u in self.updates if isinstance(u, kind) and (session_id is None or sid == session_id)]

    def said(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.of(s.AgentMessageChunk, session_id))


def agent_env(api_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(api_env)
    return env


async def start(client: Client, repo: Path, api_env: dict[str, str], stderr: Any, *args: str):
    return acp.spawn_agent_process(client, sys.executable, "-m", "agentcli", "acp", *args, cwd=repo,
                                   env=agent_env(api_env), transport_kwargs={"stderr": stderr.fileno()},
                                   observers=[client.observe])


@pytest.fixture
def patient_mcp(isolated_home: Path) -> None:
    """MCP servers may take long to start on a loaded machine: the user's config gives them two minutes."""
    (isolated_home / "config").mkdir(parents=True, exist_ok=True)
    (isolated_home / "config" / "config.toml").write_text("mcp_startup_timeout = 120\n")


@pytest.fixture
def stderr(tmp_path: Path):
    with (tmp_path / "agent-stderr.txt").open("w+") as handle:
        yield handle


async def test_a_prompt_streams_the_answer_and_its_tool_calls(server, api_env, repo, stderr):
    server.script(tool_use("read_file", {"path": "src/app/auth.py"}), text("login calls handle_auth."))
    client = Client()
    async with await start(client, repo, api_env, stderr) as (conn, _process):
        init = await conn.initialize(protocol_version=1, client_capabilities=s.ClientCapabilities(),
                                     client_info=s.Implementation(name="zed", version="0.200.0"))
        assert init.protocol_version == 1 and init.agent_info.name == "agentcli"
        assert init.agent_capabilities.load_session is True
        assert init.agent_capabilities.mcp_capabilities.http is True
        assert init.agent_capabilities.session_capabilities.list is not None
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        assert new.modes.current_mode_id == "default"
        assert {m.id for m in new.modes.available_modes} == {"default", "acceptEdits", "plan", "bypassPermissions"}
        done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("What does login call?")])
    assert done.stop_reason == "end_turn"
    assert client.said(new.session_id) == "login calls handle_auth."
    [start_call] = client.of(s.ToolCallStart, new.session_id)
    assert start_call.kind == "read" and "src/app/auth.py" in start_call.title
    assert start_call.locations[0].path == str(repo.resolve() / "src/app/auth.py")
    [finished] = client.of(s.ToolCallProgress, new.session_id)
    assert finished.tool_call_id == start_call.tool_call_id and finished.status == "completed"
    assert "handle_auth" in finished.content[0].content.text
    assert client.of(s.UsageUpdate, new.session_id)[-1].used > 0
    assert client.of(s.AvailableCommandsUpdate, new.session_id)
    assert client.invalid == [] and client.raw


async def test_an_edit_shows_its_diff_and_asks_and_a_no_keeps_the_file(server, api_env, repo, stderr):
    server.script(tool_use("read_file", {"path": "README.md"}),
                  tool_use("edit_file", {"path": "README.md", "old_string": "A tiny app", "new_string": "A small app"}),
                  text("I left it."))
    client = Client(answers=["reject_once"])
    async with await start(client, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Reword the README")])
    assert done.stop_reason == "end_turn"
    call = client.of(s.ToolCallStart)[-1]
    assert call.kind == "edit"
    [diff] = call.content
    assert (diff.path, diff.old_text, diff.new_text) == (str(repo.resolve() / "README.md"), "A tiny app", "A small app")
    assert len(client.questions) == 1
    [question] = client.questions
    assert question.tool_call.tool_call_id == call.tool_call_id
    assert [o.kind for o in question.options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert "A tiny app" in (repo / "README.md").read_text()
    assert client.invalid == [] and client.raw
    assert client.of(s.ToolCallProgress)[-1].status == "failed"


async def test_allow_always_saves_the_rule_agentcli_would_save(server, api_env, repo, stderr, isolated_home):
    server.script(tool_use("bash", {"command": "git status --short"}), text("Clean."))
    client = Client(answers=["allow_always"])
    async with await start(client, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Is the tree clean?")])
    assert done.stop_reason == "end_turn"
    [question] = client.questions
    always = next(o for o in question.options if o.kind == "allow_always")
    rule = always.name.removeprefix("Always allow ")
    assert rule.startswith("bash(git status")
    saved = list((isolated_home / "config" / "workspaces").glob("*.toml"))
    stderr.seek(0)
    assert saved and any(rule in p.read_text() for p in saved), stderr.read()
    assert client.of(s.ToolCallProgress)[-1].status == "completed"


async def test_reject_always_denies_the_same_call_again_without_asking(server, api_env, repo, stderr):
    server.script(tool_use("bash", {"command": "git status --short"}), tool_use("bash", {"command": "git status --short"}),
                  text("Not allowed."))
    client = Client(answers=["reject_always"])
    async with await start(client, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Is the tree clean?")])
    assert len(client.questions) == 1
    results = [u for u in client.of(s.ToolCallProgress) if u.status == "failed"]
    assert len(results) == 2 and "denied by the rule" in results[1].content[0].content.text


async def test_cancel_ends_the_prompt_as_cancelled(server, api_env, repo, stderr):
    import threading

    gate = threading.Event()
    server.script(text("A long answer", gate=gate))
    client = Client()
    try:
        async with await start(client, repo, api_env, stderr) as (conn, _process):
            await conn.initialize(protocol_version=1)
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            prompt = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Go")]))
            await until(lambda: server.requests, "the model call")
            with pytest.raises(acp.RequestError, match="already running"):
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Again")])
            await conn.cancel(session_id=new.session_id)
            done = await prompt
            assert done.stop_reason == "cancelled"
            with pytest.raises(acp.RequestError, match="no session"):
                await conn.prompt(session_id="nope", prompt=[acp.text_block("Hi")])
    finally:
        gate.set()


async def test_modes_switch_and_say_so(server, api_env, repo, stderr):
    server.script(tool_use("read_file", {"path": "README.md"}),
                  tool_use("edit_file", {"path": "README.md", "old_string": "A tiny app", "new_string": "A small app"}),
                  text("Done."))
    client = Client()
    async with await start(client, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.set_session_mode(session_id=new.session_id, mode_id="acceptEdits")
        done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Reword the README")])
        with pytest.raises(acp.RequestError):
            await conn.set_session_mode(session_id=new.session_id, mode_id="yolo")
    assert done.stop_reason == "end_turn"
    assert [u.current_mode_id for u in client.of(s.CurrentModeUpdate)] == ["acceptEdits"]
    assert client.questions == [] and "A small app" in (repo / "README.md").read_text()


def delegation(server) -> None:
    server.when(lambda b: offers_tool(b, "task"),
                tool_use("task", {"description": "Find auth handler", "prompt": "Find where handle_auth is defined."}),
                text("Auth is handled in `src/app/auth.py:9`."))
    server.when(lambda b: not offers_tool(b, "task"), tool_use("grep", {"pattern": "def handle_auth"}),
                text("handle_auth is defined at src/app/auth.py:9."))


async def test_subagents_are_child_sessions_for_a_client_that_opts_in(server, api_env, repo, stderr):
    delegation(server)
    client = Client()
    raw: list[dict[str, Any]] = []

    def observe(event: Any) -> None:
        if event.direction.value == "incoming" and event.message.get("method") == "session/update":
            raw.append(event.message["params"])

    async with acp.spawn_agent_process(client, sys.executable, "-m", "agentcli", "acp", cwd=repo,
                                       env=agent_env(api_env), transport_kwargs={"stderr": stderr.fileno()},
                                       observers=[observe, client.observe]) as (conn, _process):
        # The SDK's ClientCapabilities predates `subagents`: the client sends it through the raw connection.
        await conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}})
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Where is auth handled?")])
    assert done.stop_reason == "end_turn"
    child = f"{new.session_id}:sa-1"
    announced = [p for p in raw if p["update"].get("sessionUpdate") == "subagent_update"]
    assert [p["sessionId"] for p in announced] == [new.session_id, new.session_id]
    assert [p["update"]["sessionId"] for p in announced] == [child, child]
    assert announced[0]["update"]["title"] == "Find auth handler"
    assert announced[0]["update"]["capabilities"] == {"cancel": {}}
    assert announced[0]["update"]["state"]["state"] == "running"
    assert announced[1]["update"]["state"] == {"state": "idle", "stopReason": "end_turn",
                                               "_meta": {"agentcli": {"status": "done", "turns": 2}}}
    first_child_update = next(i for i, p in enumerate(raw) if p["sessionId"] == child)
    assert raw.index(announced[0]) < first_child_update  # announced before any of its own traffic
    [grep] = client.of(s.ToolCallStart, child)
    assert grep.kind == "search" and "def handle_auth" in grep.title
    assert "handle_auth is defined" in client.said(child)
    [task] = client.of(s.ToolCallStart, new.session_id)
    assert task.title.startswith("task")
    link = [p["update"] for p in raw if p["update"].get("content") == [{"type": "session", "sessionId": child}]]
    assert link and link[0]["toolCallId"] == task.tool_call_id
    assert client.said(new.session_id) == "Auth is handled in `src/app/auth.py:9`."
    assert client.invalid == [] and client.raw


async def test_a_client_that_did_not_opt_in_sees_the_child_folded_into_the_task_call(server, api_env, repo, stderr):
    delegation(server)
    client = Client()
    async with await start(client, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Where is auth handled?")])
    assert {sid for sid, _ in client.updates} == {new.session_id}
    [task] = client.of(s.ToolCallStart)
    finished = [u for u in client.of(s.ToolCallProgress) if u.tool_call_id == task.tool_call_id]
    assert "handle_auth is defined at src/app/auth.py:9." in finished[-1].content[0].content.text


async def test_a_finished_session_loads_and_lists(server, api_env, repo, stderr):
    server.script(text("Hello there."))
    first = Client()
    async with await start(first, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Say hello")])
    later = Client()
    async with await start(later, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        listed = await conn.list_sessions(cwd=str(repo))
        assert [(x.session_id, x.title) for x in listed.sessions] == [(new.session_id, "Say hello")]
        await conn.load_session(cwd=str(repo), session_id=new.session_id, mcp_servers=[])
        assert [u.content.text for u in later.of(s.UserMessageChunk, new.session_id)] == ["Say hello"]
        assert later.said(new.session_id) == "Hello there."
        with pytest.raises(acp.RequestError):
            await conn.load_session(cwd=str(repo), session_id="no-such-session", mcp_servers=[])


ROOT = Path(__file__).resolve().parents[2]


async def test_a_child_cancelled_on_its_own_still_reports_to_its_parent(server, api_env, repo, stderr):
    import threading

    gate = threading.Event()
    server.when(lambda b: offers_tool(b, "task"),
                tool_use("task", {"description": "Find auth handler", "prompt": "Find where handle_auth is defined."}),
                text("The subagent found part of it."))
    server.when(lambda b: not offers_tool(b, "task"), tool_use("grep", {"pattern": "def handle_auth"}),
                text("never sent", gate=gate), text("Partial: handle_auth is in src/app/auth.py."))
    client = Client()
    raw: list[dict[str, Any]] = []

    def observe(event: Any) -> None:
        if event.direction.value == "incoming" and event.message.get("method") == "session/update":
            raw.append(event.message["params"])

    try:
        async with acp.spawn_agent_process(client, sys.executable, "-m", "agentcli", "acp", cwd=repo,
                                           env=agent_env(api_env), transport_kwargs={"stderr": stderr.fileno()},
                                           observers=[observe, client.observe]) as (conn, _process):
            await conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}})
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            prompt = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Find auth")]))
            await until(lambda: len(server.requests) >= 3, "the child's second model call")
            await conn.cancel(session_id=f"{new.session_id}:sa-1")
            done = await prompt
    finally:
        gate.set()
    assert done.stop_reason == "end_turn"  # the parent went on: only the child was cancelled
    [task] = client.of(s.ToolCallStart, new.session_id)
    result = [u for u in client.of(s.ToolCallProgress, new.session_id) if u.tool_call_id == task.tool_call_id][-1]
    assert "Partial: handle_auth is in src/app/auth.py." in result.content[0].content.text
    ended = [p["update"] for p in raw if p["update"].get("sessionUpdate") == "subagent_update"][-1]
    assert ended["state"]["stopReason"] == "cancelled" and ended["state"]["_meta"]["agentcli"]["status"] == "cancelled"
    assert client.said(new.session_id) == "The subagent found part of it."
    assert client.invalid == [] and client.raw


async def test_thinking_streams_as_thought_chunks(server, api_env, repo, stderr):
    from tests.fakes.anthropic_server import reply, thinking_block

    server.script(reply(thinking_block("The user wants a greeting."), "Hello."))
    client = Client()
    async with await start(client, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Greet me")])
    assert "".join(u.content.text for u in client.of(s.AgentThoughtChunk)) == "The user wants a greeting."
    assert client.said(new.session_id) == "Hello."


async def test_mcp_servers_from_session_new_start_and_their_tools_run(server, api_env, repo, stderr, patient_mcp):
    server.when(lambda b: offers_tool(b, "mcp__mine__add"), tool_use("mcp__mine__add", {"a": 20, "b": 22}),
                text("It is 42."))
    client = Client(answers=["allow_once"])
    mine = s.McpServerStdio(name="mine", command=sys.executable, args=["-m", "tests.fakes.mcp_server"],
                            env=[s.EnvVariable(name="PYTHONPATH", value=str(ROOT))])
    async with await start(client, repo, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(repo), mcp_servers=[mine])
        done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Add 20 and 22")])
    assert done.stop_reason == "end_turn" and client.said(new.session_id) == "It is 42."
    [call] = client.of(s.ToolCallStart)
    assert call.title.startswith("mcp__mine__add")
    assert "42" in client.of(s.ToolCallProgress)[-1].content[0].content.text


@pytest.mark.parametrize("answer", ["trust", "distrust"])
async def test_the_trust_question_is_asked_before_the_workspaces_settings_act(server, api_env, tmp_path, stderr,
                                                                           patient_mcp, answer):
    from tests.conftest import stranger_clone
    from tests.fakes.anthropic_server import tool_names

    evidence = tmp_path / "clone" / "pwned.pid"
    spec = {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server", "--touch", str(evidence)],
            "env": {"PYTHONPATH": str(ROOT)}}
    import json

    clone = stranger_clone(tmp_path, {".mcp.json": json.dumps({"mcpServers": {"helper": spec}}), "README.md": "# Hi\n"})
    server.script(text("Hi."))
    client = Client(answers=[answer])
    async with await start(client, clone, api_env, stderr) as (conn, _process):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(clone), mcp_servers=[])
        assert client.questions == []  # asked at the first prompt, once the client knows the session
        await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Hello")])
    [question] = client.questions
    assert question.session_id == new.session_id and "Trust" in question.tool_call.title
    assert "helper" in question.tool_call.content[0].content.text
    assert [o.kind for o in question.options] == ["allow_always", "reject_always"]
    offered = any(name.startswith("mcp__helper__") for name in tool_names(server.requests[0]))
    assert offered is (answer == "trust") and evidence.exists() is (answer == "trust")


def test_bad_messages_get_json_rpc_errors_and_stdout_holds_only_protocol(api_env, repo):
    import json
    import subprocess

    lines = ["this is not json",
             json.dumps([1, 2]),
             json.dumps({"jsonrpc": "2.0", "id": 1, "method": "no/such_method", "params": {}}),
             # Zed's initialize and session/new, as Zed sends them
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
                 "protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True},
                                                             "terminal": True, "_meta": {"terminal_output": True}},
                 "clientInfo": {"name": "zed", "title": "Zed", "version": "0.208.0"}}}),
             json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/new",
                         "params": {"cwd": str(repo), "mcpServers": []}}),
             json.dumps({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
                         "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}}),
             json.dumps({"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "relative"}})]
    proc = subprocess.run([sys.executable, "-m", "agentcli", "acp"], cwd=repo, env=agent_env(api_env),
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]  # every line is JSON-RPC
    by_id = {m.get("id"): m for m in out if "id" in m and m.get("id") is not None}
    nulls = [m for m in out if "id" in m and m["id"] is None]
    assert [m["error"]["code"] for m in nulls] == [-32700, -32600]
    assert by_id[1]["error"]["code"] == -32601
    init = s.InitializeResponse.model_validate(by_id[2]["result"])
    assert init.protocol_version == 1 and init.agent_capabilities.load_session
    new = s.NewSessionResponse.model_validate(by_id[3]["result"])
    assert new.session_id and new.modes.current_mode_id == "default"
    assert "no session nope" in by_id[4]["error"]["message"]
    assert by_id[5]["error"]["code"] == -32602
    assert "Traceback" not in proc.stderr
