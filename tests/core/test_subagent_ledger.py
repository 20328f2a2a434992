"""The list of children survives a resume and a compaction after it: the ledger names each child by id, and
`task resume` with that id still continues the child from its own history."""

from __future__ import annotations

from agentcli.core.content import readable
from agentcli.core.engine.compaction import LEDGER_HEADER
from tests.core.test_compaction import is_summarizer
from tests.fakes.anthropic_server import first_user_text, offers_tool, text, tool_use


def is_main(body):
    return offers_tool(body, "task") and not is_summarizer(body)


def is_child(body):
    return not offers_tool(body, "task") and not is_summarizer(body)


async def test_after_continue_and_compaction_the_ledger_lists_the_children_and_resume_works(
    server, make_session, resume
):
    server.when(is_summarizer, text("Summary: sa-1 found auth."))
    server.when(
        is_main,
        tool_use("task", {"description": "Find auth", "prompt": "Find where auth is handled."}),
        text("Auth is in auth.py."),
        text("Noted."),
        tool_use("task", {"description": "Callers", "prompt": "Who calls it?", "resume": "sa-1"}),
        text("views.py calls it."),
    )
    server.when(is_child, text("auth is in src/app/auth.py."), text("src/app/views.py calls handle_auth."))
    session, _ = make_session()
    await session.send("find auth")
    session.close()
    again, _ = resume(session.id)
    await again.send("anything else?")
    assert await again.compact()
    head = again.main.messages[0]["content"]
    ledger = next(readable([b]) for b in head if LEDGER_HEADER in b.get("text", ""))
    assert '- sa-1 (general-purpose, "Find auth"): done' in ledger
    result = await again.send("who calls it?")
    assert result.text == "views.py calls it."
    resumed = [b for b in server.requests if is_child(b)][-1]
    assert first_user_text(resumed) == "Find where auth is handled."  # its own history, from its first brief
    assert again.subagents.records["sa-1"].segments == 2
    server.assert_no_rejections()
