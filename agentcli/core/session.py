"""A session: the main agent and its subagents, stored as they go (``store.py``) and resumable.

Resuming rebuilds the main agent's history, turns and usage, and every child's record and transcript, from the
stored records (``history.py``); new events append to the same files.
"""

from __future__ import annotations

import asyncio
import dataclasses
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from . import images as images  # front ends check the images a program sends (images.from_block)
from .system import secret_env
from .system.secret_env import command_env
from .lifecycle import Lifecycle
from .storage import worktrees
from .engine.agents import AgentFileError, AgentType, agent_from_definition, load_agent_types
from .storage.checkpoints import Checkpoint, Checkpoints, Restore
from .storage.worktrees import WorktreeError
from .engine.context import main_system_prompt
from .engine.mode_note import ModeNews
from .engine.context_usage import ContextUsage, context_usage
from .engine.custom_commands import CustomCommand, find as find_command, load_commands
from .events import (MAIN, ElicitationRequested, Event, HistoryCleared, LanguageServerWorking, ModeChanged, Notice, Rewound, Sink, SubagentFinished, SubagentStarted, ToolCallStarted, Usage)
from .engine.history import (Prompt, agent_state, ended, history_before, replay_events, subagent_record, user_prompts, undelivered)
from .tool_facts import claude_name
from .policy.hooks import EVENTS as HOOK_EVENTS, Hook, Hooks, parse_hooks
from .model.catalogue import MODEL_ALIASES as MODEL_ALIASES, resolve_model  # ACP's model picker lists them
from .model.llm import LLM, MISSING_KEY_MESSAGE, LLMError, MissingCredentials, context_window, resolve_credentials
from .content import agentcli_note
from .mcp import bridge
from .mcp.bridge import elicitation_answer
from .mcp.config import ServerConfig
from .mcp.remote import NO_ONE_TO_ASK, Elicitation, ElicitationAnswer, RemoteResource
from .mcp.servers import McpServer, McpServers
from .mcp.tool import tool_name as mcp_tool_name
from .engine.loop import Agent, RunResult
from .engine.review import Review, ReviewTargetError, run_review
from .engine import compaction, mentions, telemetry
from .engine.mentions import Mention, WorkspaceFiles, complete as complete_mentions
from .policy.permissions import MODES, Permissions
from .policy.rules import Rule
from .policy.status_command import StatusCommand
from .system.sandbox import Sandbox
from .lsp.tool import EditDiagnostics, LspTool, language_servers
from .engine.skill_tool import SkillTool
from .engine.skills import Skill, catalog, load_skills
from .engine.subagent_record import Budgets, SubagentRecord
from .engine.subagents import Subagents
from .engine.task_tool import MessageSubagent, TaskTool
from .storage.store import (SessionError, SessionInfo, SessionStore, child_records, find_session, latest_session, list_sessions, new_session_id, open_store, project_dir, read_records)
from .system.threads import in_thread
from .tools import ToolContext, ToolRegistry, call_summary, default_tools, web_search
from .tools.base import EditorFiles as EditorFiles  # front ends implement it (ui/acp/editor.py)
from .tools.shells import BackgroundShells
from .tools.structured_output import StructuredOutput
from .errors import ToolError as ToolError  # also what a front end's EditorFiles raises
from .tools.worktrees import WorktreeAction, WorktreeDiff
from .system.git import is_git_repo
from .system.workspace import Workspace
from .settings import EngineSettings
from .surface import SessionSurface
from .session_children import SessionChildren

__all__ = ["Session", "SessionSurface", "SessionError", "SessionStore", "EngineSettings", "new_session_id", "open_session",
           # what front ends use besides the session and its events (tests/core/test_layers.py keeps ui/ to this)
           "AgentType", "LLM", "LLMError", "MISSING_KEY_MESSAGE", "MODES", "MissingCredentials", "SubagentRecord", "ToolRegistry", "Workspace", "call_summary", "load_agent_types", "resolve_credentials",
           "Checkpoint", "Prompt", "Restore", "WorktreeError", "McpServers", "ServerConfig", "mcp_tool_name", "RemoteResource", "ContextUsage",
           "CustomCommand", "find_command", "SessionInfo", "list_sessions", "Skill", "StatusCommand", "replay_events", "subagent_record",
           "Mention", "WorkspaceFiles", "complete_mentions", "elicitation_answer",  # what '@' completes (engine/mentions.py)
           # what a host program's control protocol registers (ui/stream_input.py)
           "AgentFileError", "agent_from_definition", "claude_name", "HOOK_EVENTS", "Hook", "StructuredOutput",
           "Review", "ReviewTargetError"]  # /review's outcome, and why a target names nothing to review


