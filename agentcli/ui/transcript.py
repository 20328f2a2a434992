"""One agent's conversation as the front ends list it: its items in the order they happened (messages,
tool calls with their output, subagents starting and ending, notes and dividers), folded from its events.

``view.SessionView`` keeps one ``Transcript`` for the main agent and one in each ``Subagent``; renderers
(line mode, ``sessions show``, ``/transcript``) read the items and each call's ``ToolView``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.content import readable, text_of
from ..core.events import (
    MAIN,
    AssistantMessage,
    Compacted,
    Event,
    HistoryCleared,
    Notice,
    Origin,
    Preview,
    Retrying,
    Status,
    SteerDelivered,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    UserMessage,
)

__all__ = [
    "CallEnded",
    "ChildMark",
    "Divider",
    "Item",
    "Note",
    "Said",
    "TO_MODEL",
    "ToModel",
    "ToolView",
    "Transcript",
    "progress_text",
]


@dataclass
class ToolView:
    """One tool call as the front ends list it."""

    id: str
    name: str
    input: dict[str, Any]
    summary: str = ""
    kind: str = ""  # read | edit | exec | task, as the engine reported it
    preview: Preview = ""  # how the call reads for people, as its tool declares it
    status: str = "running"  # running | ok | error
    seconds: float | None = None
    output: str = ""
    progress: str = ""  # while it runs: what its MCP server last said of its progress (progress_text)
    started: float = 0.0  # the caller's clock when it started
    agent_id: str = MAIN  # whose call it is
    denied: bool = False  # refused: by a rule, the mode, a hook or the user


def progress_text(event: ToolProgress) -> str:
    """A running call's progress in a few words: ``2/5 · copying``, or ``7 · copying`` without a total."""
    done = f"{event.progress:g}/{event.total:g}" if event.total else f"{event.progress:g}"
    return f"{done} · {event.message}" if event.message else done


@dataclass
class Said:
    """A message with text: the user's prompt (what they typed, sent or steered, or background results) or the
    assistant's reply."""

    role: Literal["user", "assistant"]
    text: str
    origin: Origin = "user"


TO_MODEL = "agentcli → model:"  # what every front end writes before a ToModel note


@dataclass
class ToModel:
    """A note agentcli wrote for the model (go on after a cut-off reply, a Stop hook's objection, sum up):
    shown as agentcli's, never as the user's words."""

    text: str


@dataclass
class Note:
    """A warning or error of the engine's, or a model call being retried."""

    level: str
    text: str


@dataclass
class Divider:
    """Where the conversation changed course: resumed (``at``: ISO time), cleared, compacted, a subagent's
    later run (``task resume``), or interrupted (the user stopped the turn)."""

    kind: Literal["resumed", "cleared", "compacted", "rerun", "interrupted"]
    at: str = ""
    messages: int = 0  # compacted: how many older messages the summary replaced
    description: str = ""  # rerun: the task's description


@dataclass
class ChildMark:
    """A subagent starting or ending, as its parent's transcript lists it."""

    id: str
    subagent_type: str = ""
    description: str = ""
    status: Status | None = None  # None: the start
    turns: int = 0
    tokens: int = 0
    seconds: float = 0.0
    summarized: bool = False  # cut off, it made one more call to sum up
    mark: str = ""  # "unverified" or "no answer", from its report (SubagentReport.mark)


@dataclass
class CallEnded:
    """Where a call's result came in (after its siblings' starts, when calls ran in parallel)."""

    call: ToolView


Item = Said | ToolView | CallEnded | Note | ToModel | Divider | ChildMark


@dataclass
class Transcript:
    """One agent's conversation as a list of items, in the order they happened."""

    items: list[Item] = field(default_factory=list)
    calls: dict[str, ToolView] = field(default_factory=dict)

    def apply(self, event: Event, now: float = 0.0) -> None:
        match event:
            case UserMessage(origin="steered"):
                pass  # its SteerDelivered holds the words as the user typed them
            case UserMessage(origin="interrupt"):
                self.items.append(Divider("interrupted"))
            case UserMessage(content=content, origin="engine"):
                if text := readable(content).strip():
                    self.items.append(ToModel(text))
            case UserMessage(content=content, origin=origin):  # an @-mention's file as its one line (📎)
                self.said("user", readable(content, attachments=False), origin)
            case SteerDelivered(texts=texts):
                for said in texts:
                    self.said("user", said, "steered")
            case AssistantMessage(content=content):
                self.said("assistant", text_of(content), "user")
            case ToolCallStarted() as started:
                call = self.calls[started.id] = ToolView(
                    started.id,
                    started.name,
                    started.input if isinstance(started.input, dict) else {},
                    started.summary,
                    started.kind,
                    started.preview,
                    started=now,
                    agent_id=started.agent_id,
                )
                self.items.append(call)
            case ToolProgress() as progress if progress.id in self.calls:
                self.calls[progress.id].progress = progress_text(progress)
            case ToolCallFinished() as finished:
                found = self.calls.get(finished.id)
                if found is None:  # its start was lost (a damaged file)
                    found = self.calls[finished.id] = ToolView(
                        finished.id, finished.name, {}, agent_id=finished.agent_id
                    )
                found.status, found.seconds = "error" if finished.is_error else "ok", finished.seconds
                found.denied = finished.denied
                found.output = finished.output
                self.items.append(CallEnded(found))
            case Notice(level="warning" | "error" as level, text=text):
                self.items.append(Note(level, text))
            case Retrying() as retrying:
                self.items.append(Note("warning", retrying.text))
            case HistoryCleared():  # and Rewound
                self.items.append(Divider("cleared"))
            case Compacted(messages_summarized=summarized):
                self.items.append(Divider("compacted", messages=summarized))
            case SubagentStarted() as started_child:
                self.items.append(ChildMark(started_child.id, started_child.subagent_type, started_child.description))
            case SubagentFinished() as ended:
                self.items.append(
                    ChildMark(
                        ended.id,
                        status=ended.status,
                        turns=ended.turns,
                        tokens=ended.usage.total_tokens,
                        seconds=ended.seconds,
                        summarized=ended.summarized,
                        mark=ended.report.mark if ended.report else "",
                    )
                )
            case _:
                pass  # not an item of a transcript (a comparison: the task call's result holds it as text)

    def said(self, role: Literal["user", "assistant"], text: str, origin: Origin) -> None:
        if text.strip():
            self.items.append(Said(role, text.strip(), origin))

    def resumed(self, at: str) -> None:
        self.items.append(Divider("resumed", at=at))

    def running(self, since: int = 0) -> list[ToolView]:
        """Its calls still running, of those from the ``since``-th call on (a front end's mark of where its
        request began: a call a stored session left open never finishes)."""
        return [call for call in itertools.islice(self.calls.values(), since, None) if call.status == "running"]

    @property
    def last_reply(self) -> str:
        """The text of the latest assistant message; "" when there is none."""
        return next((i.text for i in reversed(self.items) if isinstance(i, Said) and i.role == "assistant"), "")
