"""Review findings: the small block each reviewer ends its answer with, read robustly; each finding checked
against the reviewer's receipt (did it read the lines it cites?) and the diff (did the change touch them?);
and the main agent's merge of them, read the same way.

A model's bad output never raises: what cannot be read becomes one note, and the rest goes on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .review_diff import ReviewDiff

SEVERITIES = ("high", "medium", "low")  # most severe first
FINDINGS_FENCE = "findings"  # the reviewers' block
MERGED_FENCE = "review"  # the main agent's block
LOCATION = re.compile(r"^\s*(.+?):(\d+)(?:\s*-\s*(\d+))?\s*$")
MAX_SPAN = 200  # lines a finding may cite; a wider one cites no place in particular

FORMAT = """\
# How to report
End your answer with one fenced block tagged `findings` holding a JSON array, one object per finding, most \
severe first, and nothing after it:
```findings
[{"severity": "high", "location": "src/app.py:41-43", "problem": "What is wrong, in a sentence or two.", \
"fix": "The change you suggest."}]
```
severity is high (wrong results, data loss, a hole), medium (a real bug in a less common case) or low \
(worth fixing, not urgent). location is a path relative to the project root and the line or lines of the \
new code. Cite only lines you read with read_file in this review and that the diff changed or shows: \
a finding about other lines is marked unverified. No findings: an empty array `[]`."""

MERGE_ASK = """\
Merge these review findings for the user: the same problem at the same place, reported by more than one \
reviewer, becomes one finding. Keep each finding's substance; do not call tools. Answer with one line on the \
change as a whole, then one fenced block tagged `review` holding a JSON array with one object per merged \
finding, most severe first: {"from": [the ids it merges], "severity": "high|medium|low", "problem": "…", \
"fix": "…"}. Every id below appears in exactly one "from"."""


@dataclass(frozen=True)
class Finding:
    """One finding: who reported it, how severe, where, what is wrong and what to change; ``unverified``
    says why it is not backed (empty when it is)."""

    id: str
    reviewer: str  # the reviewer's agent type
    child: str  # the subagent that reported it
    severity: str
    path: str
    first: int
    last: int
    problem: str
    fix: str
    unverified: tuple[str, ...] = ()
    also: tuple[str, ...] = field(default=())  # the other reviewers that reported it (merged)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.first}" + (f"-{self.last}" if self.last != self.first else "")

    @property
    def verified(self) -> bool:
        return not self.unverified

    def at_least(self, severity: str) -> bool:
        return SEVERITIES.index(self.severity) <= SEVERITIES.index(severity)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity,
            "path": self.path,
            "line": self.first,
            "end_line": self.last,
            "location": self.location,
            "problem": self.problem,
            "fix": self.fix,
            "reviewers": [self.reviewer, *self.also],
            "subagent": self.child,
            "verified": self.verified,
            **({"unverified": list(self.unverified)} if self.unverified else {}),
        }


def fenced(text: str, tag: str) -> str | None:
    """The body of the last fenced block tagged ``tag`` (or, failing that, ``json``); None when there is none."""
    for name in (tag, "json"):
        blocks = re.findall(rf"```[ \t]*{name}[ \t]*\n(.*?)\n[ \t]*```", text, re.DOTALL | re.IGNORECASE)
        if blocks:
            return str(blocks[-1])
    return None


