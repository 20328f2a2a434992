"""The results table: printed to the terminal, and written as docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path

from .stats import Section

HEADERS = ("Measure", "agentcli", "Compared with", "Ratio", "Notes")

PREAMBLE = """\
# Benchmarks

How fast agentcli starts, searches, renders and loops, how little memory it keeps, and how much
main-agent context its subagents save: each measured side by side with a peer a user would compare
against (bare ripgrep, a bare Textual app, a bare SDK loop, the same errand done inline).
Machines differ, so read the **ratios**; absolute times are for this machine only.

Every number is the **median (min–max)** of several runs; ratios are per run, paired (run *i* of
agentcli against run *i* of the peer). "not measured yet" means what it says: no number is made up.
This file is written by `python -m bench`; do not edit it by hand.
"""


def _cells(row_values: tuple[str, ...]) -> str:
    return "| " + " | ".join(v.replace("|", "\\|") for v in row_values) + " |"


def markdown(
    sections: list[Section], machine: dict[str, str], command: str, seconds: float, names: tuple[str, ...]
) -> str:
    out = [PREAMBLE, "## Results", "", _cells(HEADERS), _cells(tuple("---" for _ in HEADERS))]
    for section in sections:
        out.append(_cells((f"**{section.title}**", "", "", "", "")))
        for row in section.rows:
            out.append(_cells((row.name, row.ours, row.peer, row.ratio, row.note)))
    out += ["", "## How each measure works", ""]
    for section in sections:
        out.append(f"**{section.title}** ({section.seconds:.0f} s). " + " ".join(section.notes))
        out.append("")
    out += ["## Machine", ""]
    out += [f"- **{key}**: {value}" for key, value in machine.items()]
    out += [
        "",
        f"The whole run took {seconds / 60:.1f} minutes.",
        "",
        "## Reproduce",
        "",
        "```sh",
        "make bench                                                # every measure; rewrites this file",
        ".venv/bin/python -m bench --only search,loop --no-write   # some of them; prints the table only",
        "```",
        "",
        f"Measures: {', '.join(names)}. This file came from `{command}`, run from the repository root.",
        "The code is in `bench/`: one module per measure, `bench/__main__.py` runs them.",
        "",
    ]
    return "\n".join(out)


def table(sections: list[Section]) -> str:
    """A plain-text table for the terminal."""
    rows = [HEADERS] + [(r.name, r.ours, r.peer, r.ratio, r.note) for s in sections for r in s.rows]
    widths = [min(max(len(r[i]) for r in rows), 48) for i in range(len(HEADERS))]
    lines = []
    current = None
    for section in sections:
        if section.title != current:
            current = section.title
            lines.append("")
            lines.append(f"== {section.title} ({section.seconds:.0f} s)")
        for r in section.rows:
            values = (r.name, r.ours, r.peer, r.ratio, r.note)
            lines.append("  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip())
    header = "  ".join(h.ljust(w) for h, w in zip(HEADERS, widths, strict=True)).rstrip()
    return header + "\n" + "\n".join(lines)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
