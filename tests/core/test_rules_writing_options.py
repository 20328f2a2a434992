"""An allow rule written for reading never covers an option that writes a file.

The approval flow records ``bash(git diff *)`` for a harmless ``git diff``; the same rule must
not let ``git diff --output=/anywhere`` write outside the workspace, nor ``sort -o``, ``sed -i``,
``tee`` or ``find -delete`` change files under a read-only rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.core.policy.rules import split_command
from tests.core.test_permissions import results_of
from tests.fakes.anthropic_server import reply, text, tool_use_block


@pytest.mark.parametrize(
    "command, writes",
    [
        ("git diff --output=/tmp/x", ("--output",)),
        ("git diff --output /tmp/x", ("--output",)),
        ("git log -p --output=a.patch", ("--output",)),
        ("sort -o out.txt in.txt", ("-o",)),
        ("sed -i s/a/b/ f.txt", ("-i",)),
        ("sed -ni p f.txt", ("-i",)),
        ("curl -sSLo page.html http://localhost", ("-o",)),
        ("echo hi | tee notes.txt", ("tee",)),
        ("find . -name '*.pyc' -delete", ("-delete",)),
        ("git format-patch -o /tmp/patches HEAD~1", ("-o",)),
        ("echo x > f.txt", (">",)),
    ],
)
def test_options_that_write_files_are_recognised(command: str, writes: tuple[str, ...]):
    assert [part.writes for part in split_command(command).commands if part.writes] == [writes]


@pytest.mark.parametrize(
    "command",
    [
        "git diff --stat",
        "sort -rn in.txt",
        "sed -n 1,5p f.txt",
        "grep -o foo f.txt",
        "ps -o pid,cmd",
        "find . -name '*.py'",
        "wget -qO- http://localhost",
    ],
)
def test_reading_commands_are_not_taken_for_writes(command: str):
    assert not split_command(command).writes_file


async def test_a_read_only_rule_does_not_let_git_diff_write_outside(
    server, make_session, repo: Path, tmp_path_factory: pytest.TempPathFactory
):
    outside = tmp_path_factory.mktemp("outside")
    (repo / "src" / "app" / "auth.py").write_text("changed\n")
    server.script(
        reply(
            tool_use_block("bash", {"command": f"git diff --output={outside}/stolen.patch"}),
            tool_use_block("bash", {"command": f"git diff --output {outside}/second.patch"}),
            tool_use_block("bash", {"command": "git diff --stat"}),
            tool_use_block("bash", {"command": "sort -o README.md README.md"}),
        ),
        text("ok"),
    )
    session, _ = make_session(permissions={"allow": ["bash(git diff *)", "bash(sort *)"]})
    await session.send("show the diff")
    first, second, stat, sort = results_of(server)
    assert first[0] and "`--output`" in first[1], first
    assert second[0] and "`--output`" in second[1], second
    assert not stat[0] and "auth.py" in stat[1]  # the read-only use is still allowed
    assert sort[0] and "`-o`" in sort[1]
    assert list(outside.iterdir()) == []


async def test_a_rule_that_names_the_option_allows_it(server, make_session, repo: Path):
    server.script(reply(tool_use_block("bash", {"command": "git diff --output=changes.patch"})), text("ok"))
    session, _ = make_session(permissions={"allow": ["bash(git diff --output=changes.patch)"]})
    await session.send("save the diff")
    [(is_error, _)] = results_of(server)
    assert not is_error and (repo / "changes.patch").exists()
