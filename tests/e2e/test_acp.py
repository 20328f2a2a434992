"""`agentcli acp` driven by the ACP SDK's own client, over stdio, against the stand-in API and a real git repo.

The processes are shared (test_acp_support.py): each test has its own session, repository and replies."""

from __future__ import annotations

import asyncio
import json
import sys
import threading

import acp
import pytest
from acp import schema as s

from tests.core.test_mcp_features import refusing_http  # noqa: F401 (a fixture: an MCP endpoint that answers 401)
from tests.e2e.test_acp_support import (  # noqa: F401 (fixtures)
    ROOT,
    acp_home,
    api_env,
    opted_in,
    plain,
    plain_process,
    server,
    shared,
    shared_server,
    subagent_process,
)
from tests.fakes.anthropic_server import offers_tool, text, tool_use
from tests.narrow import of
from tests.waiting import until


@shared
async def test_a_prompt_streams_the_answer_and_its_tool_calls(server, plain, repo):
    agent, client = plain
    server.script(tool_use("read_file", {"path": "src/app/auth.py"}), text("login calls handle_auth."))
    sid = await agent.new(repo)
    done = await agent.prompt(sid, "What does login call?")
    assert done.stop_reason == "end_turn"
    assert client.said(sid) == "login calls handle_auth."
    [start_call] = client.of(s.ToolCallStart, sid)
    assert start_call.kind == "read" and "src/app/auth.py" in start_call.title
    assert start_call.locations[0].path == str(repo.resolve() / "src/app/auth.py")
    [finished] = client.of(s.ToolCallProgress, sid)
    assert finished.tool_call_id == start_call.tool_call_id and finished.status == "completed"
    assert "handle_auth" in finished.content[0].content.text
    assert client.of(s.UsageUpdate, sid)[-1].used > 0
    assert client.of(s.AvailableCommandsUpdate, sid)
    assert client.invalid == [] and client.raw


@shared
async def test_the_plan_is_sent_as_a_plan_update_each_time_it_changes(server, plain, repo):
    agent, client = plain
    first = [
        {"content": "Read auth.py", "status": "in_progress", "activeForm": "Reading auth.py"},
        {"content": "Explain login", "status": "pending", "activeForm": "Explaining login"},
    ]
    second = [{**first[0], "status": "completed"}, {**first[1], "status": "in_progress"}]
    server.script(tool_use("todo_write", {"todos": first}), tool_use("todo_write", {"todos": second}), text("Planned."))
    sid = await agent.new(repo)
    await agent.prompt(sid, "Plan it")
    plans = client.of(s.AgentPlanUpdate, sid)
    assert [[(e.content, e.status, e.priority) for e in p.entries] for p in plans] == [
        [("Read auth.py", "in_progress", "medium"), ("Explain login", "pending", "medium")],
        [("Read auth.py", "completed", "medium"), ("Explain login", "in_progress", "medium")],
    ]
    assert client.invalid == []


