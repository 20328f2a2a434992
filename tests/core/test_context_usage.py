"""/context's breakdown adds up to what the stand-in counts for the request it receives."""

from __future__ import annotations

from agentcli.core.engine.context_usage import COUNTED, ESTIMATED
from agentcli.core.model.llm import estimate_tokens as project_estimate
from tests.fakes.anthropic_server import estimate_tokens, text, tool_use

MEMORY = "Always run the tests with -n 0. " * 40


async def test_the_parts_add_up_to_the_servers_count_of_the_request_it_was_sent(server, make_session, repo):
    (repo / "AGENTS.md").write_text(MEMORY)
    (repo / "notes.txt").write_text("a line of notes\n" * 200)
    server.script(tool_use("read_file", {"path": "notes.txt"}), text("Read it."))
    session, _ = make_session()
    await session.send("read notes.txt")
    usage = await session.context_usage()

    counted = server.count_tokens_requests[-1]
    last = server.requests[-1]
    assert counted["system"] == last["system"][0]["text"]  # the request the session sends, as it sends it
    assert counted["messages"] == session.messages
    assert [t["name"] for t in counted["tools"]] == [t["name"] for t in last["tools"]]
    assert usage.method == COUNTED
    assert usage.total == estimate_tokens(counted)  # what the stand-in answered
    assert sum(usage.parts.values()) == usage.total
    assert usage.parts["project memory"] > 0 and usage.parts["tool results"] > 0
    assert usage.parts["tool definitions"] > usage.parts["project memory"]
    assert usage.as_dict()["parts"] == usage.parts


async def test_without_the_endpoint_the_estimate_is_used_and_still_adds_up(server, make_session, repo):
    server.offers_count_tokens = False
    server.script(text("Hello."))
    session, _ = make_session()
    await session.send("hi")
    usage = await session.context_usage()
    assert usage.method == ESTIMATED
    assert usage.parts["project memory"] == 0  # no memory file
    assert sum(usage.parts.values()) == usage.total > 0
    assert server.count_tokens_requests  # it asked, and was refused
    assert usage.total == project_estimate(
        {
            "model": session.model,
            "system": session.main.system,
            "messages": session.messages,
            "tools": session.tools.schemas(),
        }
    )


async def test_memory_changed_after_the_prompt_was_built_is_still_counted_as_memory(server, make_session, repo):
    (repo / "AGENTS.md").write_text(MEMORY)
    server.offers_count_tokens = False
    server.script(text("Hello."))
    session, _ = make_session()
    await session.send("hi")
    (repo / "AGENTS.md").write_text("Something else entirely.\n")  # the prompt still holds the old memory
    usage = await session.context_usage()
    assert usage.parts["project memory"] >= project_estimate(MEMORY) * 0.9  # not counted as system prompt
