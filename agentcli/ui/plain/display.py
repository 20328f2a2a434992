"""What line mode shows for the engine's events, and the live lines at the bottom of the terminal.

Main agent: its text streams, then shows as Markdown; each tool call ends as one line, and a
bash call's last few output lines show under it (the whole output of the latest request's calls
is kept for ctrl+o).
Subagents: indented lines for start, tool calls and finish (child_lines.py). On a terminal, running
tools and children also show live, with a spinner and their time so far. The approval questions:
questions.py.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from ...core.comparison import NEXT_STEP, table_text
from ...core.content import readable, text_of, thinking_of
from ...core.door import ToolsView, call_summary
from ...core.events import (
    MAIN,
    ApprovalRequested,
    ApprovalsWaiting,
    AssistantMessage,
    AttemptsCompared,
    Compacted,
    Event,
    Notice,
    PlanUpdated,
    Retrying,
    Rewound,
    SteerDelivered,
    SubagentResultDelivered,
    TextDelta,
    TextReset,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UserMessage,
)
from ..calls import call_line
from ..change import Asked, Streamed
from ..format import flat, seconds, sources_text, word_count
from ..transcript import TO_MODEL, ToolView
from ..view import SessionView, Subagent
from .child_lines import ChildLines, SubagentLines
from .question_lines import QuestionLines
from .screen import Painter, Screen
from .stream import MARKDOWN_TAIL, TextStream, markdown_renderer, plain_renderer
from .words import NOTICE_STYLES, compacted, cut, plan_lines
from .words import STATUS_MARKS as STATUS_MARKS

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.25  # seconds between redraws of the live lines while something runs
STREAM_EVERY = 0.05  # seconds between renders of streaming text
WITHDRAWN = "↺ The reply above broke off before its end: withdrawn, and asked for again."
SHOWN_OUTPUT = ("command", "output")  # previews of calls whose output the user wants to see; the others keep one line
PREVIEW_LINES = 4  # last lines of such a call's output shown under its line
MIN_SUMMARY = 20  # characters of a call's summary kept when a line is too narrow for it


class Display(SubagentLines, QuestionLines):
    def __init__(
        self,
        screen: Screen,
        painter: Painter,
        tools: ToolsView | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.screen, self.painter, self.tools, self.clock = screen, painter, tools, clock
        self.render = markdown_renderer(painter) if painter.color else plain_renderer
        self.tail_lines = MARKDOWN_TAIL if painter.color else 1
        self.stream: TextStream | None = None
        self.tail: list[str] = []
        self.thinking_since: float | None = None
        self.thought = ""  # the main agent's extended thinking streamed so far, said in one line when it ends
        self.calls_before = 0  # the main agent's calls before this request: those left open never finish
        self.view = SessionView()  # the facts of each subagent, shared with the TUI
        self.children: dict[str, ChildLines] = {}  # every subagent started here, by id
        self.question: list[Text] = []  # the live line under an approval question
        self.asked: ApprovalRequested | None = None  # the question printed last
        self.typeahead = ""
        self.steering: list[str] = []  # what the user sent into the running turn, until the main agent reads it
        self.children_seen = 0
        self.idle = False  # between turns: background children print lines, but no live line under the prompt
        self.cut_outputs: list[tuple[str, str]] = []  # (tool line, whole output) of this request's cut previews
        self._stream_timer: asyncio.TimerHandle | None = None
        self._stream_every = STREAM_EVERY
        self._ticker: asyncio.TimerHandle | None = None

    # -- output ------------------------------------------------------------------------------

    def emit(self, *lines: str) -> None:
        """Print rendered lines for good, and redraw the live lines under them."""
        self.screen.print(*lines, live=self.live_lines())

    def line(self, *texts: Text | str) -> None:
        """Print each text as one line, cut to the width."""
        self.emit(*(self.painter.line(t) for t in texts))

    def say_thought(self, thought: str | None = None) -> None:
        """One dim line for the thinking that just ended: its length and how it began."""
        thought, self.thought = (self.thought if thought is None else thought), ""
        if thought.strip():
            self.say(f"∴ thought · {word_count(thought)} words: {cut(flat(thought))}", "dim italic")

    def say(self, text: RenderableType, style: str = "") -> None:
        """Print a message (text, or a rich renderable such as a table), wrapped at the width."""
        self.emit(*self.painter.lines(Text(text, style=style) if isinstance(text, str) else text))

    def refresh(self) -> None:
        self.screen.set_live(self.live_lines())
        busy = self.thinking_since is not None or self.running() or self.live_children()
        if self.screen.live and busy and self._ticker is None:
            self._ticker = asyncio.get_running_loop().call_later(TICK, self._tick)

    def _tick(self) -> None:
        self._ticker = None
        self.refresh()

    # -- events ------------------------------------------------------------------------------

    def handle(self, event: Event) -> None:
        self.view.apply(event, self.clock())
        match self.view.change:
            case Asked(event=ApprovalsWaiting() as inbox):  # a line when one more joins the queue
                if inbox.agent_id in inbox.agents and len(inbox.agents) > 1:
                    self.say(f"· {self.view.inbox_line()}", "yellow")
                self.refresh()
                return
            case _:
                pass  # app.py asks the questions (``ask`` draws an approval); the rest is drawn below
        if not (isinstance(event, Retrying) and self.screen.live):  # live: one live line per run (the view's)
            if isinstance(event, Retrying):  # no live lines: each try is a warning of its own
                event = Notice(
                    level="warning",
                    text=event.text,
                    agent_id=event.agent_id,
                    parent_tool_use_id=event.parent_tool_use_id,
                )
            self._retried()
            if event.agent_id == MAIN:
                self._main_event(event)
            else:
                self._child_event(event)
        if not isinstance(self.view.change, Streamed):  # streaming redraws on its own clock
            self.refresh()

    def _main_event(self, event: Event) -> None:
        self.idle = False
        match event:
            case UserMessage() as message if is_request(message):
                self.cut_outputs.clear()
                for marker in attached(message.content):  # the typed line is on screen already; its images are not
                    self.say(marker, "dim")
            case TurnStarted():
                self.thinking_since = self.clock()
            case ThinkingDelta(text=text):
                self.thought += text
            case TextDelta(text=text):
                self.thinking_since = None
                self.say_thought()
                self._stream_add(text)
            case TextReset():  # a retry streams the message anew: drop what is not printed yet, and withdraw
                self.thought = ""  # what is (a line under it: a terminal's scrollback keeps it)
                if self.stream is not None and self.stream.shown:
                    self.say(WITHDRAWN, "dim")
                self.finish_stream(keep=False)
            case AssistantMessage(content=content):
                self.thinking_since = None
                self.say_thought()
                self.finish_stream()
                if event.agent_id == MAIN and (cited := sources_text(content)):  # the API's web search's pages
                    self.say(cited, "dim")
            case ToolCallStarted():
                self.say_thought()
            case ToolCallFinished() as finished:
                self._tool_finished(finished)
            case TurnFinished(stop_reason="cancelled"):
                self.thinking_since = None
                self.finish_stream()
            case TurnFinished(stop_reason="max_tokens"):
                self.say("The answer hit the output token limit and stops there.", "yellow")
            case Notice(level=level, text=text):
                self.say(f"! {text}", NOTICE_STYLES.get(level, ""))
            case Compacted() as compaction:
                self.say(compacted(compaction), "dim")
            case Rewound(to_prompt=number):
                self.say(
                    f"── /rewind: back to just before prompt {number}; the model does not see what came after it", "dim"
                )
            case PlanUpdated():
                self.say(plan_lines(self.view.plan))
            case SubagentResultDelivered(id=agent_id, status=status, description=description):
                mark, style = STATUS_MARKS.get(status, ("·", ""))
                self.line(
                    Text("↳ ", style="dim")
                    + Text(agent_id, style="bold")
                    + Text(f" {mark} {status}", style=style)
                    + Text(f" · its result reached the main agent · {description}", style="dim")
                )
            case AttemptsCompared() as compared:  # best-of-N: one table
                check = f" · checked with `{compared.check}`" if compared.check else ""
                self.say(Text(f"Attempts: {compared.description}{check}", style="bold"))
                self.say(table_text(compared.attempts))
                self.say(NEXT_STEP, "dim")
            case SteerDelivered(texts=texts) if event.agent_id == MAIN:
                self.steering = self.steering[len(texts) :]
                for said in texts:
                    self.line(Text("› ", style="bold") + Text(said) + Text(" · steered into the turn", style="dim"))
            case _:
                pass  # the prompt, the status bar's facts, what other lines show; app.py asks the questions

    def _tool_finished(self, event: ToolCallFinished) -> None:
        tool = self.view.transcript.calls.get(event.id)
        if tool is not None and tool.preview == "delegate" and (self.delegates(event.id) or not event.is_error):
            return  # the child's own lines tell the story
        mark = Text("● ", style="red" if event.is_error else "green")
        after = Text(f" · {seconds(event.seconds)}", style="dim")
        if event.is_error:
            after += Text(f" · {first_line(event.output)}", style="red")
        line = self.painter.line(self._fit(mark + Text(event.name, style="bold"), self.call_summary(tool), after))
        self.emit(line, *(self.preview(event, line) if tool is not None and tool.preview in SHOWN_OUTPUT else ()))

    def _fit(self, head: Text, summary: str, after: Text) -> Text:
        """head, summary and after on one line; a long summary is cut so that what follows it stays."""
        if summary:
            room = max(MIN_SUMMARY, self.screen.width - head.cell_len - after.cell_len - 1)
            head = head + Text(" " + (summary if len(summary) <= room else summary[: room - 1] + "…"))
        return head + after

    def preview(self, event: ToolCallFinished, line: str) -> list[str]:
        """The last lines of a bash call's output, dimmed and indented; the whole of it goes to ctrl+o."""
        lines = event.output.splitlines()[1 if event.is_error else 0 :]  # an error's first line is on the tool line
        while lines and not lines[-1].strip():
            lines.pop()
        if not lines or lines == ["(no output)"]:
            return []
        shown = lines if len(lines) <= PREVIEW_LINES + 1 else lines[-PREVIEW_LINES:]  # a hint hides 2 or more
        texts = [Text(f"    {text}", style="dim") for text in shown]
        hidden = len(lines) - len(shown)
        if hidden:
            self.cut_outputs.append((Text.from_ansi(line).plain, event.output))
            texts.insert(
                0, Text(f"    … {hidden} earlier line{'' if hidden == 1 else 's'} · ctrl+o shows all", style="dim")
            )
        return [self.painter.line(text) for text in texts]

    def full_outputs(self) -> str:
        """The whole output of each call of the latest request whose preview was cut (for ctrl+o)."""
        return "\n\n".join(f"{line}\n{output}" for line, output in self.cut_outputs)

    def _retried(self) -> None:
        """The event ended a run of retries (the call went through, or the turn ended): on a terminal, whose
        live line showed the run, one line says so."""
        if self.view.retried is None or not self.screen.live:
            return
        agent_id, run = self.view.retried
        text = Text(f"! {run.outcome}", style="yellow")
        self.line(self._child_prefix(agent_id) + " " + text if agent_id in self.children else text)

    # -- streaming text ----------------------------------------------------------------------

    def _stream_add(self, text: str) -> None:
        if self.stream is None:
            self.stream = TextStream(self.render, self.tail_lines, segments=self.painter.color)
            self._stream_every = STREAM_EVERY
            self.emit("")
        self.stream.add(text)
        if self._stream_timer is None:
            self._stream_timer = asyncio.get_running_loop().call_later(self._stream_every, self._stream_step)

    def _stream_step(self) -> None:
        self._stream_timer = None
        if self.stream is None:
            return
        started = time.perf_counter()
        new, tail = self.stream.step()
        # A long answer takes longer to render: render it less often, so the loop stays free.
        self._stream_every = max(STREAM_EVERY, 5 * (time.perf_counter() - started))
        self.tail = [self._fit_tail(line) for line in tail]
        if new:
            self.emit(*new)
        else:
            self.refresh()

    def _fit_tail(self, line: str) -> str:
        if self.painter.color:
            return line  # rendered at the width already
        width = self.screen.width
        return line if len(line) < width else "…" + line[-(width - 2) :]

    def finish_stream(self, keep: bool = True) -> None:
        """Print the rest of the streamed message for good (or drop it: ``keep=False``)."""
        if self._stream_timer is not None:
            self._stream_timer.cancel()
            self._stream_timer = None
        if self.stream is None:
            return
        new, _ = self.stream.step(final=True)
        self.stream, self.tail = None, []
        self.emit(*(new if keep else []))

    # -- live lines --------------------------------------------------------------------------

    def live_lines(self) -> list[str]:
        if not self.screen.live:
            return []
        now = self.clock()
        spin = SPINNER[int(now * 10) % len(SPINNER)]
        texts: list[Text] = []
        if self.thinking_since is not None and not self.tail:
            texts.append(Text(f"{spin} Thinking · {seconds(now - self.thinking_since)}", style="dim"))
        for tool in self.running():
            if tool.preview == "delegate" and self.delegates(tool.id):
                continue
            progress = f" · {tool.progress}" if tool.progress else ""
            texts.append(
                self._fit(
                    Text(f"{spin} ", style="cyan") + Text(tool.name, style="bold"),
                    self.call_summary(tool),
                    Text(f" · {seconds(now - tool.started)}{progress}", style="dim"),
                )
            )
        for agent in self.live_children():
            agent_id, child = agent.id, self.children[agent.id]
            turn = f"turn {agent.turn}/{agent.max_turns}" if agent.max_turns else f"turn {agent.turn}"
            word = agent.state(now, self.view.stall_after)  # cancelling…, no progress for 1m 15s
            if agent.stalled_for(now, self.view.stall_after) is not None:
                word += f" (/wrapup {agent_id} asks it to answer now)"
            texts.append(
                self._child_prefix(agent_id)
                + Text(f" {spin} ", style=child.color)
                + Text(cut(agent.latest_call) or "starting")
                + Text(f" · {word}" if word not in (agent.status, agent.retry) else "", style="yellow")
                + Text(f" · {turn} · {seconds(agent.elapsed(now))} · {agent.description}", style="dim")
            )
        for agent_id, retry in self.view.retries.items():  # one live line per agent, not a paragraph per try
            text = Text(
                f"! Retrying in {retry.delay:.0f} s ({retry.attempt}/{retry.retries}) · {retry.error}", style="yellow"
            )
            texts.append(self._child_prefix(agent_id) + " " + text if agent_id in self.children else text)
        texts.extend(self.question)
        texts.extend(
            Text("↪ steering ", style="bold")
            + Text(flat(said)[:200])
            + Text(" · read after the current tool call", style="dim")
            for said in self.steering
        )
        if self.typeahead:
            texts.append(Text("› ", style="bold") + Text(self.typeahead.replace("\n", " ⏎ ")[-200:]))
        return self.tail + [self.painter.line(t) for t in texts]

    def replay(self, events: list[Event]) -> None:
        """Show a resumed conversation: the user's messages, the answers, tool and subagent lines."""
        for event in events:
            if isinstance(event, UserMessage):
                if event.agent_id == MAIN and is_request(event):
                    self.cut_outputs.clear()
                text = readable(event.content, attachments=False).strip()  # an agentcli note without its marks
                if event.origin == "interrupt":  # the model's note of it: said as the live esc says it
                    self.emit("", *self.painter.lines(Text("Interrupted.", style="yellow")))
                elif text and event.origin == "engine":  # agentcli's words to the model, not the user's
                    self.emit("", *self.painter.lines(Text(f"{TO_MODEL} {text}", style="dim")))
                elif text and event.origin not in ("subagent", "steered", "state"):  # shown their own way
                    self.emit("", *self.painter.lines(Text("› ", style="bold") + Text(text)))
            elif isinstance(event, AssistantMessage):
                if event.agent_id == MAIN:
                    self.say_thought(thinking_of(event.content))
                text = text_of(event.content)
                if event.agent_id == MAIN and text.strip():
                    stream = TextStream(self.render, self.tail_lines)
                    stream.add(text)
                    self.emit("", *stream.step(final=True)[0])
                if event.agent_id == MAIN and (cited := sources_text(event.content)):
                    self.emit(*self.painter.lines(Text(cited, style="dim")))
            elif not isinstance(event, (TextDelta, TurnStarted, ApprovalRequested)):
                self.handle(event)
        self.end_turn()

    def end_turn(self) -> None:
        """Settle everything a turn left: the rest of the text, pending child lines, the live lines."""
        self.finish_stream()
        for agent_id in list(self.children):
            self._flush_child(agent_id)
        self.calls_before = len(self.view.transcript.calls)
        self.thinking_since, self.question, self.typeahead, self.idle = None, [], "", True
        self.steering = []
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self.screen.set_live([])

    def live_children(self) -> list[Subagent]:
        """The subagents with a live line: those started here that the view says still run (none between
        turns, when the prompt is up)."""
        if self.idle:
            return []
        agents = (self.view.subagents.get(agent_id) for agent_id in self.children)
        return [agent for agent in agents if agent is not None and not agent.finished]

    def running(self) -> list[ToolView]:
        """The main agent's calls of this request still running (the view's), for their live lines."""
        return self.view.transcript.running(self.calls_before)

    @staticmethod
    def call_summary(tool: ToolView | None) -> str:
        """A call on one line (``calls.call_line``); "" for a call whose start was never seen."""
        return cut(call_line(tool.preview, tool.input, tool.summary)) if tool and (tool.input or tool.summary) else ""

    def delegates(self, tool_use_id: str) -> bool:
        """Whether the task call ``tool_use_id`` started a child (whose own lines then tell its story)."""
        return self.view.for_call(tool_use_id) is not None

    def summary(self, name: str, args: dict[str, Any]) -> str:
        """The argument that says what a call does: the path, pattern, command or description."""
        return cut(call_summary(self.tools.get(name) if self.tools else None, args))


def is_request(event: UserMessage) -> bool:
    """A message the user wrote (not tool results, not a note of the engine's)."""
    return event.origin == "user"


def attached(content: list[dict[str, Any]]) -> list[str]:
    """The line that names each image of a message (the text block the engine puts after it)."""
    return [
        str(after.get("text", ""))
        for block, after in pairwise(content)
        if block.get("type") == "image" and after.get("type") == "text"
    ]


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "(no output)"
