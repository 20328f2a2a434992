"""What the splitter says a line runs is what bash runs.

Lines are generated from a small grammar of words, quotes, escapes, comments, separators,
substitutions and redirections, many of them tricky on purpose ($'...', a quote inside a comment,
a lone quote, line continuations). Real bash runs each one with a PATH of stub programs that log
their argv, and the splitter must either mark the line as not understood or name exactly what
ran: every command that ran is one it listed (with the same words, where it says it knows them),
and every command it listed with known words ran.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcli.core.policy.rules import split_command

PROGRAMS = ("a", "b", "c")
STUBS = PROGRAMS + ("time",)  # `time` is a program after a pipe, a keyword elsewhere
BASH = shutil.which("bash") or "/bin/bash"
# One write per run, so stubs running side by side in a pipeline never interleave their lines.
STUB = """#!/bin/sh
line=${0##*/}
for w in "$@"; do line="$line\037$w"; done
printf '%s\036' "$line" >> "$STUB_LOG"
"""


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    place = tmp_path_factory.mktemp("stubs")
    (place / "bin").mkdir()
    for name in STUBS:
        stub = place / "bin" / name
        stub.write_text(STUB)
        stub.chmod(0o755)
    (place / "work").mkdir()
    return place


def ran(line: str, place: Path) -> list[tuple[str, ...]]:
    """The argv of every stub that ``bash -c line`` ran, in order."""
    log = place / "log"
    log.write_bytes(b"")
    read, write = os.pipe()
    os.set_inheritable(write, True)
    try:
        # Every process the line starts holds the pipe's write end, so its EOF says all of them are gone.
        proc = subprocess.Popen(
            [BASH, "-c", line],
            cwd=place / "work",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write,),
            env={
                "PATH": str(place / "bin"),
                "STUB_LOG": str(log),
                "LC_ALL": "C",
                # a command that is not found succeeds, so `&&` goes on as the splitter assumes
                "BASH_FUNC_command_not_found_handle%%": "() { return 0; }",
            },
        )
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as pipe:
        pipe.read()
    proc.wait(timeout=60)
    text = log.read_bytes().decode("utf-8", "surrogateescape")
    return [tuple(entry.split("\x1f")) for entry in text.split("\x1e") if entry]


def check(line: str, place: Path) -> bool:
    """Assert the splitter agrees with bash on ``line``; False when it marks the line not understood."""
    parsed = split_command(line)
    if parsed.unknown:
        return False
    predicted = [c for c in parsed.commands if c.words and (c.program in STUBS or c.words[0] is None)]
    actual = ran(line, place)
    seen = f"line={line!r}, listed={[c.words for c in predicted]}, ran={actual}"
    for argv in actual:
        assert any(_covers(c.words, argv) for c in predicted), f"bash ran {argv}, not listed: {seen}"
    for command in predicted:
        if None not in command.words:
            assert tuple(command.words) in actual, f"{command.words} was listed but did not run: {seen}"
    return True


def _covers(words: tuple[str | None, ...], argv: tuple[str, ...]) -> bool:
    if None not in words:
        return tuple(words) == argv
    return words[0] is None or words[0] == argv[0]  # words known only at run time may split into several


# ---------------------------------------------------------------- the grammar

PIECES = [
    "x",
    "y1",
    "-n",
    "--o=v",
    "#",
    "a#b",
    "'q;r'",
    "'#'",
    "'a'\"b\"",
    '"d q"',
    '"\\""',
    '"\\\\"',
    '"$"',
    "$'\\x41'",
    "$'\\\\'",
    "$'a\\'b'",
    "$'\\\\\\''",
    "$'\\x4'",
    "$'\\0101'",
    "$'\\047'",
    "$'\\''",
    "$'a\\nb'",
    "$'\\\\'",
    "$'#'",
    "\\;",
    "\\#",
    "\\'",
    '\\"',
    "\\ ",
    "\\\\",
    "'",
    '"',
    "$((1+2))",
    "{",
    "}",
    "!",
    "=",
    "x=1",
    "2>&1",
    ">/dev/null",
    "\\\n",
    "'\n'",
    '"a\nb"',
    "~",
    "%",
    "^",
    ",",
    "a,b",
    "--",
    "$?",
    "$#",
    "'$(a)'",
    '"\'"',
]
SEPARATORS = [" ; ", " && ", " | ", "\n", " & ", ";", "|", " |& "]
COMMENTS = ["", "", "", " #", " # '", ' # "', " #'x", " # $(a)", " #\\"]


@st.composite
def commands(draw: st.DrawFn, depth: int = 0) -> str:
    program = draw(st.sampled_from(PROGRAMS))
    program = draw(st.sampled_from([program, f"'{program}'", f'"{program}"', f"\\{program}", f"$'{program}'"]))
    prefix = draw(st.sampled_from(["", "", "x=1 ", "time "]))
    args = draw(st.lists(st.sampled_from(PIECES), max_size=4))
    if depth < 2 and draw(st.integers(0, 5)) == 0:
        inner = draw(lines(depth + 1))
        args.append(draw(st.sampled_from([f"$({inner})", f"`{inner}`", f'"$({inner})"'])))
    glue = draw(st.sampled_from([" ", " ", " ", "  ", "\t"]))
    return prefix + glue.join([program, *args])


@st.composite
def lines(draw: st.DrawFn, depth: int = 0) -> str:
    parts = [draw(commands(depth))]
    for _ in range(draw(st.integers(0, 3))):
        if depth < 2 and draw(st.integers(0, 6)) == 0:
            group = draw(lines(depth + 1))
            parts.append(draw(st.sampled_from([f"( {group} )", f"{{ {group}; }}", f"if {group}; then {group}; fi"])))
        else:
            parts.append(draw(commands(depth)))
    out = parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from(COMMENTS)) if out and not out.endswith("\\") else ""
        out += draw(st.sampled_from(SEPARATORS)) + part
    return out + draw(st.sampled_from(COMMENTS))


@settings(
    deadline=None,
    derandomize=True,
    database=None,  # max_examples: the profile (tests/conftest.py)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(line=lines())
def test_the_splitter_lists_what_bash_runs(line: str, stubs: Path):
    check(line, stubs)


@pytest.mark.parametrize(
    "line",
    [
        "a x; b 'q;r' && c",
        "a $'\\'' ; b #'",
        "a #'\nb\n#'",
        'a #"\nb\n#"',
        "a \\; b \\# c",
        "a $'\\x41' $'\\047' $'a\\nb'",
        "'a' \"b\" $'c' | \\b",
        "x=1 a; time b -n",
        "a $(b x) `c y`",
        "( a ) && { b; } ; if c; then a; fi",
        "a \\\n b",
        "a >/dev/null 2>&1 x",
        "a <<'E'\n$(b)\nE\nc",
        "a <<E | b\nx\nE",
        "a <<-E\n\tE\nb",
        "a | time b",
        "for i in 1 2; do a $i; done",
    ],
)
def test_lines_the_splitter_understands_agree_with_bash(line: str, stubs: Path):
    assert check(line, stubs), f"{line!r} should be understood: {split_command(line).unknown}"


@pytest.mark.parametrize(
    "line",
    [
        "a <<E\n E\nb\nE\nc",  # tree-sitter ends the heredoc at " E", bash does not
        "a <<E\nE \nb\nE",
        "a \\  #",  # tree-sitter drops an escaped space that starts a word
        "a $'\\\\' ; b #'",  # and ends this $'...' at the last quote
        "a\u00a0x",  # bash does not split words at a no-break space
        "a ' $'\\x41' # '",  # tree-sitter reads two words here, bash one
    ],
)
def test_lines_read_differently_by_tree_sitter_and_bash_are_not_understood(line: str, stubs: Path):
    assert not check(line, stubs)
