"""Before a question is asked, the call is checked: one bound to fail fails without a question, and an
edit or a write asks with the diff it would make (only changed lines, with context, capped)."""

from __future__ import annotations

from typing import Any

from agentcli.core.events import ALLOW_ONCE, ApprovalRequested
from tests.core.test_permissions import answer_with, results_of
from tests.fakes.anthropic_server import reply, text, tool_use, tool_use_block

LINES = "".join(f"line {n}\n" for n in range(1, 31))


async def test_an_edit_that_cannot_apply_fails_without_a_question(server, make_session, repo):
    server.script(
        tool_use("read_file", {"path": "README.md"}),
        reply(
            tool_use_block("edit_file", {"path": "README.md", "old_string": "Nope", "new_string": "x"}),
            tool_use_block("edit_file", {"path": "README.md", "old_string": "app", "new_string": "x"}),
            tool_use_block("edit_file", {"path": "README.md", "old_string": "app", "new_string": "app"}),
        ),
        text("ok"),
    )
    session, events = make_session(interactive=True)
    answer_with(session, events, [])  # a question would pop from an empty list and fail the call
    await session.send("edit the readme")
    assert events.of(ApprovalRequested) == []
    missing, twice, same = results_of(server, 2)
    assert missing[0] and "old_string was not found in README.md" in missing[1]
    assert twice[0] and "old_string matches 2 times in README.md" in twice[1]
    assert same[0] and "identical" in same[1]
    assert (repo / "README.md").read_text() == "# Demo app\n\nA tiny app for tests.\n"


async def test_a_write_to_a_file_changed_since_it_was_read_fails_without_a_question(server, make_session, repo):
    def write_after_someone_else(body: dict[str, Any]) -> Any:
        (repo / "README.md").write_text("# Changed by the user\n")
        return tool_use("write_file", {"path": "README.md", "content": "mine\n"})

    server.script(tool_use("read_file", {"path": "README.md"}), write_after_someone_else, text("ok"))
    session, events = make_session(interactive=True)
    answer_with(session, events, [])
    await session.send("rewrite the readme")
    assert events.of(ApprovalRequested) == []
    [(is_error, output)] = results_of(server, 2)
    assert is_error and "README.md changed since you read it" in output
    assert (repo / "README.md").read_text() == "# Changed by the user\n"


async def test_an_edit_asks_with_only_its_changed_lines_and_their_context(server, make_session, repo):
    (repo / "lines.txt").write_text(LINES)
    server.script(
        tool_use("read_file", {"path": "lines.txt"}),
        tool_use(
            "edit_file",
            {
                "path": "lines.txt",
                "old_string": "line 14\nline 15\nline 16\n",
                "new_string": "line 14\nline fifteen\nline 16\n",
            },
        ),
        text("ok"),
    )
    session, events = make_session(interactive=True)
    answer_with(session, events, [ALLOW_ONCE])
    await session.send("edit")
    [asked] = events.of(ApprovalRequested)
    assert asked.diff == (
        "@@ -12,7 +12,7 @@",
        " line 12",
        " line 13",
        " line 14",
        "-line 15",
        "+line fifteen",
        " line 16",
        " line 17",
        " line 18",
    )
    assert "line fifteen" in (repo / "lines.txt").read_text()


async def test_a_write_asks_with_a_new_file_s_head_and_tail_or_an_overwrite_s_diff(server, make_session, repo):
    (repo / "lines.txt").write_text(LINES)
    new = "".join(f"row {n}\n" for n in range(1, 46))
    server.script(
        tool_use("read_file", {"path": "lines.txt"}),
        reply(
            tool_use_block("write_file", {"path": "new/rows.txt", "content": new}),
            tool_use_block("write_file", {"path": "lines.txt", "content": LINES.replace("line 2\n", "")}),
        ),
        text("ok"),
    )
    session, events = make_session(interactive=True)
    answer_with(session, events, [ALLOW_ONCE, ALLOW_ONCE])
    await session.send("write")
    created, overwritten = events.of(ApprovalRequested)
    assert created.diff[0] == "@@ -0,0 +1,45 @@"
    assert created.diff[1:21] == tuple(f"+row {n}" for n in range(1, 21))
    assert created.diff[21] == "… 15 more lines" and created.diff[22:] == tuple(f"+row {n}" for n in range(36, 46))
    assert overwritten.diff == ("@@ -1,5 +1,4 @@", " line 1", "-line 2", " line 3", " line 4", " line 5")


async def test_a_long_diff_is_capped_and_says_how_much_is_left(server, make_session, repo):
    (repo / "lines.txt").write_text(LINES * 10)
    server.script(
        tool_use("read_file", {"path": "lines.txt"}),
        tool_use("write_file", {"path": "lines.txt", "content": LINES.upper() * 10}),
        text("ok"),
    )
    session, events = make_session(interactive=True)
    answer_with(session, events, [ALLOW_ONCE])
    await session.send("shout")
    [asked] = events.of(ApprovalRequested)
    assert len(asked.diff) == 61 and asked.diff[-1].startswith("… ") and "more lines of the diff" in asked.diff[-1]
