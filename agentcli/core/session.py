"""A session: what the main agent and its subagents do once put together (``assembly.py`` puts them together from
the settings), stored as they go (``store.py``) and resumable.

Resuming rebuilds the main agent's history, turns and usage, and every child's record and transcript, from the
stored records (``history.py``, through ``assembly.restore``); new events append to the same files. Front ends
reach a session through ``door.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .content import Message, agentcli_note
from .engine import compaction, mentions
from .engine.custom_commands import CustomCommand
from .engine.custom_commands import find as find_command
from .engine.history import Prompt, history_before, user_prompts
from .engine.loop import RunResult
from .engine.skill_tool import SkillTool
from .engine.skills import Skill
from .engine.steering import Steers
from .engine.telemetry import Telemetry
from .errors import ToolError
from .events import ElicitationRequested, Event, HistoryCleared, Notice, Rewound, Sink, ToolCallStarted, Usage
from .lifecycle import Lifecycle
from .lsp.server import LanguageServers
from .mcp import bridge
from .mcp.remote import NO_ONE_TO_ASK, Elicitation, ElicitationAnswer
from .mcp.servers import McpServer
from .mcp.session_servers import McpServers
from .model.catalogue import resolve_model
from .model.llm import LLM, context_window
from .policy.hooks import Hooks
from .policy.permissions import Permissions
from .policy.rules import Rule
from .session_children import SessionChildren
from .session_parts import SessionParts
from .settings import EngineSettings
from .storage import worktrees
from .storage.checkpoints import Checkpoints, Restore
from .storage.store import SessionError, SessionStore, read_records
from .storage.worktrees import WorktreeError
from .system import secret_env
from .system.sandbox import Sandbox
from .system.workspace import Workspace
from .tools import ToolRegistry
from .tools.base import Tool
from .tools.shells import BackgroundShells

if TYPE_CHECKING:  # what a command asks for loads when it is first asked (-p's first request goes without them)
    from .engine.context_usage import ContextUsage
    from .engine.review import Review
    from .policy.status_command import StatusCommand


class Session(SessionChildren, SessionParts):
    """What a front end drives: user text goes in, events come out to ``sink`` and to every subscriber."""

    # The parts, put in place by assembly.py's assemble(), which builds a session from its settings.
    llm: LLM
    permissions: Permissions
    trusted: bool
    interactive: bool
    commands: dict[str, CustomCommand]  # slash commands, skills among them
    skills: dict[str, Skill]
    skill_tool: SkillTool
    sandbox: Sandbox | None
    hooks: Hooks
    lsp: LanguageServers
    mcp: McpServers
    mcp_told: bridge.InstructionsNews  # where the servers' instructions reach the main agent
    lifecycle: Lifecycle
    checkpoints: Checkpoints
    steering: Steers  # the main agent's mailbox (the front ends' steer key)
    mention_sources: list[mentions.MentionSource]  # what '@' completes besides files
    telemetry: Telemetry | None
    opened: list[Event]  # what the session said while it opened (warnings)

    def __init__(
        self,
        settings: EngineSettings,
        workspace: Workspace,
        sink: Sink | None,
        *,
        store: SessionStore | None,
        session_id: str,
    ) -> None:
        """Where the events go, before any part is in place; assembly.py puts the parts in."""
        self.settings = settings
        self.workspace = workspace
        self.sink = sink
        self.subscribers: list[Sink] = []
        self.opening: list[Event] | None = []  # what the session said while it opened (warnings), until open
        self.store = store
        self.id = session_id
        self.restored_events: list[Event] = []  # a resumed session's main transcript, for front ends to draw
        self.asks_user = False  # a front end that answers a server's questions (ElicitationRequested) sets it
        self.prompts = 0  # user prompts sent so far; checkpoints are kept per prompt
        self.system_changes: list[Callable[[str], str]] = []  # applied once it is built: first the flags'
        self._system_prompt: Future[str] | None = None
        self._prompt_warnings: list[str] = []
        self._memory_used: list[str] = []

    def building_system(self, prompt: Future[str], warnings: list[str], memory: list[str]) -> None:
        """The main agent's system prompt, being built in a thread: ``warnings`` (memory files left out) are said
        once it is done, and ``memory`` is the memory section it holds, as /context counts it."""
        self._system_prompt, self._prompt_warnings, self._memory_used = prompt, warnings, memory

    def opened_now(self) -> None:
        """The session is open: what it said until now goes to every subscriber that comes later, first."""
        self.opened, self.opening = self.opening or [], None

    def subscribe(self, sink: Sink) -> None:
        """Send every event from now on to ``sink`` too; first the warnings the session gave while it opened."""
        for event in self.opened:
            sink(event)
        self.subscribers.append(sink)

    async def review(self, target: str = "") -> Review:
        """/review and `agentcli review` (engine/review.py): reviewer children on ``target``, findings checked."""
        from .engine.review import run_review

        await self.system_ready()  # a review takes minutes: when it ends, the user is told, as after a turn
        return await self.lifecycle.turn(run_review(self.main, self.subagents, target, trusted=self.trusted))

    async def worktree(self, action: str, ident: str) -> str:
        """/diff, /merge and /discard: the sentence (or diff) to show. Raises WorktreeError."""
        return await asyncio.to_thread(
            worktrees.act, self.workspace.root, action, ident, self.id, self.subagents.is_running
        )

    async def worktree_root(self, ident: str) -> Path | None:
        """The folder of a subagent's own git worktree, or None when it has none (any more)."""
        try:
            return (await asyncio.to_thread(worktrees.find, self.workspace.root, ident, self.id)).root
        except WorktreeError:
            return None

    def emit(self, event: Event) -> None:
        if isinstance(event, Notice):  # a server's or a hook's words, as shown and stored: never a secret
            event = dataclasses.replace(event, text=secret_env.redact(event.text))
        self.save(lambda store: store.write(event))
        self.deliver(event)
        self.lifecycle.saw(event)

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

    def warn(self, text: str) -> None:
        self.emit(Notice(level="warning", text=text))

    async def ask_user(self, question: Elicitation) -> ElicitationAnswer:
        """A server's question (MCP elicitation): an Elicitation hook answers it, else the user through the
        front end, else (-p, or a front end that cannot ask) it is refused saying why."""
        hooked = await self.hooks.elicitation(question.server, question.message, question.schema, question.url)
        if hooked is not None:
            return ElicitationAnswer(hooked[0], hooked[1])  # type: ignore[arg-type]
        if not self.asks_user:
            return ElicitationAnswer(
                "decline",
                refused=NO_ONE_TO_ASK
                if not self.interactive
                else "this front end cannot ask the user a server's question",
            )
        future: asyncio.Future[dict[str, Any] | str] = asyncio.get_running_loop().create_future()
        self.emit(
            ElicitationRequested(
                server=question.server,
                message=question.message,
                fields=bridge.elicitation_fields(question.schema),
                url=question.url,
                future=future,
            )
        )
        reply = await future
        if isinstance(reply, dict):
            return ElicitationAnswer("accept", reply)
        return ElicitationAnswer("cancel" if reply == "cancel" else "decline")

    def sync_mcp_tools(self, server: McpServer) -> None:
        """A server's tools as listed now, for the main agent and the subagents (two registries after --tools)."""
        bridge.sync_all((self.main.tools, self.subagents.tools), server, self.warn)

    def mcp_turn_boundary(self) -> None:
        """Between turns: offer the tools the servers added and withdraw those they removed since, and put
        their instructions in the system prompt (a turn's tools and prompt never change under it)."""
        for server in self.mcp.take_changed():
            self.sync_mcp_tools(server)
        if self.mcp:  # in the prompt until the model replies, then a note, so the cached prefix holds
            replied = any(message.get("role") == "assistant" for message in self.main.messages)
            self.main.system, note = self.mcp_told.update(self.main.system, replied, self.mcp, self.trusted)
            if note:
                self.main.add_user([agentcli_note(note)], origin="state")

    def start_servers(self) -> None:
        """Start the MCP servers in the background; front ends call it once the first screen is up."""
        self.mcp.start()

    async def send(self, text: str, images: Sequence[dict[str, Any]] = ()) -> RunResult:
        """Run the main agent on one user message: ``/name args`` runs a custom command's prompt; ``images``
        (blocks from ``images.from_block``) and the workspace's images it names go with it. A UserPromptSubmit
        hook may block the message or add context to it. Headless, the first message waits for the MCP
        servers to start (each at most ``mcp_startup_timeout``); a front end with a user goes on without them."""
        await self.system_ready()
        if self.interactive:
            self.mcp.start()
        else:
            await self.mcp.wait_started()
        self.mcp_turn_boundary()
        called = find_command(self.commands, text)
        prompt = called[0].expand(called[1]) if called else text
        attachments: list[dict[str, Any]] = []
        try:
            if not called and (from_server := await bridge.expand_prompt(self.mcp, text)) is not None:
                prompt, attachments = from_server
        except ToolError as exc:
            self.warn(str(exc))
            return RunResult(str(exc), "refused", self.main.turns)
        started = await self.lifecycle.starting()  # SessionStart (and after /clear SessionEnd) hooks
        verdict = await self.hooks.prompt_submitted(prompt)
        if verdict.blocked:
            blocked = f"A UserPromptSubmit hook blocked this message: {verdict.blocked}"
            self.emit(Notice(level="warning", text=blocked))
            return RunResult(blocked, "refused", self.main.turns)
        self.prompts += 1
        self.checkpoints.begin(self.prompts)
        attachments += await self.attachments(prompt) + await bridge.attach_resources(self.mcp, prompt, self.warn)
        command, model = called[0] if called else None, self.main.model
        added = self.command_rules(command) if command else []
        try:
            if command and command.model:
                self.main.model = resolve_model(command.model)
            return await self.lifecycle.turn(
                self.main.run(prompt, started + verdict.added("UserPromptSubmit"), [*images, *attachments])
            )
        finally:  # a command's allowed-tools, and those of skills loaded in the turn, end with it
            self.main.model = model
            added += self.skill_tool.granted
            self.skill_tool.granted.clear()
            self.permissions.turn_rules = [r for r in self.permissions.turn_rules if r not in added]

    def command_rules(self, command: CustomCommand) -> list[Rule]:
        """Add a command's allowed-tools as rules for its turn; returns those added. A workspace's own
        command file widens nothing unless the workspace is trusted (a warning says so)."""
        if not command.allowed_tools:
            return []
        if command.project and not self.trusted:
            self.emit(
                Notice(
                    level="warning",
                    text=f"/{command.name}: this workspace is not trusted, so the "
                    f"allowed-tools of {command.source} do not apply; its tools "
                    "ask as usual.",
                )
            )
            return []
        added = [rule for rule in map(Rule.parse, command.allowed_tools) if rule not in self.permissions.turn_rules]
        self.permissions.turn_rules += added
        return added

    def mention_choices(self) -> list[mentions.Mention]:
        """The names '@' completes besides the workspace's files: agent types, subagents, …"""
        return [choice for source in self.mention_sources for choice in source.choices()]

    async def attachments(self, text: str) -> list[dict[str, Any]]:
        """What a prompt brings along (``mentions.expand``), as blocks; one that cannot go is a warning."""

        def denied(path: Path) -> str:
            return self.permissions.read_denial(path, self.workspace.root)

        found = await asyncio.to_thread(mentions.expand, text, self.workspace, self.mention_sources, denied=denied)
        for warning in found.warnings:
            self.emit(Notice(level="warning", text=warning))
        return found.blocks

    def prompt_list(self) -> list[Prompt]:
        """The user's prompts so far (from the session file), for /rewind."""
        if self.store is None:
            return []
        records, _ = read_records(self.store.main_path)
        return user_prompts(records)

    def rewind(self, number: int, *, conversation: bool, files: bool, overwrite: bool = False) -> Restore:
        """Go back to just before prompt ``number``: its files, its conversation, or both.

        Files the user changed by hand since an agent wrote them are left alone and listed, unless
        ``overwrite``. Raises SessionError with one sentence when there is no such prompt."""
        prompts = self.prompt_list()
        if not 1 <= number <= len(prompts):
            raise SessionError(f"There is no prompt {number} to rewind to; this session has {len(prompts)}.")
        restore = self.checkpoints.restore(number, overwrite=overwrite, dry_run=not files)
        if files and restore.restored:
            self.emit(
                Notice(
                    level="info",
                    text=f"Restored {len(restore.restored)} file"
                    f"{'s' if len(restore.restored) != 1 else ''} to before prompt {number}: "
                    + ", ".join(restore.restored),
                )
            )
        if conversation:
            assert self.store is not None
            records, _ = read_records(self.store.main_path)
            self.main.messages = history_before(records, number)
            self.main.last_usage = Usage()
            self.emit(Rewound(to_prompt=number, prompt=prompts[number - 1].text, messages=self.main.messages))
        return restore

    async def read_results(self) -> RunResult | None:
        """A turn of the main agent on the background results waiting for it (front ends start one when the
        main agent is idle); None when none is waiting."""
        if not self.subagents.pending:
            return None
        await self.system_ready()
        self.mcp_turn_boundary()
        return await self.lifecycle.turn(self.main.run(None))

    async def finish_background(self) -> RunResult | None:
        """Wait for every background child, letting the main agent read each result (-p, piped line mode).
        Returns the main agent's last turn, None when nothing was waiting."""
        last = None
        while self.subagents.background_running or self.subagents.pending:
            await self.subagents.wait_background()
            last = await self.read_results() or last
        return last

    async def system_ready(self) -> None:
        """Wait for the main agent's system prompt, built in a thread since the session opened."""
        if self._system_prompt is not None:
            system = await asyncio.wrap_future(self._system_prompt)
            for change in self.system_changes:
                system = change(system)
            self.main.system, self._system_prompt = system, None
            skipped, self._prompt_warnings = self._prompt_warnings, []
            for text in skipped:
                self.emit(Notice(level="warning", text=text))

    def change_system(self, change: Callable[[str], str]) -> None:
        """Change the main agent's system prompt (-p's --system-prompt and friends), once it is built."""
        if self._system_prompt is None:
            self.main.system = change(self.main.system)
        else:
            self.system_changes.append(change)

    def clear(self) -> None:
        """Start a fresh conversation with the same settings; the store keeps what came before."""
        self.main.messages = []
        self.main.last_usage, self.main.ledger = Usage(), compaction.Ledger()
        self.lifecycle.cleared()
        self.emit(HistoryCleared())

    async def compact(self, focus: str = "") -> bool:
        """Summarize the main agent's older turns now (/compact). False when there is too little to compact."""
        await self.system_ready()
        return await compaction.compact(self.main, focus, reason=compaction.MANUAL)

    def set_model(self, model: str) -> None:
        """Switch the main agent's model, and the one subagents of type ``model: inherit`` use."""
        self.main.model = self.llm.model = resolve_model(model)

    def add_tool(self, tool: Tool) -> None:
        """One more tool for the main agent (--json-schema's answer tool)."""
        self.main.tools.add(tool)

    def only_tools(self, names: Iterable[str]) -> None:
        """Offer the main agent and the subagents only these tools (--tools)."""
        self.main.tools = self.main.tools.only(names)
        self.subagents.tools = self.subagents.tools.only(names)

    @property
    def model(self) -> str:
        return self.main.model

    @property
    def tools(self) -> ToolRegistry:
        return self.main.tools

    @property
    def shells(self) -> BackgroundShells:
        return self.main.ctx.shells

    @property
    def max_turns(self) -> int:
        return self.main.max_turns

    @property
    def turns(self) -> int:
        return self.main.turns

    @property
    def messages(self) -> list[Message]:
        return self.main.messages

    def last_text(self) -> str:
        return self.main.last_text()

    @property
    def main_usage(self) -> Usage:
        return self.main.usage

    @property
    def last_usage(self) -> Usage:
        """The main agent's latest call (the status line's current_usage)."""
        return self.main.last_usage

    def call_started(self, block: dict[str, Any]) -> ToolCallStarted:
        """The event for a ``tool_use`` block of the history, as the loop emitted it (to redraw a history)."""
        tools, name, args = self.main.tools, block["name"], block.get("input", {})
        return ToolCallStarted(id=block["id"], name=name, input=args, **tools.described(name, args))

    def status_command(self) -> StatusCommand | None:
        """The statusLine setting's command, ready to run (ui/status_line.py says when); None without one."""
        from .policy.status_command import StatusCommand

        return StatusCommand.from_setting(
            self.settings.status_line,
            self.workspace.root,
            sandbox=self.sandbox,
            keep_secret_env=self.settings.tools.keep_secret_env,
        )

    def context_used(self) -> int:
        """Tokens the main context held at the latest call."""
        return self.main.last_usage.context_tokens

    def context_window(self) -> int:
        return context_window(self.main.model)

    async def context_usage(self) -> ContextUsage:
        """/context: what the next request holds, part by part (engine/context_usage.py)."""
        from .engine.context_usage import context_usage

        await self.system_ready()
        memory = "".join(self._memory_used)  # as the prompt was built, even if the files changed since
        return await context_usage(
            self.llm,
            model=self.main.model,
            system=self.main.system,
            memory=memory,
            tools=self.main.offered(),
            messages=self.main.messages,
            window=self.context_window(),
            kept_out=self.tokens_kept_out,
        )

    @property
    def usage(self) -> Usage:
        return self.main.usage + self.subagents.usage

    def close(self) -> None:
        if self.telemetry is not None:
            self.telemetry.close()
            self.telemetry = None
        if self.store is not None:
            self.store.close()
        if self.sandbox is not None:
            self.sandbox.close()

    async def aclose(self, reason: str = "other") -> None:
        """Run the SessionEnd hooks (``reason``: Claude Code's), stop background shells, MCP and language servers,
        close(), and the model client's connections too (front ends that own the event loop). Children still running
        end as ``interrupted``, their transcripts kept."""
        await self.lifecycle.end(reason)
        await self.subagents.interrupt_all()
        await self.main.ctx.shells.stop_all()
        await asyncio.gather(self.mcp.stop(), self.lsp.stop())
        self.close()
        await self.llm.aclose()
