"""The Agent SDK's extension points, driven by the SDK itself against agentcli: ``can_use_tool``
(``--permission-prompt-tool stdio``), Python hook callbacks, in-process SDK MCP servers and ``agents=``.
Each of these failed on the SDK's first request before agentcli served them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from claude_agent_sdk import (
    AgentDefinition,
    ClaudeSDKClient,
    HookContext,
    HookJSONOutput,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from tests.e2e.test_agent_sdk import cli_path, options  # noqa: F401 - the fixture
from tests.fakes.anthropic_server import message_text, reply, text, tool_use, tool_use_block
from tests.narrow import of


def tool_results(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tool_result blocks of a request's last message, by tool_use_id."""
    content = request["messages"][-1]["content"]
    return {b["tool_use_id"]: b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"}


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content or [])


async def prompt_stream(text: str):
    yield {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "default",
    }


async def test_can_use_tool_allows_with_a_changed_input_and_denies_with_a_message(server, api_env, repo, cli_path):
    server.script(
        reply(
            "Writing, then cleaning up.",
            tool_use_block("write_file", {"path": "notes/hello.py", "content": "print('hi')\n"}, id="toolu_write"),
            tool_use_block("bash", {"command": "rm -rf build"}, id="toolu_rm"),
        ),
        text("Done."),
    )
    asked: list[tuple[str, dict[str, Any], str | None]] = []

    async def decide(name: str, data: dict[str, Any], context: Any) -> Any:
        asked.append((name, data, context.tool_use_id))
        if name == "Write":
            return PermissionResultAllow(updated_input={**data, "file_path": str(repo / "safe_output" / "hello.py")})
        return PermissionResultDeny(message="Dangerous command pattern detected: rm -rf")

    opts = options(cli_path, repo, api_env, can_use_tool=decide, permission_mode="default")
    messages = [m async for m in query(prompt=prompt_stream("write hello.py and clean up"), options=opts)]
    assert isinstance(messages[-1], ResultMessage) and str(messages[-1].result).endswith("Done.")
    # Claude Code's tool names and input shapes, and the call each question is about.
    by_name = {name: (data, use_id) for name, data, use_id in asked}
    assert set(by_name) == {"Write", "Bash"}
    assert by_name["Write"][0]["file_path"] == str(repo / "notes" / "hello.py") and by_name["Write"][1] == "toolu_write"
    assert by_name["Bash"][0]["command"] == "rm -rf build"
    # The changed input is what ran; the model's path was never written.
    assert (repo / "safe_output" / "hello.py").read_text() == "print('hi')\n"
    assert not (repo / "notes").exists()
    results = tool_results(server.requests[1])
    assert results["toolu_rm"]["is_error"] is True
    assert result_text(results["toolu_rm"]) == "Dangerous command pattern detected: rm -rf"
    assert not results["toolu_write"].get("is_error")
    denials = messages[-1].permission_denials or []
    assert [(d["tool_name"], d["tool_use_id"]) for d in denials] == [("Bash", "toolu_rm")]  # as can_use_tool named it
    server.assert_no_rejections()


async def test_a_changed_input_is_checked_again_and_a_denial_can_interrupt(server, api_env, repo, cli_path, tmp_path):
    outside = tmp_path / "elsewhere.txt"
    server.script(
        tool_use("write_file", {"path": "a.txt", "content": "x"}, id="toolu_a"),
        text("after the refusal"),
        tool_use("bash", {"command": "make deploy"}, id="toolu_b"),
        text("never asked for"),
    )

    async def decide(name: str, data: dict[str, Any], context: Any) -> Any:
        if name == "Write":  # a host that sends the write outside the workspace: the boundary still holds
            return PermissionResultAllow(updated_input={**data, "file_path": str(outside)})
        return PermissionResultDeny(message="Not now.", interrupt=True)

    async with ClaudeSDKClient(options(cli_path, repo, api_env, can_use_tool=decide)) as client:
        await client.query("write a")
        first = [m async for m in client.receive_response()]
        await client.query("deploy")
        second = [m async for m in client.receive_response()]
    assert not outside.exists() and not (repo / "a.txt").exists()
    refusal = result_text(tool_results(server.requests[1])["toolu_a"])
    assert "outside the workspace" in refusal
    first_result, second_result = of(ResultMessage, first[-1]), of(ResultMessage, second[-1])
    assert first_result.result == "after the refusal" and not first_result.is_error
    assert second_result.is_error and second_result.subtype == "error_during_execution"
    assert len(server.requests) == 3  # the interrupt stopped the turn: no call after the denial