@shared
async def test_an_edit_shows_its_diff_and_asks_and_a_no_keeps_the_file(server, plain, repo):
    agent, client = plain
    client.answers.append("reject_once")
    server.script(
        tool_use("read_file", {"path": "README.md"}),
        tool_use("edit_file", {"path": "README.md", "old_string": "A tiny app", "new_string": "A small app"}),
        text("I left it."),
    )
    sid = await agent.new(repo)
    done = await agent.prompt(sid, "Reword the README")
    assert done.stop_reason == "end_turn"
    call = client.of(s.ToolCallStart, sid)[-1]
    assert call.kind == "edit"
    [diff] = call.content
    assert (diff.path, diff.old_text, diff.new_text) == (str(repo.resolve() / "README.md"), "A tiny app", "A small app")
    [question] = client.questions
    assert question.tool_call.tool_call_id == call.tool_call_id
    assert [o.kind for o in question.options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    # The question keeps the call's title and sends its change as ACP diff content, which replaces the call's
    # content while it waits (a plain-text hunk lost an editor's inline diff; a bare tool name its title).
    [asked] = [m["params"]["toolCall"] for m in client.raw if m.get("method") == "session/request_permission"]
    assert "title" not in asked
    [asked_diff] = question.tool_call.content
    assert (asked_diff.type, asked_diff.path, asked_diff.old_text, asked_diff.new_text) == (
        "diff",
        str(repo.resolve() / "README.md"),
        "A tiny app",
        "A small app",
    )
    assert "A tiny app" in (repo / "README.md").read_text()
    assert client.invalid == [] and client.raw
    assert client.of(s.ToolCallProgress, sid)[-1].status == "failed"


@shared
async def test_allow_always_saves_the_rule_agentcli_would_save(server, plain, repo):
    agent, client = plain
    client.answers.append("allow_always")
    server.script(tool_use("bash", {"command": "git status --short"}), text("Clean."))
    sid = await agent.new(repo)
    done = await agent.prompt(sid, "Is the tree clean?")
    assert done.stop_reason == "end_turn"
    [question] = client.questions
    always = next(o for o in question.options if o.kind == "allow_always")
    rule = always.name.removeprefix("Always allow ")
    assert rule.startswith("bash(git status")
    saved = [p.read_text() for p in (agent.home / "agentcli" / "config" / "workspaces").glob("*.toml")]
    assert any(rule in text for text in saved), agent.stderr.read_text()
    assert client.of(s.ToolCallProgress, sid)[-1].status == "completed"


@shared
async def test_reject_always_denies_the_same_call_again_without_asking(server, plain, repo):
    agent, client = plain
    client.answers.append("reject_always")
    server.script(
        tool_use("bash", {"command": "git status --short"}),
        tool_use("bash", {"command": "git status --short"}),
        text("Not allowed."),
    )
    sid = await agent.new(repo)
    await agent.prompt(sid, "Is the tree clean?")
    assert len(client.questions) == 1
    results = [u for u in client.of(s.ToolCallProgress, sid) if u.status == "failed"]
    assert len(results) == 2 and "denied by the rule" in results[1].content[0].content.text


@shared
async def test_cancel_ends_the_prompt_as_cancelled(server, plain, repo):
    agent, client = plain
    gate = threading.Event()
    server.script(text("A long answer", gate=gate))
    try:
        sid = await agent.new(repo)
        prompt = asyncio.create_task(agent.prompt(sid, "Go"))
        await until(lambda: server.requests, "the model call")
        with pytest.raises(acp.RequestError, match="already running"):
            await agent.prompt(sid, "Again")
        await agent.conn.cancel(session_id=sid)
        done = await prompt
        assert done.stop_reason == "cancelled"
        with pytest.raises(acp.RequestError, match="no session"):
            await agent.prompt("nope", "Hi")
    finally:
        gate.set()


@shared
async def test_modes_switch_and_say_so(server, plain, repo):
    agent, client = plain
    server.script(
        tool_use("read_file", {"path": "README.md"}),
        tool_use("edit_file", {"path": "README.md", "old_string": "A tiny app", "new_string": "A small app"}),
        text("Done."),
    )
    sid = await agent.new(repo)
    await agent.conn.set_session_mode(session_id=sid, mode_id="acceptEdits")
    done = await agent.prompt(sid, "Reword the README")
    with pytest.raises(acp.RequestError):
        await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    assert done.stop_reason == "end_turn"
    assert [u.current_mode_id for u in client.of(s.CurrentModeUpdate, sid)] == ["acceptEdits"]
    assert client.questions == [] and "A small app" in (repo / "README.md").read_text()


@shared
async def test_a_finished_session_loads_and_lists(server, plain, opted_in, repo):
    agent, client = plain
    server.script(text("Hello there."))
    sid = await agent.new(repo)
    await agent.prompt(sid, "Say hello")
    other, later = opted_in  # another process, on the same home
    listed = await other.conn.list_sessions(cwd=str(repo))
    assert [(x.session_id, x.title) for x in listed.sessions] == [(sid, "Say hello")]
    await other.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[])
    later.sessions.append(sid)
    assert [u.content.text for u in later.of(s.UserMessageChunk, sid)] == ["Say hello"]
    assert later.said(sid) == "Hello there."
    with pytest.raises(acp.RequestError):
        await other.conn.load_session(cwd=str(repo), session_id="no-such-session", mcp_servers=[])
    assert later.invalid == []


