"""Compaction keeps what the next turns need (issue 23, part 2): the summarizer sees long results whole up to
a share of the window, and agentcli's own ledger of reads, changes, commands and subagents follows the summary."""

from __future__ import annotations

import json
import re

import pytest

from agentcli.core.content import Message, agentcli_note, readable
from agentcli.core.engine.compaction import LEDGER_HEADER, SUMMARIZER, SUMMARY_HEADER, fair_share, head_and_tail, render
from agentcli.core.events import Compacted, Notice
from tests.fakes.anthropic_server import error, offers_tool, text, tool_use

DETAIL = "RETRY_LIMIT = 7  # the one line the next turns need"


def is_summarizer(body):
    """The summarizer's request, by agentcli's ask at its end (the conversation's own request, or the rendered one)."""
    last = body["messages"][-1]["content"]
    return any(SUMMARIZER in b.get("text", "") for b in (last if isinstance(last, list) else [{"text": last}]))


def summarizer_reply(body):
    """A summarizer that keeps the detail when it was shown it, as a model would."""
    shown = json.dumps(body["messages"])
    return text("## Summary\nconfig.py sets " + ("RETRY_LIMIT = 7 (line 990)." if DETAIL in shown else "nothing seen."))


async def test_a_long_read_reaches_the_summarizer_whole_and_the_ledger_lists_what_was_done(server, make_session, repo):
    lines = [f"value_{n} = {n}" for n in range(1, 1001)]
    lines[989] = DETAIL  # line 990, near the end of a 23,000-character read
    (repo / "config.py").write_text("\n".join(lines) + "\n")
    for n in range(8):  # later reads that keep the recent part of the history full
        (repo / f"filler_{n}.txt").write_text("".join(f"filler {n} line {i} " + "x" * 40 + "\n" for i in range(600)))

    main = [
        tool_use("read_file", {"path": "config.py"}),
        tool_use("bash", {"command": "python3 -c 'import sys; sys.exit(3)'"}),
        tool_use("task", {"description": "Find auth", "prompt": "Find where auth is handled."}),
        *[tool_use("read_file", {"path": f"filler_{n}.txt"}) for n in range(7)],
        tool_use("read_file", {"path": "filler_7.txt"}, usage={"input_tokens": 180_000}),  # nearly full
        text("RETRY_LIMIT is 7."),
    ]
    server.when(is_summarizer, summarizer_reply)
    server.when(lambda b: offers_tool(b, "task"), *main)
    server.when(lambda b: not offers_tool(b, "task"), text("Auth is in src/app/auth.py:9."))
    session, events = make_session(permission_mode="bypassPermissions")
    result = await session.send("What is the retry limit in config.py?")
    assert result.text == "RETRY_LIMIT is 7."

    [summarizer] = [b for b in server.requests if is_summarizer(b)]
    before = server.requests[server.requests.index(summarizer) - 1]  # the main agent's request that filled it
    assert summarizer["system"] == before["system"] and summarizer["tools"] == before["tools"]
    assert summarizer["tool_choice"] == {"type": "none"}  # the conversation's tools, not to be called
    assert DETAIL in json.dumps(summarizer["messages"])
    # its messages are the conversation's (the previous request's and the turn since), agentcli's ask at the end
    shared = len(before["messages"]) - 1  # the previous request's last message carries its cache breakpoint
    assert summarizer["messages"][:shared] == before["messages"][:shared]
    ask = readable([summarizer["messages"][-1]["content"][-1]])
    assert ask.startswith(SUMMARIZER)

    [compacted] = events.of(Compacted)
    final = [b for b in server.requests if offers_tool(b, "task")][-1]
    head = [b["text"] for b in final["messages"][0]["content"]]
    assert head[0] == "What is the retry limit in config.py?"
    summary = readable([{"type": "text", "text": head[1]}])
    assert head[1] == agentcli_note(summary)["text"]  # agentcli's, not the user's
    assert summary.startswith(SUMMARY_HEADER) and "RETRY_LIMIT = 7 (line 990)" in summary
    ledger = readable([{"type": "text", "text": head[2]}])
    assert head[2] == agentcli_note(ledger)["text"] and ledger.startswith(LEDGER_HEADER)
    assert '- "config.py": lines 1-1000' in ledger
    assert "- \"python3 -c 'import sys; sys.exit(3)'\": exit code 3" in ledger
    assert '- sa-1 (general-purpose, "Find auth"): done' in ledger
    assert "filler_7.txt" not in ledger  # still in the recent turns, verbatim
    assert "filler 7 line 1 " in json.dumps(final["messages"][1:])
    assert compacted.ledger["reads"]["config.py"] == [[1, 1000]]
    # the summarizer, shown the whole conversation, is told where the turns kept verbatim begin, lest it
    # summarize them too and the agent read them twice, the later ones first
    [named] = re.findall(
        r'Summarize only what comes before your read_file call with \{"path": "(filler_\d\.txt)"\}', ask
    )
    assert final["messages"][1]["role"] == "assistant"
    assert final["messages"][1]["content"][0]["input"] == {"path": named}
    server.assert_no_rejections()


