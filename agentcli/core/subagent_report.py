"""A subagent's one report: its answer and agentcli's receipt of what it did, which every front end, the task
tool's result and a resumed session take (events.py carries it in SubagentFinished)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .content import agentcli_note, quoted
from .units import quoted as _quoted
from .units import seconds as _seconds
from .units import tokens as _tokens
from .units import turns as _turns
from .usage import Usage
from .vocabulary import Status

RECEIPT_CAP = 700  # characters of a receipt in the parent's tool result; the rest stays in the child's transcript
PATTERNS_SHOWN, PATTERN_CAP = 3, 40  # a receipt names a search tool's first 3 patterns, each up to 40 characters
STEER_CAP = 300  # characters of each message the user sent a child, as its receipt repeats it


@dataclass(frozen=True)
class SubagentReport:
    """A subagent's report, built once when a run of it ends (``core.engine.subagent_record.report_of``): its answer and
    agentcli's receipt of what it did, from its tool calls, not its words. The task tool result, a
    background result, the panel, line mode, stream-json and a resumed session all take this one value.
    After a resume its figures are totals of every run."""

    id: str
    status: Status
    text: str  # the child's answer, clean
    turns: int = 0
    usage: Usage = Usage()
    seconds: float = 0.0
    summarized: bool = False  # cut off (turns, time, cancel), it made one more call to sum up what it found
    wrapped_up: bool = False  # asked to wrap up (by the user, the main agent or a budget), it answered without tools
    segments: int = 1  # runs: 1, then one more for each resume
    run_turns: int = 0  # of the latest run alone
    run_seconds: float = 0.0
    tool_calls: int = 0
    reads: tuple[tuple[str, str], ...] = ()  # (path, the line ranges shown, "1-40, 90-120")
    changed: tuple[str, ...] = ()  # paths it wrote or edited
    commands: tuple[tuple[str, str], ...] = ()  # (command, how it ended: "exit code 1", or "denied": not run)
    searches: tuple[tuple[str, int], ...] = ()  # its other calls (grep, glob, git_*, MCP tools…) by name: how many
    patterns: tuple[tuple[str, str], ...] = ()  # what its grep and glob calls looked for: (tool, pattern), each once
    named: tuple[tuple[str, bool], ...] = ()  # files the brief named, and whether it read them
    lookups: tuple[str, ...] = ()  # what its lsp calls found, each once ("references of `run`: 14 places")
    searched: tuple[str, ...] = ()  # of those it did not read, the ones it searched (grep with that path)
    unverified: tuple[str, ...] = ()  # why its answer is not backed by what it did; () when it is
    answer_mark: str = ""  # the answer was empty or only pointed elsewhere: what agentcli did about it
    kept_out: int = 0  # what its own context held at its latest call (``kept_out``)
    steered: tuple[tuple[str, bool], ...] = ()  # what the user told it while it ran, and whether it read it
    returned: int = 0  # tokens its report costs the parent, by a cautious estimate
    model: str = ""  # the model it ran on, where that is not its parent's (a task call's model, its type's)

    @property
    def footer(self) -> str:
        """One line for the parent: status, turns, tokens, time; after a resume, totals, and it says so."""
        turns = _turns(self.turns) + (" + wrap-up" if self.wrapped_up else " + summary" if self.summarized else "")
        line = f"{self.id} · {self.status} · {turns} · {_tokens(self.usage.total_tokens)} tokens · {_seconds(self.seconds)}"
        if self.segments > 1:
            line += (
                f" · totals of {self.segments} runs; this run {_turns(self.run_turns)} and {_seconds(self.run_seconds)}"
            )
        return f"[{line}{f' · {self.model}' if self.model else ''}]"

    @property
    def mark(self) -> str:
        """ "unverified" when its answer is not backed by its tool calls, "no answer" when it gave none."""
        return "unverified" if self.unverified else ("no answer" if self.answer_mark.startswith("no answer") else "")

    def receipt(self, cap: int = RECEIPT_CAP) -> str:
        """agentcli's record of the child's calls, at most ``cap`` characters; what is cut is counted."""
        lines = [f"Receipt for {self.id} (agentcli's record of its tool calls, not its words):"]
        lines += [f"UNVERIFIED: {why}" for why in self.unverified]
        if self.unverified:
            lines.append("Check the unverified part yourself before you rely on it.")
        lines += [
            f"The user told it while it worked{'' if read else ' (too late: it had finished)'}: "
            f"{_quoted(text, STEER_CAP)}"
            for text, read in self.steered
        ]
        if self.answer_mark:
            lines.append(f"Answer: {self.answer_mark}")
        if self.named:
            lines.append(
                "Brief's files: "
                + ", ".join(
                    f"{p} ({'read' if read else 'searched, NOT read' if p in self.searched else 'NOT read'})"
                    for p, read in self.named
                )
            )

        def command(c: str) -> str:
            return f"`{c[:80]}{'…' if len(c) > 80 else ''}`"

        items = (
            [("read", f"{p} ({r})" if r else p) for p, r in self.reads]
            + [("changed", p) for p in self.changed]
            + [("ran", f"{command(c)} → {e}") for c, e in self.commands if e != "denied"]
            + [("denied", command(c)) for c, e in self.commands if e == "denied"]
            + [("looked up", t) for t in self.lookups]
            + [("also called", f"{name} ×{n}{self._looked_for(name)}") for name, n in self.searches]
        )
        if not items:
            lines.append(
                f"Tool calls: {self.tool_calls} (no file read or changed, no command run)."
                if self.tool_calls
                else "Tool calls: none."
            )
        shown = 0
        for kind in ("read", "changed", "ran", "denied", "looked up", "also called"):
            group = [text for k, text in items if k == kind]
            if not group:
                continue
            line, used = f"{kind.capitalize()}: ", 0
            for text in group:
                if sum(len(x) + 1 for x in lines) + len(line) + len(text) + 40 > cap:
                    break
                line += ("; " if used else "") + text
                used += 1
            if used:
                lines.append(line)
            shown += used
        if shown < len(items):
            lines.append(f"… and {len(items) - shown} more in its transcript.")
        return "\n".join(lines)

    def _looked_for(self, tool: str) -> str:
        """' ("def login", "auth", +2 more)': the patterns a search tool was given, a few and each cut short."""
        found = [pattern for name, pattern in self.patterns if name == tool]
        if not found:
            return ""
        more = f", +{len(found) - PATTERNS_SHOWN} more" if len(found) > PATTERNS_SHOWN else ""
        return f" ({', '.join(_quoted(p, PATTERN_CAP) for p in found[:PATTERNS_SHOWN])}{more})"

    @property
    def cancelled_line(self) -> str:
        """The line that tells the parent the user stopped this child ("" unless they did)."""
        if self.status != "cancelled":
            return ""
        return (
            f"The user cancelled {self.id} before it finished: its answer above is what it had found by then, "
            "and the rest of its errand was not done."
        )

    def for_parent(self) -> str:
        """The task tool result: its answer (quoted: the child may repeat what a hostile page said), then
        agentcli's note of the receipt, the footer, and a cancel."""
        cancelled = agentcli_note(self.cancelled_line)["text"] if self.cancelled_line else ""
        return "\n\n".join(
            part for part in (quoted(self.text), agentcli_note(self.receipt())["text"], self.footer, cancelled) if part
        )

    def as_message(self, description: str) -> str:
        """A background result, all of it in one agentcli note (it arrives as a user message)."""
        ended = (
            "was interrupted: agentcli stopped while it worked; `task resume` with its id continues it"
            if self.status == "interrupted"
            else "has finished"
        )
        return "\n\n".join(
            part
            for part in (
                f"Background subagent {self.id} ({description}) {ended}.",
                self.text,
                self.receipt(),
                self.footer,
                self.cancelled_line,
            )
            if part
        )

    def account(self) -> dict[str, Any]:
        """What delegating cost and saved: tokens the child spent, tokens its report returned to the parent,
        tokens kept out of the parent's context, and its time."""
        return {
            "spent": self.usage.total_tokens,
            "returned": self.returned,
            "kept_out": self.kept_out,
            "seconds": round(self.seconds, 2),
            "cost": self.usage.cost,
        }

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "usage": self.usage.to_dict()}

    @classmethod
    def from_dict(cls, data: Any) -> SubagentReport | None:
        """A stored report; None for a missing or damaged one."""
        if not isinstance(data, dict):
            return None
        try:
            fields = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
            fields["usage"] = Usage.from_dict(fields.get("usage"))
            for name in ("reads", "commands", "named", "searches", "steered", "patterns"):
                fields[name] = tuple(tuple(item) for item in fields.get(name, ()))
            for name in ("changed", "unverified", "searched", "lookups"):
                fields[name] = tuple(fields.get(name, ()))
            return cls(**fields)
        except (TypeError, ValueError):
            return None
