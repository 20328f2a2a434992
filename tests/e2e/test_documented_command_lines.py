"""The command lines the README and docs/ show for stream-json work as written (they carry --verbose,
which stream-json needs, as in Claude Code); and --help's description names --demo."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli import cli
from agentcli.scripting import check_script_flags
from tests.fakes.anthropic_server import text

REPO = Path(__file__).resolve().parents[2]
SHOWN = re.compile(r"agentcli [^`#|\n]*--output-format[ =]stream-json[^`#|\n]*")


def shown_command_lines() -> list[tuple[str, str]]:
    return [
        (f"{doc.relative_to(REPO)}", match.group(0).strip())
        for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        for match in SHOWN.finditer(doc.read_text())
    ]


def test_the_docs_show_stream_json_command_lines():
    shown = {where for where, _ in shown_command_lines()}
    assert {"README.md", "docs/scripting.md"} <= shown


@pytest.mark.parametrize("where, line", shown_command_lines())
def test_every_shown_stream_json_command_line_passes_the_flag_checks(where, line):
    args = cli.build_parser().parse_args(shlex.split(line)[1:])
    cli.first_prompt(args)
    check_script_flags(args)  # raises UsageError, e.g. "--output-format stream-json needs --verbose"
    assert args.headless, f"{where}: {line}"


def test_the_readme_stream_json_line_runs_as_written(server, api_env, repo):
    [line] = [line for where, line in shown_command_lines() if where == "README.md"]
    server.script(text("Auth is in src/app/auth.py."))
    done = subprocess.run(
        [sys.executable, "-m", "agentcli", *shlex.split(line)[1:]],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(one) for one in done.stdout.splitlines()]
    assert lines[0]["type"] == "system" and lines[-1]["type"] == "result"
    assert lines[-1]["result"] == "Auth is in src/app/auth.py."


def test_help_names_the_demo_in_its_description():
    description = " ".join(cli.build_parser().format_help().split("options:")[0].split())  # unwrapped
    assert "agentcli --demo" in description and "no key" in description
