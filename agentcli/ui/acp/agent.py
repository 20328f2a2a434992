"""The ACP agent: the SDK calls these methods for the client's requests; each session is an agentcli Session.

Events go out in the order the engine made them: the session's sink puts them on one outbox, and one
task sends them (``pump``). A prompt's response is sent only once everything it caused is out.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp import schema as s

from ... import __version__
from ...core.door import MODES, LLMError, SessionError, SessionSurface, list_sessions, new_session_id
from ...core.events import (
    MAIN,
    ApprovalRequested,
    ElicitationRequested,
    Event,
    ModeChanged,
    Notice,
    PlanUpdated,
    Retrying,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    UsageUpdated,
)
from ..change import Asked, Line, Status, Streamed, Updated
from ..slash import session_commands
from ..transcript import ToolView
from ..view import SessionView
from . import elicitation, options, updates
from .approvals import ask_permission, ask_trust
from .children import Children, SendRaw
from .editor import files_for
from .inputs import check_credentials, first_prompt, mcp_config, prompt_content, workspace_root

# How the front end gets a session's settings: (workspace root, trusted, --mcp-config values) -> Settings.
SettingsFor = Callable[[Path, bool, list[str]], Any]


@dataclass
class Conversation:
    """One ACP session: an agentcli Session (opened at once, or at the first prompt once the workspace
    trust question is answered) and the prompt running in it."""

    id: str
    root: Path
    mcp: list[str]  # the client's MCP servers, as --mcp-config JSON
    resume: str | None = None
    session: SessionSurface | None = None
    prompt: asyncio.Task[Any] | None = None
    mode: str = "default"
    children: Children | None = None
    view: SessionView = field(default_factory=SessionView)  # the events sent so far, folded
    closed: set[str] = field(default_factory=set)  # calls a cancelled prompt left open, told the client as failed
    roots: dict[str, Path] = field(default_factory=dict)  # a worktree child's workspace root, by its id
    commands: list[tuple[str, str, str]] | None = None  # as the client was last told them
    model: str = ""  # the main agent's model, as the picker shows it (options.py)
    picked: str | None = None  # a model picked before the session opened (it waits for its first prompt)
    titled: bool = False  # the client was told the session's title


class AcpAgent:
    def __init__(self, settings_for: SettingsFor, send_raw: SendRaw, *, mode: str | None = None) -> None:
        self.settings_for, self.send_raw, self.mode_flag = settings_for, send_raw, mode
        self.conn: Any = None
        self.conversations: dict[str, Conversation] = {}
        self.outbox: asyncio.Queue[tuple[Conversation, Event | Callable[[], Any]]] = asyncio.Queue()
        self.pumping: asyncio.Task[None] | None = None
        self.subagents = False  # the client opted in to child sessions (children.py reads it raw)
        self.client: s.ClientCapabilities | None = None  # what the client offers (its files: editor.py)
        self.tasks: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # ------------------------------------------------------------------ requests

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: s.ClientCapabilities | None = None,
        client_info: s.Implementation | None = None,
        **kwargs: Any,
    ) -> s.InitializeResponse:
        self.client = client_capabilities
        return s.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_info=s.Implementation(name="agentcli", title="agentcli", version=__version__),
            agent_capabilities=s.AgentCapabilities(
                load_session=True,
                prompt_capabilities=s.PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=s.McpCapabilities(http=True, sse=True),
                session_capabilities=s.SessionCapabilities(list=s.SessionListCapabilities()),
            ),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> s.NewSessionResponse:
        conv = Conversation(id=new_session_id(), root=workspace_root(cwd), mcp=mcp_config(mcp_servers))
        await self.open(conv)
        return s.NewSessionResponse(
            session_id=conv.id, modes=updates.modes(conv.mode, MODES), config_options=options.options(conv.model)
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> s.LoadSessionResponse:
        root = workspace_root(cwd)
        if session_id in self.conversations:
            raise RequestError(-32602, f"Session {session_id} is already open.")
        conv = Conversation(id=session_id, root=root, mcp=mcp_config(mcp_servers), resume=session_id)
        await self.open(conv)
        self.restore_mode(conv)
        await self.replay(conv)
        if conv.session is not None and (first := first_prompt(conv.session.restored_events)):
            await self.tell_title(conv, first)
        return s.LoadSessionResponse(modes=updates.modes(conv.mode, MODES), config_options=options.options(conv.model))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> s.ListSessionsResponse:
        import datetime

        # one folder's sessions, as `agentcli sessions list` there shows them: without a cwd, the folder this
        # process runs in (an editor starts it in its project), never every workspace's with their first prompts
        root = workspace_root(cwd) if cwd else Path.cwd().resolve()
        infos = await asyncio.to_thread(list_sessions, root)
        return s.ListSessionsResponse(
            sessions=[
                s.SessionInfo(
                    session_id=info.id,
                    cwd=info.cwd or str(root),
                    title=options.title_of(info.first_prompt),
                    updated_at=datetime.datetime.fromtimestamp(info.updated, datetime.UTC).isoformat(
                        timespec="seconds"
                    ),
                )
                for info in infos
            ]
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> s.SetSessionModeResponse:
        conv = self.conversation(session_id)
        if mode_id not in MODES:
            raise RequestError(-32602, f"agentcli has no mode {mode_id!r}; it has {', '.join(MODES)}.")
        conv.mode = mode_id
        if conv.session is not None:
            conv.session.set_permission_mode(mode_id)
        await self.conn.session_update(session_id=conv.id, update=updates.mode_update(mode_id))
        return s.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> s.SetSessionConfigOptionResponse:
        """The model picker (options.py): the main agent's model from the next model call on."""
        conv = self.conversation(session_id)
        model = options.chosen_model(config_id, value)
        if conv.session is not None:
            conv.session.set_model(model)
            conv.model = conv.session.model
        else:
            conv.picked = conv.model = model
        return s.SetSessionConfigOptionResponse(config_options=options.options(conv.model))

    def restore_mode(self, conv: Conversation) -> None:
        """session/load: the session goes on in the mode it was left in (its last ModeChanged), unless
        `agentcli acp --permission-mode` named one for every session."""
        session = conv.session
        stored = (
            next((e.mode for e in reversed(session.restored_events) if isinstance(e, ModeChanged)), None)
            if session is not None
            else None
        )
        if session is not None and stored in MODES and not self.mode_flag and stored != conv.mode:
            session.set_permission_mode(stored)
            conv.mode = stored

    async def tell_title(self, conv: Conversation, prompt: str) -> None:
        if not conv.titled and (title := options.title_of(prompt)):
            conv.titled = True
            await self.conn.session_update(session_id=conv.id, update=options.title_update(title))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> s.PromptResponse:
        if self.child_owner(session_id) is not None:
            raise RequestError(-32602, f"{session_id} is a subagent's session; prompt its parent session instead.")
        conv = self.conversation(session_id)
        if conv.prompt is not None and not conv.prompt.done():
            raise RequestError(-32600, "A prompt is already running in this session; wait for it, or cancel it first.")
        text, pictures = prompt_content(prompt)
        conv.prompt = asyncio.current_task()
        await self.tell_title(conv, text)
        try:
            if conv.session is None:
                await self.open(conv, ask=True)
            assert conv.session is not None
            await conv.session.wait_servers()  # the client's servers and the workspace's, as -p waits
            await self.offer_commands(conv)  # their prompts are commands too, once they are ready
            run = await conv.session.send(text, pictures)
            stop = updates.STOP_REASONS.get(run.status, "end_turn")
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            stop = "cancelled"
        except LLMError as exc:
            await self.flush()
            raise RequestError(-32603, str(exc)) from None
        finally:
            conv.prompt = None
        await self.flush()
        if stop == "cancelled":
            await self.close_calls(conv)
        return s.PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if (owner := self.child_owner(session_id)) is not None:
            conv, agent_id = owner
            if conv.session is not None:
                conv.session.cancel_child(agent_id)
            return
        conv = self.conversations.get(session_id)  # type: ignore[assignment]  # the name of the branch above, reused
        if conv is not None and conv.prompt is not None and not conv.prompt.done():
            conv.prompt.cancel()

    # ------------------------------------------------------------------ sessions

    def child_owner(self, session_id: str) -> tuple[Conversation, str] | None:
        """The parent conversation and subagent id of a child session."""
        for conv in self.conversations.values():
            child = conv.children.owns(session_id) if conv.children is not None else None
            if child is not None:
                return conv, child
        return None

    def conversation(self, session_id: str) -> Conversation:
        conv = self.conversations.get(session_id)
        if conv is None:
            raise RequestError(
                -32602,
                f"There is no session {session_id} on this connection; start one with session/new or session/load.",
            )
        return conv

    async def open(self, conv: Conversation, ask: bool = False) -> None:
        """Open conv's Session. When the workspace's files ask for trust and no answer is remembered, the
        session waits for its first prompt (``ask``), which asks the question first."""
        from ... import trust
        from ...config import ConfigError

        try:
            request = trust.request_for(conv.root)
            undecided = bool(request.sources) and trust.answer_for(request) is None
            if undecided and not ask:
                deferred = self.settings_for(conv.root, False, conv.mcp)
                conv.mode, conv.model = self.mode_flag or deferred.permission_mode, conv.model or deferred.model
                check_credentials()
                self.conversations.setdefault(conv.id, conv)
                return
            answer = await ask_trust(self.conn, conv.id, request) if undecided else None
            outcome = trust.settle(conv.root, ask=lambda _request: answer)
            settings = self.settings_for(conv.root, outcome.trusted, conv.mcp)
        except ConfigError as exc:
            raise RequestError(-32602, str(exc)) from None
        check_credentials()
        if outcome.notice:
            settings.notices.append(outcome.notice)
        if self.mode_flag:
            settings.permission_mode = self.mode_flag
        if conv.mode != "default" and conv.mode != settings.permission_mode and conv.session is None and ask:
            settings.permission_mode = conv.mode  # set_mode came before the session opened
        from ...core.door import Workspace, open_session

        try:
            session = open_session(
                settings.engine(),
                Workspace.at(conv.root),
                lambda event: self.outbox.put_nowait((conv, event)),
                interactive=True,
                resume=conv.resume,
                session_id=None if conv.resume else conv.id,
                editor=files_for(self.conn, conv.id, conv.root, self.client),
            )
        except SessionError as exc:
            raise RequestError(-32602, str(exc)) from None
        self.conversations[conv.id] = conv
        if conv.picked:
            session.set_model(conv.picked)  # set_config_option came before the session opened
        conv.session, conv.mode, conv.model = session, session.permission_mode, session.model
        conv.children = Children(conv.id, self.send_raw, conv.view)
        session.asks_user = any(elicitation.offered(self.client))  # else a server's question is refused, saying why
        self.start_pump()
        session.start_servers()
        await self.offer_commands(conv)
        if ask:
            await self.conn.session_update(session_id=conv.id, update=updates.mode_update(conv.mode))

    async def offer_commands(self, conv: Conversation) -> None:
        """available_commands_update when the commands changed: custom commands, then the ready MCP servers'
        prompts (``/mcp__server__prompt``), as '/' completes them in the TUI (slash.session_commands)."""
        assert conv.session is not None
        commands = [(c.name, c.help, c.args) for c in session_commands(conv.session)]
        if commands != conv.commands:
            conv.commands = commands
            await self.conn.session_update(session_id=conv.id, update=updates.commands_update(commands))

    async def replay(self, conv: Conversation) -> None:
        """session/load: the conversation so far, as updates, before the response. A client that takes child
        sessions gets each child announced and replayed on its own session where it first started."""
        session, children = conv.session, conv.children
        if session is None or children is None:
            return
        await self.flush()
        records = {record.id: record for record in session.children}
        for event in session.restored_events:
            if event.agent_id == MAIN:
                update = updates.replayed(event, session.workspace.root)
                if update is not None and not (
                    self.subagents and isinstance(event, ToolCallFinished) and await children.finish_call(update)
                ):
                    await self.conn.session_update(session_id=conv.id, update=update)
            elif not self.subagents:
                self.replayed_child(conv, event)
                await self.child_event(conv, event)  # a background result folds into its task call
            elif isinstance(event, SubagentStarted) and children.session_of(event.id) is None:
                record = records.get(event.id)
                for child_event in record.events if record is not None else [event]:
                    await self.replay_child(conv, child_event)

    async def replay_child(self, conv: Conversation, event: Event) -> None:
        assert conv.session is not None and conv.children is not None
        if isinstance(event, (SubagentStarted, SubagentFinished)):
            self.replayed_child(conv, event)
            await self.child_event(conv, event)
        elif (target := conv.children.session_of(event.agent_id)) is not None and (
            update := updates.replayed(event, self.root_of(conv, event.agent_id))
        ) is not None:
            await self.conn.session_update(session_id=target, update=update)

    @staticmethod
    def replayed_child(conv: Conversation, event: Event) -> None:
        """A loaded session's child starting or ending, replayed: into the view, whose subagents are the children
        (children.py). Only these: the client is told of no replayed call as open (``told_calls``)."""
        if isinstance(event, (SubagentStarted, SubagentFinished)):
            conv.view.apply(event, time.monotonic())

    async def close(self) -> None:
        """The client went away: every session stops and is saved, side by side."""
        closed = await asyncio.gather(
            *(conv.session.aclose() for conv in self.conversations.values() if conv.session is not None),
            return_exceptions=True,
        )
        for failed in (c for c in closed if isinstance(c, Exception)):
            print(f"agentcli: a session did not close cleanly: {type(failed).__name__}: {failed}", file=sys.stderr)

    # ------------------------------------------------------------------ events out

    def start_pump(self) -> None:
        if self.pumping is None:
            self.pumping = asyncio.create_task(self.pump(), name="acp-outbox")

    async def flush(self) -> None:
        """Until everything put on the outbox so far has been sent."""
        if self.pumping is None:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.outbox.put_nowait((Conversation("", Path("."), []), lambda: done.set_result(None)))
        await done

    async def pump(self) -> None:
        while True:
            conv, item = await self.outbox.get()
            try:
                if callable(item) and not isinstance(item, Event):
                    item()
                else:
                    await self.send(conv, item)
            except Exception as exc:  # one bad event must not stop the rest
                print(f"agentcli: could not send an update: {type(exc).__name__}: {exc}", file=sys.stderr)

    async def send(self, conv: Conversation, event: Event) -> None:
        session = conv.session
        assert session is not None
        conv.view.apply(event, time.monotonic())
        change, target = conv.view.change, conv.id  # taken before the routing awaits: a replay may fold meanwhile
        if event.agent_id != MAIN:
            routed = await self.child_event(conv, event) if conv.children is not None else None
            if routed is None:
                return
            target = routed
        update: Any = None
        # A model call's usage and the questions go to the client too, the inbox does not, and the mode is said by
        # session/set_mode itself (current_mode_update).
        match change:
            case Status(event=UsageUpdated()):  # any agent's model call: the session's totals, on the parent session
                # (the session's numbers, not the view's: a loaded session's hold its earlier turns, which no event
                # told)
                target = conv.id
                update = updates.usage_update(session.context_used(), session.context_window(), session.usage)
            case Asked(event=ApprovalRequested() as asked):  # the call it asks about, if the client was told of it
                call = next(
                    (
                        c.id
                        for c in reversed(self.told_calls(conv, asked.agent_id))
                        if c.name == asked.tool and c.input == asked.input
                    ),
                    None,
                )
                self.spawn(ask_permission(self.conn, target, session, asked, call, self.root_of(conv, asked.agent_id)))
            case Asked(event=ElicitationRequested() as question):  # a server's question, for a client that takes them
                self.spawn(elicitation.ask(self.conn, conv.id, question, self.client))
            case Streamed(event=TextDelta(text=text)):
                update = updates.message_chunk(text)
            case Updated(
                event=ToolOutput() as running
            ):  # a command's output so far, in its call (terminals: docs/acp.md)
                update = updates.live_output(running)
            case Streamed(event=ThinkingDelta(text=text)):
                update = updates.thought_chunk(text)
            case Line(event=ToolCallStarted() as started):
                update = updates.tool_call(started, self.root_of(conv, started.agent_id))
            case Line(event=ToolCallFinished() as finished):
                update = updates.tool_call_done(finished)
                if self.subagents and conv.children is not None and await conv.children.finish_call(update):
                    update = None  # a task call: sent with its link to the child kept (children.py)
            case Line(event=PlanUpdated() as plan):
                update = updates.plan_update(plan)
            case Line(event=Notice(level=level, text=text)) if level in ("warning", "error"):
                print(f"agentcli: {text}", file=sys.stderr)
            case Line(event=Retrying() as retrying):
                print(f"agentcli: {retrying.text}", file=sys.stderr)
            case _:
                pass  # no session/update says it (a child's start and end went to children.py above)
        if update is not None:
            await self.conn.session_update(session_id=target, update=update)

    async def child_event(self, conv: Conversation, event: Event) -> str | None:
        """Where a subagent's event goes: its own child session when the client opted in, else nowhere (its
        result reaches the parent's task call), but an approval always reaches the user."""
        children = conv.children
        assert children is not None
        if isinstance(event, ApprovalRequested) and not self.subagents:
            return conv.id
        if isinstance(event, SubagentStarted):
            if self.subagents:
                await children.announce(event)
                await self.note_worktree(conv, event.id)
            return None
        if isinstance(event, SubagentFinished):
            if self.subagents:
                await children.announce(event)
            await self.background_result(conv, event)
            return None
        return children.session_of(event.agent_id) if self.subagents else None

    async def background_result(self, conv: Conversation, event: SubagentFinished) -> None:
        """A background run ended, maybe while no prompt runs: the task call that started it shows its result
        at once (linked to the child session still, for a client that takes them). The main agent reads the
        result at the next prompt; ACP has no way for an agent to start a turn by itself."""
        assert conv.children is not None
        call = conv.children.background_call(event)
        if call is None:
            return
        update = updates.background_result(call, event)
        if not (self.subagents and await conv.children.finish_call(update)):
            await self.conn.session_update(session_id=conv.id, update=update)

    async def note_worktree(self, conv: Conversation, agent_id: str) -> None:
        """A child in its own git worktree: its calls' files (locations, diffs) are the worktree's."""
        session = conv.session
        assert session is not None
        record = next((r for r in session.children if r.id == agent_id), None)
        if record is None or not record.worktree or agent_id in conv.roots:
            return
        root = await session.worktree_root(agent_id)
        if root is not None:
            conv.roots[agent_id] = root

    def root_of(self, conv: Conversation, agent_id: str) -> Path:
        assert conv.session is not None
        return conv.roots.get(agent_id, conv.session.workspace.root)

    def told_calls(self, conv: Conversation, agent_id: str | None = None) -> list[ToolView]:
        """The open calls the client was told of (the main agent's, and a child's on its own session), of every
        agent or of ``agent_id``, in the order they started; none that a cancel already closed."""
        return [
            call
            for call in conv.view.open_calls(agent_id)
            if call.id not in conv.closed
            and (
                call.agent_id == MAIN
                or self.subagents
                and conv.children is not None
                and conv.children.session_of(call.agent_id) is not None
            )
        ]

    async def close_calls(self, conv: Conversation) -> None:
        """A cancelled prompt leaves calls that never finished: each is marked failed, as the spec asks."""
        for call in self.told_calls(conv):
            target = (
                conv.id if call.agent_id == MAIN or conv.children is None else (conv.children.session_of(call.agent_id))
            )
            if target is not None:
                await self.conn.session_update(
                    session_id=target,
                    update=s.ToolCallProgress(session_update="tool_call_update", tool_call_id=call.id, status="failed"),
                )
            conv.closed.add(call.id)

    def spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
