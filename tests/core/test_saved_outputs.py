"""A tool result cut for length points at its full copy, and read_file reads that copy without asking.

The allowance is exact: this session's outputs folder, after symlinks are followed. Each attack below
is a read a hostile model could try through it, in -p, where anything that would ask is refused.
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.anthropic_server import reply, text, tool_result_text, tool_results, tool_use, tool_use_block
from tests.narrow import found

SEQ = {"allow": ["bash(seq *)"]}  # the one command these runs may make without asking
SAVED = re.compile(r"saved to (\S+?);")


def last_results(body: dict[str, Any]) -> list[str]:
    return [tool_result_text(block) for block in tool_results(body)]


async def test_the_model_pages_through_a_long_output_in_p_without_approval(server, make_session):
    saved: list[str] = []

    def read_the_end(body: dict[str, Any]):
        [result] = last_results(body)
        saved.append(found(SAVED, result).group(1))
        return tool_use("read_file", {"path": saved[0], "offset": 59_990, "limit": 11})

    server.script(tool_use("bash", {"command": "seq 1 60000"}), read_the_end, text("The last number is 60000."))
    session, _ = make_session(permissions=SEQ)  # headless: a read that would ask is refused
    await session.send("What does seq 1 60000 end with?")
    note = last_results(server.requests[1])[0]
    assert "read_file reads it without asking for approval: 60,000 lines, 2000 at a time" in note
    assert "pass offset and limit to page through it" in note
    [read] = tool_results(server.requests[2])
    assert not read.get("is_error"), tool_result_text(read)
    assert " 60000\t60000\n[Showed lines 59990-60000 of 60,000, the end of the file" in tool_result_text(read)
    assert saved[0].startswith(str(session.store.output_dir))
    server.assert_no_rejections()


async def test_the_allowance_reaches_no_other_file(server, make_session, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-OUTSIDE\n")
    session, _ = make_session(permissions=SEQ)
    other = session.store.output_dir.parent.parent / "20260101-000000-other" / "outputs"
    other.mkdir(parents=True)
    (other / "toolu_other.txt").write_text("ANOTHER-SESSIONS-OUTPUT\n")

    def attack(body: dict[str, Any]):
        [result] = last_results(body)
        mine = found(SAVED, result).group(1)
        folder = mine.rsplit("/", 1)[0]
        (session.store.output_dir / "link.txt").symlink_to(secret)  # planted in this session's own folder
        (session.store.output_dir / "sub").mkdir()
        (session.store.output_dir / "sub" / "deeper.txt").write_text("NOT-A-COPY\n")
        return reply(
            *(
                tool_use_block("read_file", {"path": path})
                for path in (
                    str(other / "toolu_other.txt"),  # another session's output
                    f"{folder}/../../20260101-000000-other/outputs/toolu_other.txt",  # the same, by climbing out
                    f"{folder}/link.txt",  # a symlink in this session's folder, to a file elsewhere
                    f"{folder}/sub/deeper.txt",  # below the folder, not in it
                    f"{folder}/..",  # the session folder itself
                    str(session.store.main_path),  # this session's transcript, beside the outputs folder
                )
            ),
            tool_use_block("grep", {"pattern": "1", "path": mine}),
        )  # only read_file has the allowance

    server.script(tool_use("bash", {"command": "seq 1 60000"}), attack, text("I could not read them."))
    await session.send("go")
    results = tool_results(server.requests[2])
    assert len(results) == 7
    for block in results:
        shown = tool_result_text(block)
        assert block.get("is_error"), shown
        assert "needs approval" in shown and "outside the workspace" in shown, shown
        assert not any(word in shown for word in ("TOP-SECRET", "ANOTHER-SESSIONS", "NOT-A-COPY"))
    server.assert_no_rejections()