class Session(SessionChildren):
    """What a front end drives: user text goes in, events come out to ``sink`` and to every subscriber."""

    def __init__(self, settings: EngineSettings, workspace: Workspace, sink: Sink | None, *, interactive: bool,
                 llm: LLM | None = None, session_id: str | None = None, store: bool = True,
                 resume: str | None = None, fork_session: bool = False, editor: EditorFiles | None = None) -> None:
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
            self.store, notices = open_store(workspace.root, settings.model, session_id=session_id, resume=saved,
                                             fork_session=fork_session)
        self.id = self.store.session_id if self.store else session_id or new_session_id()
        self.llm = llm or LLM(model=settings.model, max_tokens=settings.max_tokens, retries=settings.api_retries,
                              stall_timeout=settings.stall_timeout, first_reply_timeout=settings.first_reply_timeout,
                              thinking=settings.thinking, thinking_budget=settings.max_thinking_tokens)
        self.llm.fallback_model, self.llm.effort = settings.fallback_model, settings.effort  # -p's flags
        self.llm.raw_events = settings.partial_messages  # stream-json's partial messages
        self.llm.use_tool_search(settings.tool_search)  # the route to tools on demand
        self.permissions = Permissions.from_settings(settings.permission_mode, settings.permissions,
                                                     interactive or settings.host_answers_approvals)
        self.permissions.on_mode = lambda mode: self.emit(ModeChanged(mode=mode))  # stored: session/load goes on in it
        self.trusted = settings.trusted
        sources, plugins = settings.setting_sources, settings.plugins  # --setting-sources; engine/plugins.py
        agent_types = load_agent_types(workspace.root, notices, trusted=self.trusted, sources=sources, plugins=plugins)
        self.commands = load_commands(workspace.root, notices, sources=sources, plugins=plugins)  # slash commands
        self.skills = load_skills(workspace.root, notices, trusted=self.trusted, sources=sources, plugins=plugins)
        self.commands |= {name: s.as_command() for name, s in self.skills.items() if name not in self.commands}
        self.skill_tool = SkillTool(self.skills, self.trusted)
        self.sandbox = Sandbox.for_setting(settings.sandbox, network=settings.sandbox_network,
                                           allowed_hosts=settings.sandbox_allowed_hosts)
        if self.sandbox is not None and (missing := self.sandbox.startup_notice()):
            notices.append(missing)
        self.hooks = Hooks(parse_hooks(settings.hooks, "hooks"), root=workspace.root,
                           emit=self.emit, session_id=self.id, keep_secret_env=settings.tools.keep_secret_env,
                           transcript_path=str(self.store.main_path) if self.store else "", sandbox=self.sandbox)
        self.hooks.permission_mode = lambda: self.permissions.mode
        in_git = is_git_repo(workspace.root)
        worktree_tools = [WorktreeDiff(self.id), WorktreeAction(self.id)] if in_git else []
        skill_tools = [self.skill_tool] if self.skills else []
        self.lsp = language_servers(settings.lsp, settings.lsp_discover, settings.plugin_lsp, settings.lsp_timeout,
                                    workspace.root, command_env(settings.tools.keep_secret_env), self.sandbox,
                                    on_progress=lambda text: self.deliver(LanguageServerWorking(text=text)))
        tools = ToolRegistry([*default_tools(workspace.root), TaskTool(agent_types), MessageSubagent(), *worktree_tools,
                              *skill_tools, *([LspTool(self.lsp)] if self.lsp else []),
                              *web_search.offer(settings.web_search, self.llm, self.permissions, self.hooks)])
        self.interactive = interactive
        self.mcp = McpServers(settings.mcp_servers, root=workspace.root,
                              env=command_env(settings.tools.keep_secret_env), sandbox=self.sandbox,
                              startup_timeout=settings.mcp_startup_timeout, tool_timeout=settings.mcp_tool_timeout,
                              on_ready=lambda server: self.sync_mcp_tools(server),
                              on_trouble=self.warn, ask=self.ask_user,
                              roots=lambda: [workspace.root, *workspace.extra_dirs],
                              log=project_dir(workspace.root) / self.id / "mcp.log" if self.store else None)
        self.mcp_told = bridge.InstructionsNews()  # where the servers' instructions reach the main agent
        self.asks_user = False  # a front end that answers a server's questions (ElicitationRequested) sets it
        self.subagents = Subagents(
            llm=self.llm, tools=tools, agent_types=agent_types, type_settings=settings.agents,
            budgets=Budgets(settings.subagent_max_turns, settings.subagent_timeout, settings.max_parallel_subagents),
            compact_threshold=settings.compact_threshold, task_models=list(settings.task_models))
        self.subagents.budget_usd = settings.max_budget_usd or None  # near it children wind down, none starts
        self.subagents.spent = lambda: self.usage.cost or 0.0  # the whole session's: the main agent's too
        self.subagents.transcript_of = lambda child: str(self.store.path_for(child)) if self.store else ""
        self.lifecycle = Lifecycle(self.hooks, "resume" if resume else "startup", interactive, self.subagents.records)
        self.subagents.worktree_place = worktrees.Place(project_dir(workspace.root) / self.id / "worktrees", self.id,
                                                        self.store.main_path if self.store else None)
        mb = 1024 * 1024
        self.checkpoints = Checkpoints(workspace.root, self.store.checkpoint_dir if self.store else None,
                                       max_file_bytes=int(settings.checkpoint_file_max_mb * mb),
                                       max_total_bytes=int(settings.checkpoint_session_max_mb * mb))
        self.prompts = 0  # user prompts sent so far; checkpoints are kept per prompt
        ctx = ToolContext(workspace=workspace, emit=self.emit, permissions=self.permissions,
                          subagents=self.subagents, settings=settings.tools,
                          output_dir=self.store.output_dir if self.store else None, checkpoints=self.checkpoints,
                          hooks=self.hooks, sandbox=self.sandbox, edit_watch=EditDiagnostics(self.lsp) if self.lsp else None,
                          editor=editor)
        # The prompt's git snapshot runs git a few times: off the way to the first screen, ready before
        # the first model call (system_ready()).
        mode = self.permissions.mode
        skipped: list[str] = []  # memory files left out, said once the prompt is built
        listed = catalog(self.skills.values())
        self._memory_used: list[str] = []  # the memory section the prompt holds, as /context counts it
        self._system_prompt: Future[str] | None = in_thread(
            lambda: main_system_prompt(workspace, mode, interactive, skipped, listed, self._memory_used),
            "session-prep")
        self._prompt_warnings = skipped
        self.system_changes: list[Callable[[str], str]] = []  # applied once it is built: first the flags'
        if settings.system_prompt:  # the Agent SDK passes --system-prompt "" when given none: agentcli's own stays
            self.system_changes.append(lambda system: settings.system_prompt)
        if settings.append_system_prompt:
            self.system_changes.append(lambda system: f"{system}\n\n{settings.append_system_prompt}")
        if workspace.extra_dirs:  # --add-dir
            folders = ", ".join(str(d) for d in workspace.extra_dirs)
            self.system_changes.append(lambda system: f"{system}\n\nBesides the workspace, the tools may use these "
                                                      f"folders (absolute paths): {folders}")
        self.main = Agent(llm=self.llm, tools=tools, ctx=ctx, system="",
                          max_turns=settings.max_turns, compact_threshold=settings.compact_threshold)
        self.main.inbox = lambda: self.subagents.take_results(self.emit)  # background results, as they finish
        self.main.notes = ModeNews(self.permissions)  # a mode change, as a note at the request's end
        self.steering = self.main.steers  # what the user sends into the running turn (the front ends' steer key)
        if settings.only_tools is not None:  # --tools
            self.only_tools(settings.only_tools)
        # What '@' completes besides files, and what each mention adds to a message (engine/mentions.py);
        # an MCP resource (@server:uri) is only named here: sending attaches it (bridge.attach_resources).
        self.mention_sources: list[mentions.MentionSource] = [
            mentions.AgentTypes(lambda: self.subagents.agent_types),
            mentions.SubagentReceipts(lambda: self.subagents.records), mentions.McpResources(self.mcp.resources)]
        if resume is not None and self.store is not None:
            notices += self.restore()
        if in_git and interactive:
            notices += worktrees.leftover_warning(workspace.root, self.id)
        # None unless OTEL_* asks for traces; environ(): the collector's headers are held as secrets
        self.telemetry = telemetry.start(secret_env.environ(), notices.append, self.id)
        if self.telemetry is not None:
            self.subscribers.append(self.telemetry)
        for text in [*settings.notices, *notices]:  # settings.notices: e.g. what an untrusted workspace asked for
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
        self.main.ledger = compaction.Ledger.from_dict(state.ledger)
        self.prompts = len(user_prompts(records))
        self.restored_events = [e for e in replay_events(records)
                                if e.agent_id == MAIN or isinstance(e, (SubagentStarted, SubagentFinished))]
        children, child_warnings = child_records(self.store.main_path)
        for agent_id, child in children.items():
            record = subagent_record(child, agent_id)
            if record is None:
                continue
            self.subagents.records[agent_id] = record
            if not ended(child):  # died with the process
                self.save(lambda store: store.write(record.events[-1]))  # noqa: B023 (save calls it at once)
                self.restored_events.append(record.events[-1])
            if undelivered(records, agent_id):  # a background result the main agent never read: next call, once
                self.subagents.pending.append(record)
        numbers = [int(i.removeprefix("sa-")) for i in children if i.removeprefix("sa-").isdigit()]
        self.subagents.next_number = max(numbers, default=0) + 1
        return warnings + child_warnings

    async def review(self, target: str = "") -> Review:
        """/review and `agentcli review` (engine/review.py): reviewer children on ``target``, findings checked."""
        await self.system_ready()  # a review takes minutes: when it ends, the user is told, as after a turn
        return await self.lifecycle.turn(run_review(self.main, self.subagents, target, trusted=self.trusted))

    async def worktree(self, action: str, ident: str) -> str:
        """/diff, /merge and /discard: the sentence (or diff) to show. Raises WorktreeError."""
        return await asyncio.to_thread(worktrees.act, self.workspace.root, action, ident, self.id,
                                       self.subagents.is_running)

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
            return ElicitationAnswer("decline", refused=NO_ONE_TO_ASK if not self.interactive else
                                     "this front end cannot ask the user a server's question")
        future: asyncio.Future[dict[str, Any] | str] = asyncio.get_running_loop().create_future()
        self.emit(ElicitationRequested(server=question.server, message=question.message,
                                       fields=bridge.elicitation_fields(question.schema), url=question.url,
                                       future=future))
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
            return await self.lifecycle.turn(self.main.run(prompt, started + verdict.added("UserPromptSubmit"),
                                                           [*images, *attachments]))
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
            self.emit(Notice(level="warning", text=f"/{command.name}: this workspace is not trusted, so the "
                                                   f"allowed-tools of {command.source} do not apply; its tools "
                                                   "ask as usual."))
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
            self.emit(Notice(level="info", text=f"Restored {len(restore.restored)} file"
                             f"{'s' if len(restore.restored) != 1 else ''} to before prompt {number}: "
                             + ", ".join(restore.restored)))
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
    def messages(self) -> list[dict[str, Any]]:
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
        return StatusCommand.from_setting(self.settings.status_line, self.workspace.root,
                                          sandbox=self.sandbox, keep_secret_env=self.settings.tools.keep_secret_env)

    def context_used(self) -> int:
        """Tokens the main context held at the latest call."""
        return self.main.last_usage.context_tokens

    def context_window(self) -> int:
        return context_window(self.main.model)

    async def context_usage(self) -> ContextUsage:
        """/context: what the next request holds, part by part (engine/context_usage.py)."""
        await self.system_ready()
        memory = "".join(self._memory_used)  # as the prompt was built, even if the files changed since
        return await context_usage(self.llm, model=self.main.model, system=self.main.system, memory=memory,
                                   tools=self.main.offered(), messages=self.main.messages,
                                   window=self.context_window(), kept_out=self.tokens_kept_out)

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


def open_session(settings: EngineSettings, workspace: Workspace, sink: Sink | None, *, interactive: bool, llm: LLM | None = None,
                 resume: str | None = None, continue_: bool = False, session_id: str | None = None,
                 fork_session: bool = False, editor: EditorFiles | None = None) -> SessionSurface:
    """What every front end calls: a new session, ``resume`` a given one (id or unique prefix), or
    ``continue_`` the latest one of this workspace; ``editor``: a client's buffers the file tools go through
    (core/tools/editor_files.py). Raises SessionError with one sentence."""
    if resume is None and continue_:
        resume = latest_session(workspace.root).stem
    return Session(settings, workspace, sink, interactive=interactive, llm=llm, resume=resume, session_id=session_id,
                   fork_session=fork_session, editor=editor)
