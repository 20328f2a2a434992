"""A subagent's record (what it was asked, how it went, its transcript) and the report built from it: the
answer, its receipt of what the child read, ran and changed, and what the answer cites that the receipt does not back."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..content import Message
from ..events import (
    Event,
    Status,
    SubagentReport,
    SubagentStarted,
    SubagentSteered,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    kept_out,
)
from ..model.llm import estimate_tokens
from .compaction import Ledger
from .steering import Steers

if TYPE_CHECKING:
    from .loop import Agent


@dataclass
class Budgets:
    """A subagent's limits, from the settings (subagent_max_turns, subagent_timeout, max_parallel_subagents)."""

    max_turns: int
    timeout: float
    max_parallel: int


@dataclass
class SubagentRecord:
    """One subagent of this session: what it was asked, how it went, and its full transcript."""

    id: str
    type: str
    description: str
    prompt: str
    tool_use_id: str
    max_turns: int = 0
    status: Status = "queued"  # queued | running | done | capped | timed_out | failed | cancelled | interrupted
    result: str = ""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    started: float = 0.0  # time.monotonic() when it began running
    tool_output_chars: int = 0  # tool output it read that never reached the parent
    changed_files: list[str] = field(default_factory=list)  # paths it wrote or edited, relative to the root
    events: list[Event] = field(default_factory=list)
    task: asyncio.Task[Any] | None = field(default=None, repr=False)
    cancel_requested: bool = False  # the user asked to stop this child (not its parent)
    cancel_absorbed: bool = False  # that cancel has been turned into a summary
    worktree: str = ""  # the branch of its own git worktree, when it runs isolated
    summarized: bool = False  # cut off, it made one more call (not a turn) to sum up what it found
    emit: Callable[[Event], None] | None = field(default=None, repr=False)  # its events, once it started
    background: bool = False  # its latest run was started with run_in_background
    segments: int = 0  # runs so far: 1, then one more for each resume
    run_turns: int = 0  # turns of the latest run alone (``turns`` counts every run)
    run_seconds: float = 0.0  # likewise for time
    messages: list[Message] = field(default_factory=list, repr=False)  # its history, for a resume
    ledger: dict[str, Any] = field(default_factory=dict, repr=False)  # its compactions' ledger, for a resume
    answer_mark: str = ""  # its answer was empty or a pointer: what agentcli did about it (see SubagentReport)
    named_files: list[str] = field(default_factory=list)  # the files its brief named (task `files`)
    report: SubagentReport | None = None  # built once when its latest run ended (``report_of``)
    token_budget: int = 0  # tokens (as the footer counts them) at which it is asked to wrap up; 0: none
    cost_budget: float = 0.0  # likewise in USD
    steers: Steers = field(default_factory=Steers, repr=False)  # messages for its next turn boundary
    wrap_up: str = ""  # why it is asked to finish now (SUMMARY_REQUEST's reason); "" until it is
    wrapped_up: bool = False  # it answered a wrap-up request: its result is what it had by then
    warned: bool = False  # it was told once that it nears its turn cap or budget
    model: str = ""  # the model id it runs on (its task call's, its type's, or its parent's)
    effort: str = ""  # its own effort level (its task call's); "": the session's
    own_model: bool = False  # ``model`` is not its parent's: its receipt's footer names it

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def tokens_kept_out(self) -> int:
        """What this child's own context held at its latest model call (the API's count): the work the
        main context would hold had it done the errand itself. Every front end shows this one number."""
        return kept_out(self.events)

    def to_dict(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "type": self.type,
            "description": self.description,
            "status": self.status,
            "background": self.background,
            "segments": self.segments,
            "turns": self.turns,
            "usage": self.usage.to_dict(),
            "seconds": round(self.seconds, 2),
            "tool_use_id": self.tool_use_id,
            "tokens_kept_out": self.tokens_kept_out,
            **({"token_budget": self.token_budget} if self.token_budget else {}),
            **({"cost_budget": self.cost_budget} if self.cost_budget else {}),
            **({"wrapped_up": True} if self.wrapped_up else {}),
            **({"model": self.model} if self.model else {}),
            **({"effort": self.effort} if self.effort else {}),
        }
        return {**data, "worktree": self.worktree} if self.worktree else data


