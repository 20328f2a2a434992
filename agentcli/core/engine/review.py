"""/review and ``agentcli review``: reviewer children in parallel, one concern each, on one diff; their findings
checked against what each actually read; the main agent merges them.

Nothing of it reaches an ordinary request: the reviewer types are no part of the task tool's listing, and
the only text the main agent gets is the one message asking it to merge, when a review runs.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..content import agentcli_note, quoted
from ..errors import ToolError
from ..model.llm import LLMError
from .agents import REVIEWER_PREFIX as PREFIX
from .agents import AgentType
from .loop import final_text
from .review_diff import ReviewDiff, ReviewTargetError, load_diff
from .review_findings import FORMAT, MERGE_ASK, SEVERITIES, Finding, merge, parse_findings, verify
from .subagent_record import ledger_of

if TYPE_CHECKING:
    from .loop import Agent
    from .subagents import Subagents

__all__ = ["REVIEWERS", "Review", "ReviewTargetError", "reviewers", "run_review"]

COMMON = """\
You review a change to this project, as one of several reviewers that each look at one concern. The diff is \
in your brief. Before you report a problem, read the code around it with read_file (offset and limit): the \
changed lines, and what they call or what calls them when that matters. Report only problems in the change \
or caused by it, each one you are sure of; say nothing about what is fine. Your concern:
"""


def reviewer(concern: str, description: str, prompt: str) -> AgentType:
    """A reviewer type: it may use every tool that reads files (read_file, grep, glob and the git tools)."""
    from .tool_catalogue import catalogue

    return AgentType(
        name=PREFIX + concern,
        description=description,
        tools=catalogue().reading(),
        max_turns=20,
        prompt=COMMON + prompt,
    )


REVIEWERS: dict[str, AgentType] = {
    t.name: t
    for t in (
        reviewer(
            "correctness",
            "Reviews a change for bugs: wrong logic, edge conditions, broken callers.",
            "correctness. Wrong conditions and off-by-one errors, wrong results, broken error handling, "
            "resources left open, races, callers the change breaks, behaviour that no longer matches its name "
            "or documentation.",
        ),
        reviewer(
            "security",
            "Reviews a change for security holes.",
            "security. Injection (shell, SQL, paths), input trusted that should not be, secrets in code or "
            "logs, missing authorization, unsafe deserialization, checks that fail open.",
        ),
        reviewer(
            "tests",
            "Reviews a change for missing tests and unhandled edge cases.",
            "tests and edge cases. Behaviour the change adds with no test, tests that cannot fail, and inputs "
            "the new code mishandles: empty, None, zero, negative, boundaries, huge, unicode, concurrent.",
        ),
        reviewer(
            "fit",
            "Reviews how a change fits the codebase.",
            "fit with the codebase. Logic that already exists elsewhere in the project (name where), "
            "conventions the rest of the code follows and this change does not, names that mislead, "
            "documentation the change makes wrong. Look at neighbouring code with grep before you say so.",
        ),
    )
}


def reviewers(agent_types: dict[str, AgentType], trusted: bool) -> tuple[list[AgentType], list[str]]:
    """The reviewers of a review: the built-in ones, replaced or joined by agent files named ``review-*``.
    A workspace's own file is used only once the workspace is trusted: a change under review could add one
    that reports nothing. Also the notes that say which were skipped."""
    chosen, notes = dict(REVIEWERS), []
    for name, agent_type in agent_types.items():
        if not name.startswith(PREFIX):
            continue
        if agent_type.project and not trusted:
            notes.append(
                f"Skipped the reviewer {name} from {agent_type.source}: a workspace's own reviewer files "
                "are used only once you trust the workspace."
            )
            continue
        chosen[name] = agent_type
    return list(chosen.values()), notes


@dataclass
class Review:
    """A finished review: what it looked at, the reviewers that ran, the findings, and what could not be read."""

    described: str
    children: list[str] = field(default_factory=list)  # subagent ids, one per reviewer
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # reviewers that failed or did not run: the review is incomplete

    @property
    def unverified(self) -> int:
        return sum(1 for f in self.findings if not f.verified)

    def standing(self, severity: str) -> list[Finding]:
        """The verified findings at ``severity`` or above (what --fail-on counts)."""
        return [f for f in self.findings if f.verified and f.at_least(severity)]

    def summary(self) -> str:
        count = len(self.findings)
        head = (
            f"Review of {self.described}: {count} finding{'s' if count != 1 else ''} ({self.unverified} unverified)"
            if count
            else f"Review of {self.described}: no findings"
        )
        failed = f" ({len(self.failed)} failed)" if self.failed else ""
        lines = [f"{head}, from {len(self.children)} reviewer{'s' if len(self.children) != 1 else ''}{failed}."]
        for number, f in enumerate(self.findings, 1):
            who = ", ".join((f.reviewer, *f.also)).replace(PREFIX, "")
            # one line each: a reviewer's text (the diff's author may steer it) cannot forge a finding's line
            lines.append(
                f"{number}. [{f.severity}] {' '.join(f.location.split())}: {' '.join(f.problem.split())} ({who})"
            )
            if f.fix:
                lines.append(f"   Suggested: {' '.join(f.fix.split())}")
            if f.unverified:
                lines.append(f"   Unverified: {'; '.join(f.unverified)}.")
        lines += [f"Note: {note}" for note in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.described,
            "reviewers": self.children,
            "findings": [f.to_dict() for f in self.findings],
            "unverified": self.unverified,
            "counts": {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES},
            "notes": self.notes,
            "failed": self.failed,
        }


def brief(diff: ReviewDiff) -> str:
    return f"Review {diff.described}.\n\n{FORMAT}\n\n# The diff\n```diff\n{quoted(diff.text)}\n```"


async def run_review(main: Agent, subagents: Subagents, target: str, *, trusted: bool) -> Review:
    """Review ``target`` (review_diff.load_diff's forms): every reviewer at once, as children of the main agent
    (the panel shows them as it shows any child), then one call of the main agent to merge what they found.
    Raises ReviewTargetError when the target names nothing to review."""
    root = main.ctx.workspace.root
    diff = await asyncio.to_thread(load_diff, root, target)
    types, notes = reviewers(subagents.agent_types, trusted)
    review = Review(diff.described, notes=notes)
    before = set(subagents.records)
    prompt = brief(diff)

    async def one(agent_type: AgentType) -> None:
        concern = agent_type.name.removeprefix(PREFIX)
        try:
            await subagents.run(f"{concern} review", prompt, None, main.ctx, agent_type=agent_type)
        except ToolError as exc:
            review.notes.append(f"The {concern} reviewer did not run: {exc}")
            review.failed.append(agent_type.name)

    await asyncio.gather(*(one(t) for t in types))
    for record in (r for ident, r in subagents.records.items() if ident not in before):
        review.children.append(record.id)
        if record.status in ("failed", "interrupted"):
            review.notes.append(f"{record.id} ({record.type}) ended {record.status}: {record.result[:200]}")
            review.failed.append(record.id)
            continue
        if record.status != "done":  # cut off or cancelled (/stop), it still summed up what it had found
            review.notes.append(f"{record.id} ({record.type}) ended {record.status}; its findings are what it had.")
        found, said = parse_findings(record.result, record.type, record.id, len(review.findings) + 1)
        reads = ledger_of(record).reads
        review.findings += [verify(f, reads, diff, root) for f in found]
        review.notes += said
    if len(review.findings) > 1:
        await merged(main, review)
    return review


async def merged(main: Agent, review: Review) -> None:
    """The main agent merges and de-duplicates the findings, in one call without tools; what it cannot do
    leaves them as reported, with a note."""
    listing = [
        {
            "id": f.id,
            "reviewer": f.reviewer,
            "severity": f.severity,
            "location": f.location,
            "verified": f.verified,
            "problem": f.problem,
            "fix": f.fix,
        }
        for f in review.findings
    ]
    main.add_user(
        [
            agentcli_note(f"The user asked for a review of {review.described}. {MERGE_ASK}"),
            {"type": "text", "text": "```json\n" + quoted(json.dumps(listing, indent=1, ensure_ascii=False)) + "\n```"},
        ],
        origin="engine",
    )
    try:
        reply = await main.call_model(tool_choice={"type": "none"})
    except LLMError as exc:
        review.notes.append(f"The main agent could not merge the findings ({exc}); they are listed as reported.")
        return
    review.findings, said = merge(final_text(reply.content), review.findings)
    review.notes += said
