"""A bash allow rule covers a write only when its pattern names what is written.

docs/permissions.md promises it: `git diff --output=x` asks under `bash(git diff *)`, `tee FILE` under
`bash(tee *)`, `npm test > ~/.bashrc` under `bash(npm test > *)`. Each case below is a way the bash reader
knows a command writes a file (a redirection, tee, an option such as `--output` or `-o`, a sed script, find's
`-delete` and `-exec`, `cp`, `mv`, `dd of=`); under broad rules it asks, and under the rule that spells it out it
runs. The last tests perform the writes through a real session: a broad rule leaves the file unwritten.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from agentcli.core.policy import bash_effects
from agentcli.core.policy.permissions import Permissions
from agentcli.core.policy.rules import RuleSet, split_command
from agentcli.core.tools.shell import Bash
from tests.core.test_permissions import results_of
from tests.fakes.anthropic_server import reply, text, tool_use_block

URL = "http://127.0.0.1:9/page.html"
WRITE_TARGETS = [  # (the line, broad rules that must not cover it); `bash(LINE)` names it and covers it
    # redirections
    ("echo x > notes.txt", ["bash(echo *)", "bash(echo x > *)", "bash(echo * > notes*)", "bash(echo x *)"]),
    ("echo x >> notes.txt", ["bash(echo *)", "bash(echo x >> *)"]),
    ("echo x >| notes.txt", ["bash(echo *)", "bash(echo x >| *)"]),
    ("echo x &> notes.txt", ["bash(echo *)", "bash(echo x &> *)"]),
    ("echo x &>> notes.txt", ["bash(echo *)", "bash(echo x &>> *)"]),
    ("echo x >& notes.txt", ["bash(echo *)", "bash(echo x >& *)"]),
    ("echo x 2> notes.txt", ["bash(echo *)", "bash(echo x 2> *)"]),
    ("npm test > out.log", ["bash(npm test *)", "bash(npm test > *)", "bash(npm *)", "bash(npm test > out*)"]),
    ("git status 2>&1 > out.log", ["bash(git status *)", "bash(git status 2>&1 > *)"]),
    # tee: every file argument
    ("tee notes.txt", ["bash(tee *)", "bash(tee notes*)"]),
    ("tee -a notes.txt", ["bash(tee *)", "bash(tee -a *)"]),
    ("tee -- -notes.txt", ["bash(tee *)", "bash(tee -- *)"]),
    ("tee ok.txt notes.txt", ["bash(tee ok.txt *)", "bash(tee * notes.txt)"]),
    ("tee -", ["bash(tee *)"]),  # a file named "-"
    # long options, in GNU's abbreviations too
    ("git diff --output=changes.patch", ["bash(git diff *)", "bash(git diff --output=*)"]),
    ("git diff --output changes.patch", ["bash(git diff *)", "bash(git diff --output *)"]),
    ("git diff --outp=changes.patch", ["bash(git diff *)", "bash(git diff --outp*)"]),
    ("git log -p --output=changes.patch", ["bash(git log *)", "bash(git log -p --output=*)"]),
    ("sort --output=out.txt in.txt", ["bash(sort *)", "bash(sort --output=* in.txt)"]),
    ("tool --output-file=out.txt", ["bash(tool *)", "bash(tool --output-file=*)"]),
    (f"wget --output-document=page.html {URL}", ["bash(wget *)", "bash(wget --output-document=* *)"]),
    (
        "git format-patch --output-directory patches -1 HEAD",
        ["bash(git format-patch *)", "bash(git format-patch --output-directory * -1 HEAD)"],
    ),
    ("tool --out-file=out.txt", ["bash(tool *)"]),
    ("tool --outfile=out.txt", ["bash(tool *)"]),
    ("tool --out out.txt", ["bash(tool *)", "bash(tool --out *)"]),
    ("pytest --log-file=run.log", ["bash(pytest *)", "bash(pytest --log-file=*)"]),
    ("tool --logfile run.log", ["bash(tool *)", "bash(tool --logfile *)"]),
    ("sed --in-place s/a/b/ f.txt", ["bash(sed *)", "bash(sed --in-place *)", "bash(sed --in-place s/a/b/ *)"]),
    (f"curl --cookie-jar jar.txt {URL}", ["bash(curl *)", "bash(curl --cookie-jar * *)"]),
    (f"curl --dump-header h.txt {URL}", ["bash(curl *)", "bash(curl --dump-header * *)"]),
    (f"curl --remote-name {URL}", ["bash(curl *)", "bash(curl --remote-name *)"]),
    # short options
    ("sort -o out.txt in.txt", ["bash(sort *)", "bash(sort -o * in.txt)"]),
    ("sort -oout.txt in.txt", ["bash(sort *)", "bash(sort -o* in.txt)"]),
    ("sed -i s/a/b/ f.txt", ["bash(sed *)", "bash(sed -i *)", "bash(sed -i s/a/b/ *)"]),
    ("sed -ni p f.txt", ["bash(sed *)", "bash(sed -ni p *)"]),
    ("perl -i -pe s/a/b/ f.txt", ["bash(perl *)", "bash(perl -i -pe s/a/b/ *)"]),
    (f"curl -o page.html {URL}", ["bash(curl *)", "bash(curl -o * *)"]),
    (f"curl -sSLo page.html {URL}", ["bash(curl *)", "bash(curl -sSLo * *)"]),
    (f"curl -O {URL}", ["bash(curl *)", "bash(curl -O *)"]),
    (f"curl -D h.txt {URL}", ["bash(curl *)", "bash(curl -D * *)"]),
    (f"curl -c jar.txt {URL}", ["bash(curl *)", "bash(curl -c * *)"]),
    (f"wget -O page.html {URL}", ["bash(wget *)", "bash(wget -O * *)"]),
    (f"wget -o log.txt {URL}", ["bash(wget *)", "bash(wget -o * *)"]),
    (f"wget -a log.txt {URL}", ["bash(wget *)", "bash(wget -a * *)"]),
    ("cc -o prog main.c", ["bash(cc *)", "bash(cc -o * main.c)"]),
    ("gcc -o prog main.c", ["bash(gcc *)", "bash(gcc -o * main.c)"]),
    ("g++ -o prog main.cc", ["bash(g++ *)", "bash(g++ -o * main.cc)"]),
    ("clang -o prog main.c", ["bash(clang *)", "bash(clang -o * main.c)"]),
    ("c++ -o prog main.cc", ["bash(c++ *)", "bash(c++ -o * main.cc)"]),
    ("git format-patch -o patches -1 HEAD", ["bash(git format-patch *)", "bash(git format-patch -o * -1 HEAD)"]),
    ("git archive -o out.tar HEAD", ["bash(git archive *)", "bash(git archive -o * HEAD)"]),
    ("git bundle create out.bundle HEAD", ["bash(git bundle *)", "bash(git bundle create * HEAD)"]),
    # sed scripts that write a file or run a command, and script files
    ("sed -n 'w out.txt' f.txt", ["bash(sed *)", "bash(sed -n *)", "bash(sed -n 'w out.txt' *)"]),
    ("sed -n 's/a/b/w out.txt' f.txt", ["bash(sed *)", "bash(sed -n * f.txt)"]),
    ("sed '1e touch x' f.txt", ["bash(sed *)", "bash(sed '1e touch *' f.txt)"]),
    ("sed -f script.sed f.txt", ["bash(sed *)", "bash(sed -f script.sed *)"]),
    ("sed --file=script.sed f.txt", ["bash(sed *)", "bash(sed --file=script.sed *)"]),
    # find: files it writes, deletes, or commands it runs
    ("find . -name x.pyc -delete", ["bash(find *)", "bash(find . -name * -delete)"]),
    ("find . -exec rm {} ;", ["bash(find *)", "bash(find . -exec *)"]),
    ("find . -execdir rm {} ;", ["bash(find *)"]),
    ("find . -ok rm {} ;", ["bash(find *)"]),
    ("find . -okdir rm {} ;", ["bash(find *)"]),
    ("find . -fprint out.txt", ["bash(find *)", "bash(find . -fprint *)"]),
    ("find . -fprint0 out.txt", ["bash(find *)", "bash(find . -fprint0 *)"]),
    ("find . -fprintf out.txt %p", ["bash(find *)", "bash(find . -fprintf * %p)"]),
    ("find . -fls out.txt", ["bash(find *)", "bash(find . -fls *)"]),
    # programs whose file arguments are written
    ("cp a.txt b.txt", ["bash(cp *)", "bash(cp a.txt *)"]),
    ("cp -r src -- dst", ["bash(cp *)", "bash(cp -r src -- *)"]),
    ("mv a.txt b.txt", ["bash(mv *)", "bash(mv * b.txt)"]),
    ("dd if=a.txt of=b.txt", ["bash(dd *)", "bash(dd if=a.txt *)", "bash(dd if=a.txt of=*)"]),
    # behind a program that runs the command in its later words
    ("sudo tee /etc/hosts", ["bash(sudo *)", "bash(sudo tee *)"]),
    ("timeout 5 sort -o out.txt in.txt", ["bash(timeout 5 sort *)", "bash(timeout *)"]),
    ("env LC_ALL=C nice cp a.txt b.txt", ["bash(env LC_ALL=C nice cp *)"]),
    ("xargs cp -t dst", ["bash(xargs *)", "bash(xargs cp *)"]),
]


def decide(line: str, rule: str) -> tuple[str, str]:
    permissions = Permissions(rules=RuleSet.parse({"allow": [rule]}))
    decision = permissions.decide(Bash(), {"command": line}, None)  # type: ignore[arg-type]
    return decision.verdict, decision.headless_refusal("bash", Path.cwd()) if decision.verdict == "ask" else ""


@pytest.mark.parametrize("line, broad", WRITE_TARGETS)
def test_a_rule_covers_a_write_only_when_it_names_what_is_written(line: str, broad: list[str]):
    [part] = split_command(line).commands
    assert part.writes_file, line
    for rule in broad:
        verdict, refusal = decide(line, rule)
        assert verdict == "ask" and "writes to a file" in refusal, (rule, line, refusal)
        assert f"--allowedTools {shlex.quote(f'bash({part.text})')}" in refusal or "*" in line, refusal  # it names it
    assert decide(line, f"bash({part.text})") == ("allow", ""), line  # as written, `>& f` read as `>&f`


def test_the_cases_cover_every_write_the_bash_reader_knows():
    """A new writing option or program in bash_effects needs its case above."""
    marks = {
        (os.path.basename(line.split()[0]), mark)
        for line, _ in WRITE_TARGETS
        for part in split_command(line).commands
        for mark in part.writes
    }
    seen = {mark for _, mark in marks}
    assert {f"--{long}" for long in bash_effects._WRITING_LONG} <= seen
    for program, options in bash_effects._WRITING_SHORT.items():
        assert {(program, option) for option in options} <= marks, program
    assert {("git", option) for options in bash_effects._GIT_SHORT.values() for option in options} <= marks
    assert {(program, program) for program in bash_effects._FILE_WRITERS} <= marks
    assert {">", "of=", "bundle create", "-f", "--file=script.sed"} <= seen


def test_a_pipeline_asks_for_its_unnamed_tee_and_runs_under_the_rule_that_names_it():
    assert decide("echo x | tee notes.txt", "bash(tee *)")[0] == "ask"
    assert decide("echo x | tee notes.txt", "bash(tee notes.txt)") == ("allow", "")
    assert decide("git log | tee -a ~/.bashrc", "bash(git log *)")[0] == "ask"


def test_a_write_by_the_group_around_a_command_is_named_by_no_rule_of_its_own():
    for rule in ("bash(ls *)", "bash(ls > out.txt)", "bash(ls)"):
        assert decide("{ ls; } > out.txt", rule)[0] == "ask", rule


def test_reading_uses_of_the_same_programs_still_run_under_broad_rules():
    for line, rule in [
        ("git diff --stat", "bash(git diff *)"),
        ("sort -rn in.txt", "bash(sort *)"),
        ("sed -n 1,5p f.txt", "bash(sed *)"),
        ("find . -name x.py", "bash(find *)"),
        ("tee --help", "bash(tee *)"),
        ("dd if=a.txt", "bash(dd *)"),
        ("ls > /dev/null", "bash(ls *)"),
        ("git status 2>&1", "bash(git status *)"),
    ]:
        assert decide(line, rule) == ("allow", ""), line


# ---------------------------------------------------------------- performed through a session

PERFORMED = [  # (the line, a broad rule, the file it writes in the workspace)
    ("echo planted | tee notes.txt", "bash(tee *)", "notes.txt"),
    ("echo planted | tee -a notes.txt", "bash(tee -a *)", "notes.txt"),
    ("git status > notes.txt", "bash(git status > *)", "notes.txt"),
    ("git diff HEAD --output=notes.txt", "bash(git diff HEAD --output=*)", "notes.txt"),
    ("sort -o notes.txt README.md", "bash(sort -o *)", "notes.txt"),
    ("sed -i s/Demo/Planted/ README.md", "bash(sed -i s/Demo/Planted/ *)", "README.md"),
    ("cp README.md notes.txt", "bash(cp *)", "notes.txt"),
    ("mv README.md notes.txt", "bash(mv README.md *)", "notes.txt"),
    ("dd if=README.md of=notes.txt", "bash(dd if=README.md *)", "notes.txt"),
    ("find . -name README.md -delete", "bash(find . -name README.md *)", "README.md"),
    ("git archive -o notes.txt HEAD", "bash(git archive *)", "notes.txt"),
]


async def run(server, make_session, line: str, *rules: str) -> tuple[bool, str]:
    """One headless session that runs ``line`` under the allow rules: the tool result."""
    start = len(server.requests)
    server.script(reply(tool_use_block("bash", {"command": line})), text("done"))
    session, _ = make_session(permissions={"allow": list(rules)})
    await session.send("go")
    [result] = results_of(server, start + 1)
    return result


@pytest.mark.parametrize("line, broad, written", PERFORMED)
async def test_a_broad_rule_leaves_the_file_unwritten_and_the_naming_rule_writes_it(
    server, make_session, repo: Path, line: str, broad: str, written: str
):
    before = (repo / written).read_bytes() if (repo / written).exists() else None
    is_error, output = await run(server, make_session, line, broad)
    assert is_error and "writes to a file" in output, output
    assert ((repo / written).read_bytes() if (repo / written).exists() else None) == before, output
    naming = [f"bash({part.text})" for part in split_command(line).commands if part.writes_file]
    is_error, output = await run(server, make_session, line, *naming)
    assert not is_error, output
    assert ((repo / written).read_bytes() if (repo / written).exists() else None) != before, output