async def test_a_second_compaction_keeps_one_summary_and_the_ledger_of_both(server, make_session, repo):
    server.when(is_summarizer, text("Summary one."), text("Summary two."))
    server.when(
        lambda b: not is_summarizer(b),
        tool_use("read_file", {"path": "README.md"}),
        tool_use("edit_file", {"path": "README.md", "old_string": "tiny", "new_string": "small"}),
        text("first done"),
        tool_use("read_file", {"path": "src/app/views.py"}),
        text("second done"),
    )
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("one")
    assert await session.compact()
    await session.send("two")
    assert await session.compact()
    head = [b["text"] for b in session.main.messages[0]["content"]]
    assert head[0] == "one" and len(head) == 3  # the prompt, the latest summary, the latest ledger
    assert head[1] == agentcli_note(f"{SUMMARY_HEADER}\n\nSummary two.")["text"]
    # The read went in the first compaction, the edit in the second: the ledger carries both.
    assert '"README.md": lines 1-3' in head[2] and '"README.md" (edit_file)' in head[2]
    server.assert_no_rejections()


async def test_the_ledger_outlives_a_resume(server, make_session, resume):
    server.when(is_summarizer, text("Summary one."), text("Summary two."))
    server.when(
        lambda b: not is_summarizer(b),
        tool_use("read_file", {"path": "README.md"}),
        text("first done"),
        tool_use("read_file", {"path": "src/app/views.py"}),
        text("second done"),
    )
    session, _ = make_session()
    await session.send("one")
    assert await session.compact()
    session.close()
    again, _ = resume(session.id)
    assert again.main.ledger.reads == {"README.md": [[1, 3]]}
    await again.send("two")
    assert await again.compact()
    ledger = again.main.messages[0]["content"][-1]["text"]
    assert '"README.md": lines 1-3' in ledger  # from before the resume
    server.assert_no_rejections()


async def test_a_compaction_that_frees_nothing_says_so_once_and_waits_for_the_context_to_grow(
    server, make_session, repo
):
    """At a threshold lower than the recent turns it keeps, a summary frees nothing and is dropped: once, with a
    notice, not again before every later step (the same summarizer call, sent silently each time)."""
    (repo / "big.txt").write_text("".join(f"line {i:04d} " + "y" * 60 + "\n" for i in range(1500)))
    server.when(is_summarizer, text("## Summary\nRead big.txt."))
    server.when(
        lambda b: not is_summarizer(b),
        tool_use("glob", {"pattern": "*.txt"}),
        *[tool_use("read_file", {"path": "big.txt", "offset": n * 300 + 1, "limit": 300}) for n in range(5)],
        *[tool_use("glob", {"pattern": f"*.{kind}"}) for kind in ("md", "py", "toml")],
        text("Done."),
    )
    session, events = make_session(compact_threshold=0.1)  # below what config.py accepts: the engine copes
    result = await session.send("Read big.txt")
    assert result.text == "Done."
    assert len([b for b in server.requests if is_summarizer(b)]) == 1
    assert not events.of(Compacted)  # it freed nothing, so the history stayed
    [notice] = [n for n in events.of(Notice) if "Compaction could not" in n.text]
    before, again = (float(n) for n in re.findall(r"([\d.]+)k tokens", notice.text))
    assert notice.level == "warning" and "a summary would free none" in notice.text
    assert again == pytest.approx(before + 50.0, abs=0.1)  # a quarter of the 200k window more
    server.assert_no_rejections()


def test_a_compact_threshold_that_cannot_work_is_refused_in_one_sentence(tmp_path):
    from agentcli.config import ConfigError, Settings

    with pytest.raises(ConfigError, match=r"settings.toml: 'compact_threshold' must be at least 0.3, not 0.2: "):
        Settings().merge({"compact_threshold": 0.2}, "settings.toml")
    Settings().merge({"compact_threshold": 0.3}, "settings.toml")


def test_the_summarizer_budget_cuts_only_the_longest_blocks_to_head_and_tail():
    short = "short result"
    long = "HEAD " + "m" * 50_000 + " TAIL"
    messages: list[Message] = [
        {"role": "user", "content": [{"type": "text", "text": "the question"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "x"}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": long}, {"type": "text", "text": short}],
        },
    ]
    whole = render(messages, 1_000_000)
    assert long in whole and short in whole
    tight = render(messages, 10_000)
    assert len(tight) < 10_500 and short in tight and "the question" in tight
    assert "HEAD " in tight and " TAIL" in tight and "characters cut here" in tight
    assert fair_share([1_000, 2_000, 100_000], 10_000) == 7_000 and fair_share([10, 20], 100) is None
    assert head_and_tail("abcdefghij" * 100, 600).startswith("abcdefghij")


async def test_an_endpoint_that_refuses_tool_choice_none_gets_the_rendered_summarizer_call(server, make_session):
    """The summarizer's request repeats the conversation with tool_choice none; an endpoint that refuses that is
    asked once more with the older turns rendered as text and no tools, and the compaction goes through."""
    server.when(
        is_summarizer,
        error(400, "invalid_request_error", "tool_choice: 'none' is not supported"),
        text("Summary from the rendered call."),
    )
    server.when(
        lambda b: not is_summarizer(b),
        tool_use("read_file", {"path": "README.md"}),
        tool_use("read_file", {"path": "src/app/views.py"}),
        text("first done", usage={"input_tokens": 90_000}),
    )
    session, _ = make_session()
    await session.send("one")
    assert await session.compact()
    shared, rendered = [b for b in server.requests if is_summarizer(b)]
    assert shared["tool_choice"] == {"type": "none"} and "tools" not in rendered
    assert "TOOL CALL read_file" in rendered["messages"][0]["content"][0]["text"]
    assert readable(session.main.messages[0]["content"][1]["text"]).endswith("Summary from the rendered call.")
