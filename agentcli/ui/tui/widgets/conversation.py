"""A conversation: user messages, streamed Markdown answers, tool calls and notices, anchored to the bottom.

The main screen shows the main agent's conversation; the transcript screen shows a subagent's
with the same widget. Both are fed engine events, live or replayed, each folded into the view model
(``ui/view.py``) first: the facts it draws beyond the event (a run of retries, a task's subagent) are the
view's; a replay folds into a fresh view. It keeps only its widgets (by call id, the one streaming now).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, assert_never

from rich.console import RenderableType
from textual.content import Content
from textual.widget import Widget

from ....core.content import Message, as_blocks, readable, thinking_of
from ....core.events import (
    AssistantMessage,
    AttemptsCompared,
    Compacted,
    Event,
    HistoryCleared,
    Notice,
    Retrying,
    Rewound,
    SteerDelivered,
    SubagentFinished,
    SubagentResultDelivered,
    SubagentStarted,
    SubagentSteered,
    SubagentWrappingUp,
    TextDelta,
    TextReset,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnFinished,
    UserMessage,
)
from ...change import Asked, Line, Quiet, Status, Streamed, Updated, change_of
from ...format import seconds, sources_text, tokens, turns
from ...transcript import TO_MODEL
from ...view import SessionView, Subagent
from .entries import NoticeEntry, PrunedMarker, ReportEntry, UserEntry
from .history import History, answer_entry, let_go_drawn, text_of
from .offscreen import Gap, reveal_all
from .thinking import ThinkingEntry
from .to_model import ToModelEntry, is_long
from .tool_call import TaskEntry, ToolCallEntry

if TYPE_CHECKING:
    from textual.widgets.markdown import MarkdownStream

    from .answer import AssistantEntry
    from .early_answer import EarlyAnswer


COMPACTED = "Compacted "  # how old sessions' notices of compaction begin


class Conversation(History):
    """Follows new output until the user scrolls up; keeps at most ``max_widgets`` children."""

    DEFAULT_CSS = """
    Conversation { layout: stream; height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(
        self,
        *,
        show_times: bool = True,
        expand_tools: bool = False,
        max_widgets: int = 400,
        brief_label: str = "you",
        follow: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.follow_from_start = follow  # False: opens at the top (a transcript opens at its brief)
        self.show_times = show_times
        self.expand_tools = expand_tools
        self.max_widgets = max_widgets
        self.brief_label = brief_label
        self.user_messages = 0
        self.tools: dict[str, ToolCallEntry] = {}  # the widgets of its calls, by call id
        self.tasks: dict[str, TaskEntry] = {}  # by the task call's tool_use id
        self._answer: AssistantEntry | None = None
        self._thinking: ThinkingEntry | None = None  # the thinking streaming now
        self._batch: list[Widget] | None = None
        self._retry: NoticeEntry | None = None  # the line of the run of retries going on now
        self._stream: MarkdownStream | None = None
        self._replayed: list[Event] = []  # a resumed session's events; those before _drawn_from are not drawn
        self._drawn_from = 0  # yet: scrolling to the top draws them (load_earlier)
        self._earlier_limit = 0
        self._preview: tuple[list[Event], bool] | None = None  # a resumed session's tail, drawn before it opened
        self._unfilled: tuple[list[Event], int, int] | None = None  # what its first frame left to draw next
        # The view model the events it is given are folded into first (the app's): the facts it draws, such as a
        # run of retries and a task's subagent. A replay folds past events into a fresh one (_replaying).
        self.view = SessionView()
        self._replaying: SessionView | None = None
        self._early: list[EarlyAnswer] | None = None  # its first frame's answers drawn as text (early_answer.py),
        self._unsettled: list[EarlyAnswer] = []  # while it is built, and until they are Markdown entries
        self.now: Callable[[], float] = lambda: 0.0
        self._arranged, self._kept = None, None  # its latest layout, and an entry kept in place (history.py)

    def on_mount(self) -> None:
        if self.follow_from_start:
            self.anchor()

    def follow(self) -> None:
        """Jump to the bottom and follow new output again (until the user scrolls up)."""
        self.anchor()

    @property
    def streaming(self) -> bool:
        return self._stream is not None

    async def add(self, *widgets: Widget) -> None:
        if self._batch is not None:  # replaying: mounted together at the end
            self._batch.extend(widgets)
            return
        self.stop_watching_layouts()
        await self.mount_all(widgets)
        await self.prune()

    def changing(self) -> set[Widget]:
        return super().changing() | {w for w in (self._answer, self._thinking) if w is not None}

    async def prune(self) -> None:
        children = [c for c in self.children if not isinstance(c, (PrunedMarker, Gap))]
        excess = len(children) - self.max_widgets
        if excess <= 0:
            return
        doomed = [c for c in children[:excess] if c is not self._answer]
        reveal_all(self, [c for c in self.children if isinstance(c, Gap) and set(c.entries) & set(doomed)])
        if not isinstance(self.children[0], PrunedMarker):
            await self.mount(PrunedMarker(), before=0)
        await self.remove_children(doomed)
        gone = set(map(id, doomed))
        self.tools = {k: w for k, w in self.tools.items() if id(w) not in gone}
        self.tasks = {k: w for k, w in self.tasks.items() if id(w) not in gone}

    async def add_notice(self, text: str, level: str = "info", *, block: bool = False) -> None:
        await self.end_answer()
        await self.add(NoticeEntry(text, level, block=block))

    async def add_report(self, report: RenderableType) -> None:
        await self.end_answer()
        await self.add(ReportEntry(report))

    async def retrying(self, event: Retrying) -> None:
        """An API retry: one line, updated in place while the retries follow each other."""
        await self.end_answer()
        if self._retry is None:
            self._retry = NoticeEntry(event.text, "warning retry")
            await self.add(self._retry)
        else:
            self._retry.update(Content(event.text))

    def retried(self, view: SessionView) -> None:
        """The event ``view`` folded last ended the run of retries (the call went through, or the turn ended):
        its "Retrying in 4 s" line goes, and what happened stays, worded as line mode words it."""
        if self._retry is not None and view.retried is not None:
            self._retry.update(Content(view.retried[1].outcome))
            self._retry = None

    async def add_user(self, text: str) -> None:
        label = self.brief_label if self.user_messages == 0 else "you" if self.brief_label == "you" else "note"
        self.user_messages += 1
        await self.add(UserEntry(text, label))

    async def clear(self) -> None:
        await self.end_answer()
        self.tools.clear()
        self.tasks.clear()
        self._retry = None
        self.user_messages = 0
        self._replayed, self._drawn_from, self._preview, self._unfilled = [], 0, None, None
        self._early, self._unsettled, self._paging, self._replayed_any = None, [], False, False
        self._arranged, self._kept = None, None
        await self.remove_children()
        let_go_drawn()

    # -- streaming answers --

    async def write(self, text: str) -> None:
        if self._stream is None:
            self._answer = answer_entry()
            await self.add(self._answer)
            self._stream = self._answer.get_stream(self._answer)
        await self._stream.write(text)

    async def end_answer(self) -> None:
        """Stop streaming into the current answer; its text stays."""
        stream, self._stream, self._answer = self._stream, None, None
        if stream is not None:
            await stream.stop()

    async def drop_answer(self) -> None:
        """Throw away the text and thinking streamed so far (the engine is retrying the call)."""
        answer, thinking, self._thinking = self._answer, self._thinking, None
        await self.end_answer()
        for entry in (answer, thinking):
            if entry is not None:
                await entry.remove()

    async def think(self, text: str) -> None:
        if self._thinking is None:
            self._thinking = ThinkingEntry()
            await self.add(self._thinking)
        self._thinking.add(text)

    def end_thinking(self) -> None:
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None

    # -- events --

    async def apply(self, event: Event) -> None:
        """Show one event of the agent this conversation belongs to, folded into ``view`` already (or, replayed,
        into the replay's own), by the kind of change it is. The kind is taken from the event, as the view takes
        it: the opening warnings are drawn without a fold (resume.py), and the status bar is the app's."""
        self.retried(self.view if self._replaying is None else self._replaying)
        match change_of(event):
            case Streamed() | Line() | Updated():
                await self.draw(event)
            case Quiet() | Status() | Asked():
                pass  # the status bar or the panel shows it, or the app asks it in a modal
            case unknown:
                assert_never(unknown)

    async def draw(self, event: Event) -> None:
        match event:
            case ThinkingDelta(text=text):
                await self.think(text)
            case TextDelta(text=text):
                self.end_thinking()
                await self.write(text)
            case TextReset():
                await self.drop_answer()
            case AssistantMessage(content=content):
                streamed, thought = self._stream is not None, self._thinking is not None
                self.end_thinking()
                await self.end_answer()
                if not thought and thinking_of(content):  # replayed: the message holds the thinking
                    await self.add(ThinkingEntry(thinking_of(content), done=True))
                if not streamed and text_of(content).strip():
                    await self.add(self._whole_answer(text_of(content)))
                if cited := sources_text(content):  # the API's web search: the pages under the answer
                    await self.add_notice(cited)
            case UserMessage(content=content, origin=origin):
                text = readable(content, "\n\n", attachments=False)  # an agentcli note without the marks the model sees
                if origin == "interrupt":  # live, the app says it when the turn ends (TURN_NOTES)
                    if self._replaying is not None:
                        await self.add_notice("Interrupted.", "warning")
                elif origin == "engine" and is_long(text):  # what the loop tells the model, folded when long
                    await self.end_answer()
                    await self.add(ToModelEntry(text))
                elif origin == "engine":  # what the loop tells the model, not what the user said
                    await self.add_notice(f"{TO_MODEL} {text.strip()}")
                elif origin in ("subagent", "steered", "state"):  # its ...Delivered event, or the status bar, shows it
                    pass
                elif text.strip():
                    await self.add_user(text)
            case ToolCallStarted() as started:
                await self.end_answer()
                await self.start_tool(started)
            case ToolCallFinished() as finished:
                await self.finish_tool(finished)
            case ToolProgress() as progress if progress.id in self.tools:
                self.tools[progress.id].show_progress(progress)
            case Notice(text=text) if text.startswith(COMPACTED) and "into a summary" in text:
                pass  # sessions saved before the engine reported compaction only with the Compacted event
            case Retrying() as retrying:
                await self.retrying(retrying)
            case Notice(text=text, level=level):
                await self.add_notice(text, level)
            case TurnFinished(stop_reason="cancelled"):
                await self.end_answer()
            case SubagentFinished() as ended:
                await self.end_answer()
                counted = turns(ended.turns) + (" + summary" if ended.summarized else "")
                line = f"{ended.id} {ended.status} · {counted} · {tokens(ended.usage.total_tokens)} tokens"
                if self.show_times:
                    line += f" · {seconds(ended.seconds)}"
                mark = ended.report.mark if ended.report else ""
                line += f" · {mark}" if mark else ""
                await self.add(NoticeEntry(f"── {line} ──", "warning" if ended.status != "done" or mark else "info"))
            case SubagentResultDelivered(id=agent_id, status=status, description=description):
                await self.add_notice(
                    f"↳ {agent_id} {status} · its result reached the main agent · {description}",
                    "info" if status == "done" else "warning",
                )
            case SubagentStarted(segment=segment, description=description) if segment > 1:
                # in a transcript: a resumed run
                await self.add_notice(f"── resumed ({description}): a new run with the history above")
            case SteerDelivered(texts=texts):  # sent into the running turn: read after the tool results
                for said in texts:
                    await self.add(UserEntry(said, "you · steered"))
            case SubagentSteered(source=source, text=text):
                await self.add_notice(f"── a message from the {source}, read at the next turn: {text}")
            case SubagentWrappingUp(reason=reason):
                await self.add_notice(f"── asked to wrap up ({reason}): it answers with what it has")
            case Compacted() as compaction:
                why = f" ({compaction.reason})" if compaction.reason else ""
                await self.add_notice(
                    f"── compacted {compaction.messages_summarized} older messages into a summary"
                    f"{why}: about {tokens(compaction.tokens_before)} → "
                    f"{tokens(compaction.tokens_after)} tokens"
                )
            case Rewound(to_prompt=number):
                await self.add_notice(
                    f"── /rewind: back to just before prompt {number}; the model does not see what came after it"
                )
            case HistoryCleared() if self._batch is None:  # live: /clear empties the view
                await self.clear()
                await self.add_notice("Started a fresh conversation; the session file keeps the old one.")
            case HistoryCleared():
                await self.add_notice(
                    "── /clear: the conversation started afresh; the model does not see what is above"
                )
            case AttemptsCompared() as compared:  # best-of-N: one table
                from ..reports import comparison_report

                await self.add_report(comparison_report(compared))
            case _:
                pass  # the status bar, the panel or the plan shows it

    async def start_tool(self, event: ToolCallStarted) -> None:
        if event.preview == "delegate":
            entry = TaskEntry(event, show_times=self.show_times)
            self.tasks[event.id] = entry
            await self.add(entry)
        else:
            tool = ToolCallEntry(
                event,
                show_times=self.show_times,
                collapsed=not self.expand_tools,
                max_output_lines=2000 if self.expand_tools else 200,
            )
            self.tools[event.id] = tool
            await self.add(tool)

    async def finish_tool(self, event: ToolCallFinished) -> None:
        if event.id in self.tasks:
            task = self.tasks[event.id]
            await task.finish(event.output, self.view.for_call(event.id), self.now())
        elif event.id in self.tools:
            self.tools[event.id].finish(event)

    def show_subagent(self, state: Subagent) -> None:
        task = self.tasks.get(state.tool_use_id or "")
        if task is not None:
            task.show(state, self.now())

    # -- resume --

    async def replay_messages(
        self, messages: list[Message], call_started: Callable[[dict[str, Any]], ToolCallStarted]
    ) -> None:
        """Rebuild the view of a resumed conversation from its API messages (``call_started``: the
        session's event for a ``tool_use`` block)."""
        results: dict[str, dict[str, Any]] = {}
        for message in messages:
            if message.get("role") == "user" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        results[block.get("tool_use_id", "")] = block
        for message in messages:
            content = message.get("content")
            if message.get("role") == "user":
                if text_of(content).strip():
                    await self.add_user(text_of(content))
                continue
            for block in as_blocks(content):
                if block.get("type") == "text" and block.get("text", "").strip():
                    await self.add(answer_entry(block["text"]))
                elif block.get("type") == "tool_use":
                    call = call_started(block)
                    await self.start_tool(call)
                    result = results.get(block["id"])
                    if result is not None:
                        output = result.get("content")
                        output = output if isinstance(output, str) else text_of(output)
                        await self.finish_tool(
                            ToolCallFinished(
                                id=block["id"],
                                name=block["name"],
                                output=output,
                                is_error=bool(result.get("is_error")),
                                seconds=-1.0,
                            )
                        )
