"""No front end recovers a number or an id from engine text: every fact it shows is an event field.

A grep over agentcli/ui/ (by syntax tree): a regular expression that matches digits or a subagent id,
a split or partition of an event's text fields, or int()/float() over a split or a match. Formatting
"Retrying in 4 s (2/8)" from typed fields is fine; reading it back is what this forbids.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentcli

UI = Path(agentcli.__file__).parent / "ui"
REGEX_CALLS = {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
SPLITS = {"split", "rsplit", "partition", "rpartition"}
PARSED = SPLITS | {"group", "groups", "groupdict"}
# Fields of events (and of the view model's items) that carry engine text.
ENGINE_TEXT = {"text", "output", "result", "error", "summary", "description", "content", "reason", "prompt"}
NUMBER_OR_ID = ("\\d", "[0-9]", "sa-")
# Justified: line mode's stream renderer tells a numbered list item ("1. ") of the answer's markdown
# from a new paragraph; it reads no number out of it.
# And the side panel, wrapping a line it built itself, keeps each duration ("1 min 08 s") whole: it reads no number.
ALLOWED = {
    ("plain/stream.py", "[-*+] |\\\\d+[.)] "),  # (file, part of the finding), not a line number
    ("tui/widgets/side_panel.py", "(?<=min) (?="),
}


def problems(source: str, name: str = "<source>") -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "re"
            and func.attr in REGEX_CALLS
        ):
            pattern = node.args[0] if node.args else None
            if (
                isinstance(pattern, ast.Constant)
                and isinstance(pattern.value, str)
                and any(mark in pattern.value for mark in NUMBER_OR_ID)
            ):
                found.append(f"{name}:{node.lineno} a regex for a number or an id: {pattern.value!r}")
        if (
            isinstance(func, ast.Attribute)
            and func.attr in SPLITS
            and isinstance(func.value, ast.Attribute)
            and func.value.attr in ENGINE_TEXT
        ):
            found.append(f"{name}:{node.lineno} splits engine text .{func.value.attr}.{func.attr}()")
        if (
            isinstance(func, ast.Name)
            and func.id in ("int", "float")
            and any(
                isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in PARSED
                for arg in node.args
                for inner in ast.walk(arg)
            )
        ):
            found.append(f"{name}:{node.lineno} reads a number out of split or matched text")
    return found


def test_no_front_end_module_parses_a_number_or_an_id_out_of_engine_text():
    found = [p for path in sorted(UI.rglob("*.py")) for p in problems(path.read_text(), str(path.relative_to(UI)))]
    assert [p for p in found if not any(p.startswith(f"{file}:") and part in p for file, part in ALLOWED)] == []


def test_the_check_catches_what_the_front_ends_used_to_do():
    """The TUI's retry and footer regexes and line mode's partition of the retry notice, as they were."""
    old_tui = (
        'RETRY = re.compile(r"Retrying in .*?(?:\\((\\d+/\\d+)\\))?\\.?$")\n'
        'FOOTER = re.compile(r"\\n*\\[sa-\\d+ · [^\\]]*\\]\\s*$")\n'
    )
    old_plain = 'error, _, when = event.text.partition(" Retrying in ")\n'
    old_count = 'attempt = int(notice.split("(")[1].split("/")[0])\n'
    assert len(problems(old_tui)) == 2
    assert len(problems(old_plain)) == 1
    assert len(problems(old_count)) == 1
    assert problems('lines = event.output.splitlines()\nhead, _, rest = text.partition(" ")\n') == []
