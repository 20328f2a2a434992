"""The API's own web search (core/tools/web_search.py), a server tool: offered where the endpoint runs it, its
blocks kept and sent back as they came, its pages shown as sources; through the real SDK and the stand-in server,
which runs the search itself as the API does (tests/fakes/web_search.py)."""

from __future__ import annotations

from typing import Any

from agentcli.core.events import Notice
from agentcli.core.tools.web_search import TYPE
from agentcli.ui.format import sources_text
from tests.fakes.anthropic_server import reply, text, tool_names
from tests.fakes.web_search import DEFAULT_PAGES, cited, search_call

SEARCH = {"type": TYPE, "name": "web_search", "max_uses": 5}


def server_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    found = [
        {k: v for k, v in t.items() if k != "cache_control"} for t in body.get("tools") or [] if t.get("type") == TYPE
    ]
    return found[0] if found else None


async def test_a_search_round_trip_keeps_the_blocks_and_citations_as_they_came(server, make_session):
    title, url = DEFAULT_PAGES[0]
    server.script(
        reply(
            search_call("python 3.13 release date"), cited("Python 3.13 was released on 7 October 2024.", title, url)
        ),
        text("You're welcome."),
    )
    session, recorder = make_session(web_search="true")
    await session.send("When did Python 3.13 come out?")
    await session.send("thanks")
    first, second = server.requests
    server.assert_no_rejections()
    assert server_tool(first) == SEARCH
    kept = second["messages"][1]["content"]
    assert [b["type"] for b in kept] == ["server_tool_use", "web_search_tool_result", "text"]
    assert kept[0]["input"] == {"query": "python 3.13 release date"}
    assert kept[1]["tool_use_id"] == kept[0]["id"] and [r["url"] for r in kept[1]["content"]] == [
        u for _, u in DEFAULT_PAGES
    ]
    citation = kept[2]["citations"][0]
    assert citation["url"] == url and citation["encrypted_index"].startswith("EncIdx")
    assert sources_text(kept).splitlines() == [
        "Sources:",
        f"1. {title} — {url}",
        f"2. {DEFAULT_PAGES[1][0]} — {DEFAULT_PAGES[1][1]}",
    ]
    assert session.last_text() == "You're welcome."


async def test_a_resumed_session_sends_the_search_blocks_back_as_they_came(server, make_session, resume):
    title, url = DEFAULT_PAGES[0]
    server.script(reply(search_call("pep 719"), cited("The schedule is PEP 719.", title, url)), text("Sure."))
    session, _ = make_session(web_search="true")
    await session.send("Where is the 3.13 schedule?")
    again, _ = resume(session.id)
    await again.send("thanks")
    sent = server.requests[-1]["messages"][1]["content"]
    server.assert_no_rejections()
    assert [b["type"] for b in sent] == ["server_tool_use", "web_search_tool_result", "text"]
    assert sent[2]["citations"][0]["url"] == url and sent[1]["content"][0]["encrypted_content"].startswith("EncRypTed")


async def test_auto_offers_it_only_at_anthropics_api(server, make_session):
    server.script(text("hi"))
    session, _ = make_session()  # "auto", and the stand-in is on loopback: not Anthropic's API
    await session.send("hello")
    assert server_tool(server.requests[0]) is None and "web_search" not in tool_names(server.requests[0])
    assert "127.0.0.1" in session.llm.web_search_off and "not Anthropic's API" in session.llm.web_search_off


async def test_a_rule_or_hook_that_would_judge_it_keeps_it_out(server, make_session):
    session, _ = make_session(web_search="true", permissions={"deny": ["WebSearch"]})
    assert "web_search" not in session.tools and "`WebSearch`" in session.llm.web_search_off
    hooks = {"PreToolUse": [{"matcher": "WebSearch|WebFetch", "hooks": [{"type": "command", "command": "true"}]}]}
    session, _ = make_session(web_search="true", hooks=hooks)
    assert "web_search" not in session.tools and "PreToolUse hook" in session.llm.web_search_off
    session, _ = make_session(
        web_search="true",
        hooks={"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]},
    )
    assert "web_search" in session.tools
    server.script(text("one"), text("two"))
    await session.send("first")
    session.permissions.deny_for_session(["WebSearch"])  # a rule added mid-session holds from the next request on
    await session.send("second")
    assert server_tool(server.requests[-2]) == SEARCH and server_tool(server.requests[-1]) is None


async def test_research_children_get_it_and_others_do_not(server, make_session):
    session, _ = make_session(web_search="true")
    types = session.subagents.agent_types
    assert "web_search" in types["explore"].select(session.tools)
    assert "web_search" in types["general-purpose"].select(session.tools)
    assert "web_search" not in types["bash"].select(session.tools)


async def test_an_endpoint_that_refuses_it_goes_on_without_it(server, make_session):
    server.web_search = False
    server.script(text("hi"))
    session, recorder = make_session(web_search="true")
    await session.send("hello")
    refused, sent = server.requests[-2:]
    assert server_tool(refused) == SEARCH and server_tool(sent) is None
    assert session.last_text() == "hi" and "endpoint refused it" in session.llm.web_search_off
    assert any(isinstance(e, Notice) and "Web search is off" in e.text for e in recorder.events)


def test_the_setting_takes_true_false_or_auto_and_says_so_otherwise():
    import pytest

    from agentcli.config import ConfigError, Settings

    settings = Settings()
    settings.merge({"web_search": True}, "config.toml")
    assert settings.web_search == "true"
    settings.merge({"web_search": "auto"}, "config.toml")
    assert settings.web_search == "auto"
    with pytest.raises(ConfigError, match=r"^config.toml: web_search must be true, false or \"auto\", not 'maybe'.$"):
        settings.merge({"web_search": "maybe"}, "config.toml")