@shared
async def test_listing_without_a_folder_shows_the_folder_the_agent_runs_in_and_no_other(server, plain, repo):
    """session/list without a cwd once listed every workspace's sessions, each titled with its first prompt."""
    agent, client = plain
    server.script(text("Noted."), text("Hello."))
    elsewhere = await agent.new(repo)
    await agent.prompt(elsewhere, "the secret plan for another project")
    here = await agent.new(agent.home)  # the shared process runs in its home
    await agent.prompt(here, "Say hello")
    listed = (await agent.conn.list_sessions()).sessions
    assert here in [x.session_id for x in listed] and elsewhere not in [x.session_id for x in listed]
    assert {x.cwd for x in listed} == {str(agent.home.resolve())}
    assert not [x for x in listed if "secret" in (x.title or "")]
    assert [x.session_id for x in (await agent.conn.list_sessions(cwd=str(repo))).sessions] == [elsewhere]
    assert client.invalid == []


@shared
async def test_thinking_streams_as_thought_chunks(server, plain, repo):
    from tests.fakes.anthropic_server import reply, thinking_block

    agent, client = plain
    server.script(reply(thinking_block("The user wants a greeting."), "Hello."))
    sid = await agent.new(repo)
    await agent.prompt(sid, "Greet me")
    assert "".join(u.content.text for u in client.of(s.AgentThoughtChunk, sid)) == "The user wants a greeting."
    assert client.said(sid) == "Hello."


@shared
async def test_mcp_servers_from_session_new_start_and_their_tools_run(server, plain, repo):
    agent, client = plain
    client.answers.append("allow_once")
    server.when(
        lambda b: offers_tool(b, "mcp__mine__add"), tool_use("mcp__mine__add", {"a": 20, "b": 22}), text("It is 42.")
    )
    mine = s.McpServerStdio(
        name="mine",
        command=sys.executable,
        args=["-m", "tests.fakes.mcp_server"],
        env=[s.EnvVariable(name="PYTHONPATH", value=str(ROOT))],
    )
    sid = await agent.new(repo, mcp_servers=[mine])
    done = await agent.prompt(sid, "Add 20 and 22")
    assert done.stop_reason == "end_turn" and client.said(sid) == "It is 42."
    [call] = client.of(s.ToolCallStart, sid)
    assert call.title.startswith("mcp__mine__add")
    assert "42" in client.of(s.ToolCallProgress, sid)[-1].content[0].content.text


@shared
async def test_an_image_in_a_prompt_goes_to_the_model_and_one_that_is_none_is_refused_saying_so(server, plain, repo):
    import base64

    from tests.core.test_images import images_in, png

    agent, client = plain
    server.script(text("A red square."))
    data = base64.b64encode(png(4, 3)).decode()
    sid = await agent.new(repo)
    done = await agent.conn.prompt(
        session_id=sid, prompt=[acp.text_block("What is this?"), acp.image_block(data, "image/png")]
    )
    assert done.stop_reason == "end_turn" and client.said(sid) == "A red square."
    assert [i["source"]["data"] for i in images_in(server.requests[-1])] == [data]
    with pytest.raises(acp.RequestError, match="image 1 of the prompt is not a PNG, JPEG, GIF or WebP image"):
        await agent.conn.prompt(session_id=sid, prompt=[acp.image_block("bm90IGFuIGltYWdl", "image/png")])
    assert len(server.requests) == 1
    server.assert_no_rejections()


@shared
async def test_an_sse_server_from_session_new_is_started(server, plain, repo, refusing_http):
    """An SSE server is taken and started as one (this one refuses without a token: its 401 is on stderr, named),
    where session/new used to refuse it."""
    agent, client = plain
    server.script(text("Still here."))
    feed = s.SseMcpServer(
        type="sse",
        name="feed",
        url=refusing_http.replace("/mcp", "/sse"),
        headers=[s.HttpHeader(name="Authorization", value="Bearer wrong")],
    )
    sid = await agent.new(repo, mcp_servers=[feed])
    done = await agent.prompt(sid, "Hello")
    assert done.stop_reason == "end_turn" and client.said(sid) == "Still here."
    await until(
        lambda: "'feed'" in agent.stderr.read_text() and "401 Unauthorized" in agent.stderr.read_text(),
        "the SSE server's refusal, named",
        detail=lambda: agent.stderr.read_text()[-2000:],
    )


@shared
async def test_a_servers_prompts_join_the_available_commands_once_it_is_ready(server, plain, repo):
    agent, client = plain
    server.script(text("Hi."), text("Reviewed."))
    features = s.McpServerStdio(
        name="features",
        command=sys.executable,
        args=["-m", "tests.fakes.mcp_features"],
        env=[s.EnvVariable(name="PYTHONPATH", value=str(ROOT))],
    )
    sid = await agent.new(repo, mcp_servers=[features])
    await agent.prompt(sid, "Hello")
    offered = [u.available_commands for u in client.of(s.AvailableCommandsUpdate, sid)][-1]
    [review] = [c for c in offered if c.name == "mcp__features__review"]
    assert "Review a file." in review.description and review.input.root.hint == "FILE [FOCUS]"
    done = await agent.prompt(sid, "/mcp__features__review app.py")
    assert done.stop_reason == "end_turn" and "app.py" in str(server.requests[-1]["messages"][-1])


