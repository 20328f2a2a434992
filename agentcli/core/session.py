"""A session: the main agent and its subagents, stored as they go (``store.py``) and resumable.

Resuming rebuilds the main agent's history, turns and usage, and every child's record and
transcript, from the stored records (``history.py``); new events append to the same files.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any, Callable, Protocol, TypeVar

from . import compaction
from .agents import load_agent_types
from .context import main_system_prompt
from .events import MAIN, Event, HistoryCleared, Notice, Sink, SubagentFinished, SubagentStarted, Usage
from .history import agent_state, replay_events, subagent_record
from .llm import LLM, context_window, resolve_model
from .loop import Agent, RunResult
from .permissions import Permissions
from .subagents import Budgets, Subagents, TaskTool
from .store import (SessionError, SessionStore, child_records, find_session, latest_session, new_session_id,
                    open_store, read_records)
from .tools import ToolRegistry, default_tools
from .tools.base import ToolContext
from .workspace import Workspace

TOOL_SETTINGS = ("search_timeout", "output_copy_max_mb", "output_session_max_mb")  # handed to tools in ctx.env

T = TypeVar("T")

__all__ = ["Session", "SessionError", "SessionStore", "SessionSettings", "new_session_id", "open_session"]


class SessionSettings(Protocol):
    """The settings a session reads (``agentcli.config.Settings`` has them): plain values, passed in."""

    model: str
    max_tokens: int
    permission_mode: str
    max_turns: int
    subagent_max_turns: int
    subagent_timeout: float
    max_parallel_subagents: int
    api_retries: int
    stall_timeout: float
    compact_threshold: float
    keep_secret_env: bool
    search_timeout: float
    output_copy_max_mb: float
    output_session_max_mb: float
    agents: dict[str, dict[str, Any]]
    permissions: dict[str, list[str]]
    notices: list[str]


class Session:
    """What a front end drives: user text goes in, events come out to ``sink`` and to every subscriber."""

    def __init__(self, settings: SessionSettings, workspace: Workspace, sink: Sink | None, *, interactive: bool,
                 llm: LLM | None = None, session_id: str | None = None, store: bool = True,
                 resume: str | None = None) -> None:
        """``resume``: the id (or a unique prefix) of a saved session of this workspace to carry on.
        Raises SessionError when there is none; forks into a copy when another process has it open."""
        self.settings = settings
        self.workspace = workspace
        self.sink = sink
        self.subscribers: list[Sink] = []
        self.opening: list[Event] | None = []  # what the session said while it opened (warnings), until open
        self.store: SessionStore | None = None
        self.restored_events: list[Event] = []  # a resumed session's main transcript, for front ends to draw
        notices: list[str] = []
        if store:
            saved = find_session(workspace.root, resume) if resume is not None else None
            self.store, notices = open_store(workspace.root, settings.model, session_id=session_id, resume=saved)
        self.id = self.store.session_id if self.store else session_id or new_session_id()
        self.llm = llm or LLM(model=settings.model, max_tokens=settings.max_tokens, retries=settings.api_retries,
                              stall_timeout=settings.stall_timeout)
        self.permissions = Permissions.from_settings(settings.permission_mode, settings.permissions, interactive)
        agent_types = load_agent_types(workspace.root, notices)  # skipped agent files become warnings
        tools = ToolRegistry([*default_tools(workspace.root), TaskTool(agent_types)])  # task runs the engine
        self.subagents = Subagents(
            llm=self.llm, tools=tools, agent_types=agent_types, type_settings=settings.agents,
            budgets=Budgets(settings.subagent_max_turns, settings.subagent_timeout, settings.max_parallel_subagents),
            compact_threshold=settings.compact_threshold)
        env = {name: str(getattr(settings, name)) for name in TOOL_SETTINGS}
        if settings.keep_secret_env:
            env["keep_secret_env"] = "1"
        ctx = ToolContext(workspace=workspace, emit=self.emit, permissions=self.permissions,
                          subagents=self.subagents, env=env,
                          output_dir=self.store.output_dir if self.store else None)
        # The prompt's git snapshot runs git a few times: off the way to the first screen, ready before
        # the first model call (system_ready()).
        self._system_prompt: Future[str] | None = in_thread(lambda: main_system_prompt(workspace))
        self.main = Agent(llm=self.llm, tools=tools, ctx=ctx, system="",
                          max_turns=settings.max_turns, compact_threshold=settings.compact_threshold)
        if resume is not None and self.store is not None:
            notices += self.restore()
        for text in settings.notices + notices:  # settings.notices: e.g. what an untrusted workspace asked for
            self.emit(Notice(level="warning", text=text))
        self.opened, self.opening = self.opening, None

    def subscribe(self, sink: Sink) -> None:
        """Send every event from now on to ``sink`` too; first the warnings the session gave while it opened."""
        for event in self.opened:
            sink(event)
        self.subscribers.append(sink)

    def restore(self) -> list[str]:
        """Load the stored transcripts into the main agent and the subagent records; returns warnings."""
        assert self.store is not None
        records, warnings = read_records(self.store.main_path)
        state = agent_state(records)
        self.main.messages, self.main.turns = state.messages, state.turns
        self.main.usage, self.main.last_usage = state.usage, state.last_usage
        self.restored_events = [e for e in replay_events(records)
                                if e.agent_id == MAIN or isinstance(e, (SubagentStarted, SubagentFinished))]
        children, child_warnings = child_records(self.store.main_path)
        for child_id, child in children.items():
            record = subagent_record(child, child_id)
            if record is None:
                continue
            self.subagents.records[child_id] = record
            if not any(r.get("type") == "subagent_finished" for r in child):  # died with the process
                self.save(lambda store: store.write(record.events[-1]))
                self.restored_events.append(record.events[-1])
        numbers = [int(i.removeprefix("sa-")) for i in children if i.removeprefix("sa-").isdigit()]
        self.subagents.next_number = max(numbers, default=0) + 1
        return warnings + child_warnings

    def emit(self, event: Event) -> None:
        self.save(lambda store: store.write(event))
        self.deliver(event)

    def deliver(self, event: Event) -> None:
        if self.opening is not None:
            self.opening.append(event)
        for sink in [self.sink, *self.subscribers]:
            if sink is not None:
                sink(event)

    def save(self, write: Callable[[SessionStore], None]) -> None:
        """Write to the store, if there is one. A failed write turns the store off and becomes one warning."""
        if self.store is None:
            return
        try:
            write(self.store)
        except SessionError as exc:
            self.deliver(Notice(level="warning", text=str(exc)))

    async def system_ready(self) -> None:
        """Wait for the main agent's system prompt, built in a thread since the session opened."""
        if self._system_prompt is not None:
            self.main.system = await asyncio.wrap_future(self._system_prompt)
            self._system_prompt = None

    async def send(self, text: str) -> RunResult:
        """Run the main agent on one user message."""
        await self.system_ready()
        return await self.main.run(text)

    def clear(self) -> None:
        """Start a fresh conversation with the same settings; the store keeps what came before."""
        self.main.messages = []
        self.main.last_usage = Usage()
        self.emit(HistoryCleared())

    async def compact(self, focus: str = "") -> bool:
        """Summarize the main agent's older turns now (/compact). False when there is too little to compact."""
        await self.system_ready()
        return await compaction.compact(self.main, focus, reason="asked for")

    def set_model(self, model: str) -> None:
        """Switch the main agent's model, and the one subagents of type ``model: inherit`` use."""
        self.main.model = self.llm.model = resolve_model(model)

    def context_used(self) -> int:
        """Tokens the main context held at the latest call."""
        return self.main.last_usage.context_tokens

    def context_window(self) -> int:
        return context_window(self.main.model)

    @property
    def usage(self) -> Usage:
        return self.main.usage + self.subagents.usage

    def close(self) -> None:
        if self.store is not None:
            self.store.close()

    async def aclose(self) -> None:
        """Stop background shells, close(), and the model client's connections too (front ends that own
        the event loop)."""
        await self.main.ctx.shells.stop_all()
        self.close()
        await self.llm.aclose()


def open_session(settings: SessionSettings, workspace: Workspace, sink: Sink | None, *, interactive: bool, llm: LLM | None = None,
                 resume: str | None = None, continue_: bool = False) -> Session:
    """What every front end calls: a new session, ``resume`` a given one (id or unique prefix), or
    ``continue_`` the latest one of this workspace. Raises SessionError with one sentence."""
    if resume is None and continue_:
        resume = latest_session(workspace.root).stem
    return Session(settings, workspace, sink, interactive=interactive, llm=llm, resume=resume)


def in_thread(work: Callable[[], T]) -> Future[T]:
    """Start blocking ``work`` in a thread of its own now; its result, or its error, comes in the future."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # re-raised where the result is awaited
            future.set_exception(exc)

    threading.Thread(target=run, name="session-prep", daemon=True).start()
    return future