def json_items(text: str, tag: str, who: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The objects of the JSON array in ``text``'s block tagged ``tag``; and what could not be read, as notes."""
    body = fenced(text, tag)
    if body is None:
        return [], [f"{who} gave no `{tag}` block, so none of its answer could be read as findings."]
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        return [], [f"{who}'s `{tag}` block is not valid JSON ({exc.msg} at line {exc.lineno})."]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return [], [f"{who}'s `{tag}` block is not a JSON array."]
    items = [item for item in value if isinstance(item, dict)]
    skipped = len(value) - len(items)
    return items, [
        f"{who}: {skipped} item{'s' if skipped != 1 else ''} of its block {'are' if skipped != 1 else 'is'} "
        "not an object and were left out."
    ] if skipped else []


def severity_of(value: Any) -> str | None:
    word = str(value or "").strip().lower()
    word = {"critical": "high", "major": "high", "moderate": "medium", "minor": "low", "nit": "low"}.get(word, word)
    return word if word in SEVERITIES else None


def parse_findings(text: str, reviewer: str, child: str, number: int) -> tuple[list[Finding], list[str]]:
    """A reviewer's findings, numbered from F``number``; and a note for each that could not be read."""
    who = f"{child} ({reviewer})"
    items, notes = json_items(text, FINDINGS_FENCE, who)
    findings: list[Finding] = []
    for index, item in enumerate(items, 1):
        where = LOCATION.match(str(item.get("location") or ""))
        if where is None and item.get("path") and str(item.get("line") or "").isdigit():
            where = LOCATION.match(f"{item['path']}:{item['line']}")
        severity, problem = severity_of(item.get("severity")), str(item.get("problem") or "").strip()
        if where is None or severity is None or not problem:
            missing = [
                name
                for name, bad in (
                    ("location (path:line)", where is None),
                    ("severity (high, medium or low)", severity is None),
                    ("problem", not problem),
                )
                if bad
            ]
            notes.append(f"{who}: finding {index} has no {' or '.join(missing)}, and was left out.")
            continue
        first = int(where.group(2))
        last = max(first, int(where.group(3) or first))
        findings.append(
            Finding(
                f"F{number + len(findings)}",
                reviewer,
                child,
                severity,
                where.group(1).strip(),
                first,
                last,
                problem,
                str(item.get("fix") or "").strip(),
            )
        )
    return findings, notes


def relative(path: str, root: Path) -> str:
    """A path as the diff names it: relative to the root, without ``./``."""
    if Path(path).is_absolute():
        try:
            return Path(path).relative_to(root).as_posix()
        except ValueError:
            return path
    return path.removeprefix("./")


def verify(finding: Finding, reads: dict[str, list[list[int]]], diff: ReviewDiff, root: Path) -> Finding:
    """The finding with why it is unverified, if it is: lines the reviewer never read with read_file (its
    receipt, not its words, says what it read), or lines outside every hunk of the diff."""
    path = relative(finding.path, root)
    why = []
    if finding.last - finding.first >= MAX_SPAN:
        why.append(f"it cites {finding.last - finding.first + 1} lines, which is no place in particular")
    spans = [span for p, spans in reads.items() if relative(p, root) == path for span in spans]
    unread = [n for n in range(finding.first, finding.last + 1) if not any(a <= n <= b for a, b in spans)][:MAX_SPAN]
    if not spans:
        why.append(f"{finding.child} never read {path}")
    elif unread:
        why.append(
            f"{finding.child} never read line{'s' if len(unread) > 1 else ''} "
            f"{unread[0]}{'-' + str(unread[-1]) if len(unread) > 1 else ''} of {path}"
        )
    if path not in diff.hunks:
        why.append(f"the diff does not change {path}")
    elif not diff.shows(path, finding.first, finding.last):
        why.append(f"the diff does not touch {finding.location.replace(finding.path, path, 1)}")
    return replace(finding, path=path, unverified=tuple(why))


def merge(text: str, findings: list[Finding]) -> tuple[list[Finding], list[str]]:
    """The main agent's merge (its `review` block) applied to ``findings``: each merged finding keeps the
    place of a verified source when it has one, and is verified when any source is; its severity may go down
    but never above its most severe source that is verified as it is (the merge is a model reading what the
    diff's author wrote, so it cannot make a fabricated finding, or its own judgement, fail a build); a
    finding the merge left out is kept as it was. When the block cannot be read, every finding stays as reported."""
    by_id = {f.id: f for f in findings}
    items, notes = json_items(text, MERGED_FENCE, "The main agent")
    merged: list[Finding] = []
    used: set[str] = set()
    for item in items:
        given = item.get("from")
        named: list[Any] = given if isinstance(given, list) else [given]
        ids = list(
            dict.fromkeys(
                i for i in (f"F{n}" if str(n).isdigit() else str(n) for n in named) if i in by_id and i not in used
            )
        )
        if not ids:
            continue
        used.update(ids)
        sources = [by_id[i] for i in ids]
        base = next((f for f in sources if f.verified), sources[0])
        backed = [f.severity for f in sources if f.verified == base.verified]  # what its reviewers' reads back
        ceiling = min(backed, key=SEVERITIES.index)
        severity = max(severity_of(item.get("severity")) or ceiling, ceiling, key=SEVERITIES.index)
        others = tuple(dict.fromkeys(f.reviewer for f in sources if f.reviewer != base.reviewer))
        merged.append(
            replace(
                base,
                severity=severity,
                problem=str(item.get("problem") or "").strip() or base.problem,
                fix=str(item.get("fix") or "").strip() or base.fix,
                also=others,
            )
        )
    left = [f for f in findings if f.id not in used]
    if left and items:
        notes.append(f"The main agent's merge left out {', '.join(f.id for f in left)}; kept as reported.")
    ordered = merged + left
    ordered.sort(key=lambda f: SEVERITIES.index(f.severity))
    return ordered, notes