@shared
@pytest.mark.parametrize("answer", ["trust", "distrust"])
async def test_the_trust_question_is_asked_before_the_workspaces_settings_act(server, plain, tmp_path, answer):
    from tests.conftest import stranger_clone
    from tests.fakes.anthropic_server import tool_names

    agent, client = plain
    client.answers.append(answer)
    evidence = tmp_path / "clone" / "pwned.pid"
    spec = {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server", "--touch", str(evidence)],
        "env": {"PYTHONPATH": str(ROOT)},
    }
    clone = stranger_clone(tmp_path, {".mcp.json": json.dumps({"mcpServers": {"helper": spec}}), "README.md": "# Hi\n"})
    server.script(text("Hi."))
    sid = await agent.new(clone)
    assert client.questions == []  # asked at the first prompt, once the client knows the session
    await agent.prompt(sid, "Hello")
    [question] = client.questions
    assert question.session_id == sid and "Trust" in question.tool_call.title
    assert "helper" in question.tool_call.content[0].content.text
    assert [o.kind for o in question.options] == ["allow_always", "reject_always"]
    offered = any(name.startswith("mcp__helper__") for name in tool_names(server.requests[0]))
    assert offered is (answer == "trust") and evidence.exists() is (answer == "trust")


def test_bad_messages_and_zeds_first_requests_get_the_right_answers_and_stdout_holds_only_protocol(repo):
    """Its own process: what it reads is its standard input, whole, and it must end when that ends."""
    import os
    import subprocess

    from tests.conftest import API_KEY

    zed_initialize = {  # as Zed sends them
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True},
            "terminal": True,
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
        "clientInfo": {"name": "zed", "title": "Zed", "version": "0.208.0"},
    }
    lines = [
        "this is not json",
        json.dumps([1, 2]),
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "no/such_method", "params": {}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": zed_initialize}),
        json.dumps(
            {"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": str(repo), "mcpServers": []}}
        ),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "session/prompt",
                "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]},
            }
        ),
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "relative"}}),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL="http://127.0.0.1:9")  # no model call is made
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "acp"],
        cwd=repo,
        env=env,
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]  # every line is JSON-RPC
    by_id = {m.get("id"): m for m in out if "id" in m and m.get("id") is not None}
    nulls = [m for m in out if "id" in m and m["id"] is None]
    assert [m["error"]["code"] for m in nulls] == [-32700, -32600]
    assert by_id[1]["error"]["code"] == -32601
    init = s.InitializeResponse.model_validate(by_id[2]["result"])
    assert init.protocol_version == 1 and init.agent_info is not None and init.agent_info.name == "agentcli"
    caps = of(s.AgentCapabilities, init.agent_capabilities)
    mcp = of(s.McpCapabilities, caps.mcp_capabilities)
    prompts = of(s.PromptCapabilities, caps.prompt_capabilities)
    assert caps.load_session and mcp.http and of(s.SessionCapabilities, caps.session_capabilities).list is not None
    assert mcp.sse  # agentcli starts SSE servers (test_an_sse_server_from_session_new_is_started)
    assert prompts.embedded_context and prompts.image
    assert init.auth_methods == []  # the key comes from the environment: Zed shows no login
    new = s.NewSessionResponse.model_validate(by_id[3]["result"])
    modes = of(s.SessionModeState, new.modes)
    assert new.session_id and modes.current_mode_id == "default"
    assert [m.id for m in modes.available_modes] == ["default", "acceptEdits", "plan", "bypassPermissions"]
    updates = [m["params"] for m in out if m.get("method") == "session/update"]
    assert updates and all(u["sessionId"] == new.session_id for u in updates)
    for update in updates:
        s.SessionNotification.model_validate(update)
    assert any(u["update"]["sessionUpdate"] == "available_commands_update" for u in updates)
    assert "no session nope" in by_id[4]["error"]["message"]
    assert by_id[5]["error"]["code"] == -32602
    assert "Traceback" not in proc.stderr