async def test_python_hook_callbacks_block_allow_and_add_context(server, api_env, repo, cli_path):
    server.script(
        tool_use("bash", {"command": "./foo.sh --help"}, id="toolu_foo"),
        text("Blocked, as asked."),
        tool_use("write_file", {"path": "regular.txt", "content": "test data"}, id="toolu_w"),
        text("Written."),
    )
    seen: list[Mapping[str, Any]] = []

    async def check_bash(data: Mapping[str, Any], tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        seen.append(data)
        if "foo.sh" in data["tool_input"].get("command", ""):
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "Command contains invalid pattern: foo.sh",
                }
            }
        return {}

    async def approve_write(data: Mapping[str, Any], tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        seen.append(data)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": "Tool passed security checks",
            }
        }

    async def colour(data: Mapping[str, Any], tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        return {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "My favorite color is hot pink",
            }
        }

    hooks = {
        "PreToolUse": [
            HookMatcher(matcher="Bash", hooks=[check_bash]),
            HookMatcher(matcher="Write", hooks=[approve_write]),
        ],
        "UserPromptSubmit": [HookMatcher(matcher=None, hooks=[colour])],
    }
    async with ClaudeSDKClient(options(cli_path, repo, api_env, hooks=hooks)) as client:
        await client.query("Run the bash command: ./foo.sh --help")
        first = [m async for m in client.receive_response()]
        await client.query("write regular.txt")  # headless default mode would refuse it: the hook allows it
        second = [m async for m in client.receive_response()]
    assert of(ResultMessage, first[-1]).result == "Blocked, as asked."
    assert of(ResultMessage, second[-1]).result == "Written."
    blocked = result_text(tool_results(server.requests[1])["toolu_foo"])
    assert "Command contains invalid pattern: foo.sh" in blocked
    assert (repo / "regular.txt").read_text() == "test data"
    assert [d["hook_event_name"] for d in seen] == ["PreToolUse", "PreToolUse"]
    assert seen[0]["tool_name"] == "Bash" and seen[1]["tool_name"] == "Write"
    assert seen[1]["tool_input"]["file_path"] == str(repo / "regular.txt")
    assert "hot pink" in json.dumps(server.requests[0]["messages"][0])


async def test_an_sdk_mcp_server_is_listed_before_the_first_request_and_its_tools_run(server, api_env, repo, cli_path):
    from agentcli.paths import user_config_file

    user_config_file().parent.mkdir(parents=True, exist_ok=True)  # a loaded machine imports the MCP SDK slowly
    user_config_file().write_text("mcp_startup_timeout = 120\n")

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"{args['a']} + {args['b']} = {args['a'] + args['b']}"}]}

    calculator = create_sdk_mcp_server(name="calculator", version="2.0.0", tools=[add])
    server.script(tool_use("mcp__calc__add", {"a": 2, "b": 40}, id="toolu_add"), text("It is 42."))
    opts = options(cli_path, repo, api_env, mcp_servers={"calc": calculator}, allowed_tools=["mcp__calc__add"])
    messages = [m async for m in query(prompt="What is 2 + 40?", options=opts)]
    assert of(ResultMessage, messages[-1]).result == "It is 42."
    assert "mcp__calc__add" in [t["name"] for t in server.requests[0]["tools"]]  # the first request had it
    assert result_text(tool_results(server.requests[1])["toolu_add"]) == "2 + 40 = 42"
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert {"name": "calc", "status": "connected"} in init.data["mcp_servers"]


async def test_agents_from_the_sdk_become_agent_types(server, api_env, repo, cli_path):
    server.script(
        tool_use(
            "task",
            {"description": "Review the code", "prompt": "Review src/app/auth.py", "subagent_type": "code-reviewer"},
            id="toolu_task",
        ),
        text("Looks fine to me."),
        text("The reviewer says it looks fine."),
    )
    agents = {
        "code-reviewer": AgentDefinition(
            description="Reviews code for best practices",
            prompt="You are a code reviewer. Be brief.",
            tools=["Read", "Grep"],
            model="sonnet",
        )
    }
    opts = options(cli_path, repo, api_env, agents=agents)
    messages = [m async for m in query(prompt="Use the code-reviewer agent", options=opts)]
    assert of(ResultMessage, messages[-1]).result == "The reviewer says it looks fine."
    task_schema = next(t for t in server.requests[0]["tools"] if t["name"] == "task")
    assert "code-reviewer" in task_schema["input_schema"]["properties"]["subagent_type"]["enum"]
    child = server.requests[1]
    assert "You are a code reviewer. Be brief." in json.dumps(child["system"])
    assert sorted(t["name"] for t in child["tools"]) == ["grep", "read_file"]
    assert message_text(child["messages"][0]) == "Review src/app/auth.py"


