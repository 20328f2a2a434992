"""How core/policy/bash_syntax.py reads a line: words after quote removal, what it cannot tell, and when it loads."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentcli.core.policy.rules import command_rule, split_command


def test_tree_sitter_loads_at_the_first_bash_decision_not_at_startup():
    code = (
        "import sys, agentcli.core.session, agentcli.core.policy.permissions as p; print('tree_sitter' in sys.modules); "
        "from agentcli.core.tools.shell import Bash; p.Permissions().decide(Bash(), {'command': 'ls'}, None); "
        "print('tree_sitter' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize(
    "line, words",
    [
        ("git commit -m 'fix: a b'", ("git", "commit", "-m", "fix: a b")),
        ('echo "a \\" \\$ \\\\ \\x"', ("echo", 'a " $ \\ \\x')),
        ("echo $'\\x41\\101\\t' a\\ b", ("echo", "AA\t", "a b")),
        ("'r'\"m\" -rf x", ("rm", "-rf", "x")),
        ("ls src/*.py", ("ls", "src/*.py")),
        ("ls *.py ~/x {a,b}", ("ls", None, None, None)),
        ('wc -l "$f" $(date)', ("wc", "-l", None, None)),
    ],
)
def test_words_are_what_the_program_gets(line: str, words: tuple[str | None, ...]):
    [command] = [c for c in split_command(line).commands if c.words[0] == words[0]]
    assert command.words == words


@pytest.mark.parametrize(
    "line, why",
    [
        ("f() { ls; }; f", "function"),
        ("case x in x) ls;; esac", "case"),
        ("eval ls", "eval"),
        ("trap 'touch X' EXIT", "trap"),
        ("shopt -s expand_aliases; alias ls='touch X'\nls", "shopt"),
        ("echo ${x@P}", "'@'"),
        ("echo ${!x}", "'!'"),
        ("echo $((x + 1))", "arithmetic"),
        ("(( n++ ))", "arithmetic"),
        ("[[ $a -eq 1 ]]", "arithmetic"),
        ("cat <<EOF\n$HOME\nEOF", "heredoc"),
        ("declare -n r=PATH", "attribute"),
        ("a=(1 2)", "array"),
        ("echo 'unclosed", "syntax error"),
        ("set -k; ls", "set"),
        ('echo $"hi"', "two of its words"),  # tree-sitter reads $ and "hi"; bash one translated string
        ("ls <(ls) >(cat)", ""),  # understood, but command substitution always asks
        ("ls \udc80", "not valid text"),
        ("echo " + "$(" * 400 + "ls" + ")" * 400, "nests more deeply"),  # and no RecursionError
    ],
)
def test_what_is_not_modelled_is_named(line: str, why: str):
    unknown = split_command(line).unknown
    assert (why in unknown and unknown) if why else not unknown, unknown


@pytest.mark.parametrize(
    "line, writes",
    [
        ("ls > out", (">",)),
        ("ls >> out", (">",)),
        ("ls &> out", (">",)),
        ("ls >& out", (">",)),
        ("ls >|out", (">",)),
        ("> out", (">",)),
        ("{ ls; } > out", (">",)),
        ("ls 2>&1", ()),
        ("ls > /dev/null 2>&1", ()),
        ("ls >&2", ()),
        ("ls < in", ()),
    ],
)
def test_redirections_that_write_files(line: str, writes: tuple[str, ...]):
    assert tuple(dict.fromkeys(w for c in split_command(line).commands for w in c.writes)) == writes


@pytest.mark.parametrize(
    "line, rule",
    [
        ("git log --oneline -3", "bash(git log *)"),
        ("python x.py", "bash(python x.py)"),
        ("grep -n 'a b' src/app/auth.py", "bash(grep *)"),
        ("python3 -m pytest -q", "bash(python3 -m pytest *)"),
        ("python -m pip install x", "bash(python -m pip install *)"),
        ("./run.sh a", "bash(./run.sh a)"),
        ("ls *.py", ""),  # known only at run time
        ("cat <<'EOF'\nhi\nEOF", ""),  # the heredoc's text is not in any rule
        ("x=1", ""),
        ("git  status", "bash(git status *)"),
    ],
)
def test_the_rule_proposed_for_one_command(line: str, rule: str):
    [command] = split_command(line).commands
    assert command_rule(command, "bash") == rule