# An answer that only points elsewhere: "see above", "The report was delivered above.", "as I said earlier".
POINTER = re.compile(
    r"\b(?:see|look|refer|as|in)\b[^.\n]{0,40}\b(?:above|earlier|previous(?:ly)?|before)\b"
    r"|\b(?:already|was|were|been|is|are|have)\s+(?:been\s+)?(?:delivered|provided|given|reported|"
    r"shared|sent|written|posted)\b",
    re.IGNORECASE,
)
POINTER_LIMIT = 240  # characters: a longer answer carries content of its own
CITED_PATH = re.compile(r"(?<![\w/.:@-])((?:\.{1,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})\b")
CODE_SUFFIXES = frozenset(
    "py js ts tsx jsx go rs rb java kt c h cc cpp hpp cs php swift m sh toml yaml yml json "
    "md txt cfg ini lock sql html css scss vue lua pl ex exs erl hs ml scala gradle".split()
)
CITED_COMMAND = re.compile(r"\b(?:ran|executed)\s+`([^`\n]+)`", re.IGNORECASE)  # "I ran `x`", not "run `x` to…"


def not_an_answer(text: str) -> bool:
    """Empty, or short and only pointing elsewhere: nothing the parent could use."""
    stripped = text.strip()
    return stripped in ("", "(no answer)") or (len(stripped) <= POINTER_LIMIT and bool(POINTER.search(stripped)))


def cited_paths(text: str) -> list[str]:
    """The file paths an answer names: with a folder, or a file name with a code suffix; no URLs."""
    found: list[str] = []
    for match in CITED_PATH.finditer(text):
        path = match.group(1).rstrip(".")
        if text[max(0, match.start() - 3) : match.start()].endswith("://") or "." not in path:
            continue
        if ("/" in path or path.rsplit(".", 1)[1].lower() in CODE_SUFFIXES) and path not in found:
            found.append(path)
    return found


def unverified(record: SubagentRecord, text: str) -> tuple[str, ...]:
    """Why the answer is not backed by what the child did: no tool call, or a path or command it cites that
    none of its calls touched (in their input or their output) and that it was not told of (its brief, the
    messages sent to it: those came from the parent or the user, who know them); () when it is backed."""
    calls = [e for e in record.events if isinstance(e, ToolCallStarted)]
    if not text.strip() or record.status == "interrupted":
        return ()
    if not calls:
        return ("it made no tool call, so nothing in its answer comes from this repository.",)
    told = [
        e.prompt if isinstance(e, SubagentStarted) else e.text
        for e in record.events
        if isinstance(e, (SubagentStarted, SubagentSteered))
    ]
    seen = "\n".join(
        [json.dumps(c.input, ensure_ascii=False) for c in calls]
        + told
        + [e.output for e in record.events if isinstance(e, ToolCallFinished)]
    )
    why = []
    paths = [p for p in cited_paths(text) if p.removeprefix("./") not in seen]
    if paths:
        why.append(
            f"its answer cites {', '.join(paths[:3])}{' and more' if len(paths) > 3 else ''}, which none "
            "of its tool calls touched."
        )
    ran = [
        c
        for c in (m.group(1) for m in CITED_COMMAND.finditer(text))
        if not any(c in json.dumps(call.input, ensure_ascii=False) for call in calls if kept(call.name) == "command")
    ]
    if ran:
        why.append(f"its answer says it ran `{ran[0][:80]}`, which it did not.")
    return tuple(why)


def kept(tool: str) -> str:
    """What a receipt keeps of a call of ``tool``, as the tool declares (``tool_facts.ToolFacts.receipt``)."""
    from .tool_catalogue import catalogue

    return catalogue().receipt(tool)