async def test_control_requests_set_the_model_and_report_context_mcp_and_tasks(server, api_env, repo, cli_path):
    @tool("ping", "Answer pong", {})
    async def ping(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "pong"}]}

    from agentcli.paths import user_config_file

    user_config_file().parent.mkdir(parents=True, exist_ok=True)
    user_config_file().write_text("mcp_startup_timeout = 120\n")
    pinger = create_sdk_mcp_server(name="pinger", tools=[ping])
    server.script(text("one"), text("two"))
    async with ClaudeSDKClient(options(cli_path, repo, api_env, mcp_servers={"pinger": pinger})) as client:
        await client.query("first")
        [m async for m in client.receive_response()]
        usage = await client.get_context_usage()
        status = await client.get_mcp_status()
        await client.set_model("claude-haiku-4-5")
        await client.query("second")
        [m async for m in client.receive_response()]
        await client.toggle_mcp_server("pinger", False)
        stopped = await client.get_mcp_status()
        await client.reconnect_mcp_server("pinger")
        again = await client.get_mcp_status()
        with pytest.raises(Exception, match="no running task 'sa-9'"):
            await client.stop_task("sa-9")
    assert usage["totalTokens"] > 0 and usage["maxTokens"] >= 200_000 and usage["model"] == server.requests[0]["model"]
    assert [t["name"] for t in usage["mcpTools"]] == ["mcp__pinger__ping"]
    entry = status["mcpServers"][0]
    assert (entry["name"], entry["status"], [t["name"] for t in entry["tools"]]) == ("pinger", "connected", ["ping"])
    assert server.requests[1]["model"] == "claude-haiku-4-5" != server.requests[0]["model"]
    assert stopped["mcpServers"][0]["status"] == "disabled" and again["mcpServers"][0]["status"] == "connected"


async def test_agents_flag_and_a_thinking_budget_alone(server, api_env, repo, cli_path):
    server.script(text("ok"))
    agents = json.dumps({"scout": {"description": "Finds things", "prompt": "You find things.", "tools": ["Grep"]}})
    opts = options(
        cli_path, repo, api_env, thinking={"type": "enabled", "budget_tokens": 2048}, extra_args={"agents": agents}
    )
    messages = [m async for m in query(prompt="hi", options=opts)]
    assert of(ResultMessage, messages[-1]).result == "ok"
    request = server.requests[0]
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    task_schema = next(t for t in request["tools"] if t["name"] == "task")
    assert "scout" in task_schema["input_schema"]["properties"]["subagent_type"]["enum"]


async def test_a_budget_stop_ends_as_claude_codes_does(server, api_env, repo, cli_path):
    server.script(*[tool_use("glob", {"pattern": "*.py"}) for _ in range(3)], text("never"))
    opts = options(cli_path, repo, api_env, max_budget_usd=0.000001)
    messages = [m async for m in query(prompt="Read the README.md file and summarize it", options=opts)]
    result = messages[-1]  # no ResultError after it: agentcli exits 0, as Claude Code does
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_budget_usd"
    assert result.is_error is False and result.total_cost_usd and result.total_cost_usd > 0.000001


async def test_system_prompt_file_fork_session_and_dont_ask(server, api_env, repo, cli_path, tmp_path):
    prompt_file = tmp_path / "prompt.md"
    prompt_file.write_text("You answer from a file.")
    server.script(
        text("first"), tool_use("write_file", {"path": "x.txt", "content": "x"}, id="toolu_x"), text("refused")
    )
    asked: list[str] = []

    async def decide(name: str, data: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        return PermissionResultAllow()

    opts = options(cli_path, repo, api_env, system_prompt={"type": "file", "path": str(prompt_file)})
    first = of(ResultMessage, [m async for m in query(prompt="one", options=opts)][-1])
    assert server.requests[0]["system"][0]["text"] == "You answer from a file."
    opts = options(
        cli_path,
        repo,
        api_env,
        resume=first.session_id,
        fork_session=True,
        can_use_tool=decide,
        permission_mode="dontAsk",
    )
    second = of(ResultMessage, [m async for m in query(prompt=prompt_stream("two"), options=opts)][-1])
    assert second.session_id != first.session_id  # a new session, with the first one's history
    assert [message_text(m) for m in server.requests[1]["messages"]][:2] == ["one", "first"]
    assert asked == [] and not (repo / "x.txt").exists()  # dontAsk: refused without asking anyone
    assert [d["tool_use_id"] for d in second.permission_denials or []] == ["toolu_x"]


async def test_a_flag_agentcli_does_not_know_is_an_error_the_sdk_shows(server, api_env, repo, cli_path):
    server.script(text("never"))
    with pytest.raises(Exception) as raised:
        [m async for m in query(prompt="hi", options=options(cli_path, repo, api_env, betas=["context-1m"]))]
    assert "--betas" in str(raised.value)
    assert server.requests == []


async def test_strict_mcp_config_starts_only_the_servers_passed(server, api_env, repo, cli_path):
    @tool("ping", "Answer pong", {})
    async def ping(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "pong"}]}

    from agentcli.paths import user_config_file

    user_config_file().parent.mkdir(parents=True, exist_ok=True)
    user_config_file().write_text("mcp_startup_timeout = 120\n")
    (user_config_file().parent / "mcp.json").write_text(json.dumps({"mcpServers": {"mine": {"command": "/no/such"}}}))
    server.script(text("ok"))
    opts = options(
        cli_path,
        repo,
        api_env,
        strict_mcp_config=True,
        mcp_servers={"pinger": create_sdk_mcp_server(name="pinger", tools=[ping])},
    )
    async with ClaudeSDKClient(opts) as client:
        await client.query("hi")
        [m async for m in client.receive_response()]
        status = await client.get_mcp_status()
    assert [s["name"] for s in status["mcpServers"]] == ["pinger"]