def same_file(path: str, named: str) -> bool:
    """Whether a path a call used is the file a brief named (as given, or under a folder)."""
    path, named = path.removeprefix("./"), named.removeprefix("./")
    return bool(path) and (path == named or path.endswith("/" + named))


def ledger_of(record: SubagentRecord) -> Ledger:
    """What a child's tool calls did, as agentcli recorded them: its compactions' ledger, then the history it kept."""
    ledger = Ledger.from_dict(record.ledger)
    ledger.add(record.messages)
    return ledger


def report_of(record: SubagentRecord) -> SubagentReport:
    """The one report of a child's latest run: its answer and the receipt of what it did, from its tool
    calls (the same ``Ledger`` compaction keeps) and its events, never from its words."""
    ledger = ledger_of(record)
    calls = [e for e in record.events if isinstance(e, ToolCallStarted)]
    counted: dict[str, int] = {}
    for call in calls:
        if kept(call.name) in ("", "contents", "names"):  # a search: counted (the others' receipts say more)
            counted[call.name] = counted.get(call.name, 0) + 1
    reads = tuple((path, ", ".join(f"{a}-{b}" for a, b in sorted(spans))) for path, spans in ledger.reads.items())
    changed = tuple(dict.fromkeys([*record.changed_files, *ledger.changed]))
    answer = record.result
    read_paths = [path.removeprefix("./") for path in ledger.reads]
    named = tuple((name, any(same_file(p, name) for p in read_paths)) for name in record.named_files)
    grepped = [str(c.input.get("path") or "") for c in calls if kept(c.name) == "contents"]
    searched = tuple(name for name, read in named if not read and any(same_file(p, name) for p in grepped))
    lsp_calls = {e.id for e in calls if kept(e.name) == "lookup"}  # what each found is its result's first line
    lookups = tuple(
        dict.fromkeys(
            e.output.strip().splitlines()[0][:120]
            for e in record.events
            if isinstance(e, ToolCallFinished) and e.id in lsp_calls and e.output.strip() and not e.is_error
        )
    )
    # A denied command never ran: the ledger, which reads only results, would call it failed.
    started = {e.id: e.input.get("command") for e in calls if kept(e.name) == "command"}
    denied = {started.get(e.id) for e in record.events if isinstance(e, ToolCallFinished) and e.denied}
    commands = tuple((c, "denied" if e.startswith("failed") and c in denied else e) for c, e in ledger.commands)
    report = SubagentReport(
        id=record.id,
        status=record.status,
        text=answer,
        turns=record.turns,
        usage=record.usage,
        seconds=record.seconds,
        summarized=record.summarized,
        wrapped_up=record.wrapped_up,
        segments=max(record.segments, 1),
        run_turns=record.run_turns,
        run_seconds=record.run_seconds,
        tool_calls=len(calls),
        reads=reads,
        changed=changed,
        commands=commands,
        searches=tuple(counted.items()),
        named=named,
        lookups=lookups,
        patterns=tuple(
            dict.fromkeys(
                (c.name, c.input["pattern"])
                for c in calls
                if kept(c.name) in ("contents", "names") and isinstance(c.input.get("pattern"), str)
            )
        ),
        searched=searched,
        unverified=unverified(record, answer),
        answer_mark=record.answer_mark,
        kept_out=kept_out(record.events),
        steered=record.steers.from_user(),
        model=record.model if record.own_model else "",
    )
    return dataclasses.replace(report, returned=estimate_tokens(report.for_parent()))


def report_so_far(record: SubagentRecord, agent: Agent, answer: str, turns_before: int) -> SubagentReport:
    """The report ``report_of`` would build if the child's running ``agent`` stopped now with ``answer``
    (what a SubagentStop hook reads before it lets the child go)."""
    return report_of(
        dataclasses.replace(
            record,
            status="done",
            result=answer,
            messages=agent.messages,
            ledger=agent.ledger.to_dict(),
            turns=turns_before + agent.turns,
            run_turns=agent.turns,
            usage=agent.usage,
        )
    )
