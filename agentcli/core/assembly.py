"""A session put together from the settings and its parts: the model client, the permissions, the hooks, the
sandbox, the tools, the MCP and language servers, the main agent and its subagents, the store and, on resume,
what the store kept. ``session.py``'s ``Session`` is what a session does once it is put together; this is the
one place that knows which part needs which (front ends open one through ``door.open_session``).
"""

from __future__ import annotations

import functools

from .engine import compaction, mentions, telemetry
from .engine.agents import load_agent_types
from .engine.context import main_system_prompt
from .engine.custom_commands import load_commands
from .engine.history import agent_state, ended, replay_events, subagent_record, undelivered, user_prompts
from .engine.loop import Agent
from .engine.mode_note import ModeNews
from .engine.skill_tool import SkillTool
from .engine.skills import catalog, load_skills
from .engine.subagent_record import Budgets
from .engine.subagents import Subagents
from .engine.task_tool import MessageSubagent, TaskTool
from .events import MAIN, LanguageServerWorking, ModeChanged, Notice, Sink, SubagentFinished, SubagentStarted
from .lifecycle import Lifecycle
from .lsp.tool import EditDiagnostics, LspTool, language_servers
from .mcp import bridge
from .mcp.session_servers import McpServers
from .model.llm import LLM
from .policy.hooks import Hooks, parse_hooks
from .policy.permissions import Permissions
from .session import Session
from .settings import EngineSettings
from .storage import worktrees
from .storage.checkpoints import Checkpoints
from .storage.store import (
    child_records,
    find_session,
    latest_session,
    new_session_id,
    open_store,
    project_dir,
    read_records,
)
from .surface import SessionSurface
from .system import secret_env
from .system.git import is_git_repo
from .system.sandbox import Sandbox
from .system.secret_env import command_env
from .system.threads import in_thread
from .system.workspace import Workspace
from .tools import ToolContext, ToolRegistry, default_tools, web_search
from .tools.base import EditorFiles
from .tools.worktrees import WorktreeAction, WorktreeDiff


def open_session(
    settings: EngineSettings,
    workspace: Workspace,
    sink: Sink | None,
    *,
    interactive: bool,
    llm: LLM | None = None,
    resume: str | None = None,
    continue_: bool = False,
    session_id: str | None = None,
    fork_session: bool = False,
    editor: EditorFiles | None = None,
) -> SessionSurface:
    """What every front end calls: a new session, ``resume`` a given one (id or unique prefix), or
    ``continue_`` the latest one of this workspace; ``editor``: a client's buffers the file tools go through
    (core/tools/editor_files.py). Raises SessionError with one sentence."""
    if resume is None and continue_:
        resume = latest_session(workspace.root).stem
    return assemble(
        settings,
        workspace,
        sink,
        interactive=interactive,
        llm=llm,
        resume=resume,
        session_id=session_id,
        fork_session=fork_session,
        editor=editor,
    )


def assemble(
    settings: EngineSettings,
    workspace: Workspace,
    sink: Sink | None,
    *,
    interactive: bool,
    llm: LLM | None = None,
    session_id: str | None = None,
    store: bool = True,
    resume: str | None = None,
    fork_session: bool = False,
    editor: EditorFiles | None = None,
) -> Session:
    """A session with every part in place. ``resume``: the id (or a unique prefix) of a saved session of this
    workspace to carry on. Raises SessionError when there is none; forks into a copy when another process has
    it open. ``store=False``: nothing is saved."""
    notices: list[str] = []
    kept = None
    if store:
        saved = find_session(workspace.root, resume) if resume is not None else None
        kept, notices = open_store(
            workspace.root, settings.model, session_id=session_id, resume=saved, fork_session=fork_session
        )
    session = Session(
        settings, workspace, sink, store=kept, session_id=kept.session_id if kept else session_id or new_session_id()
    )
    session.llm = llm or LLM(
        model=settings.model,
        max_tokens=settings.max_tokens,
        retries=settings.api_retries,
        stall_timeout=settings.stall_timeout,
        first_reply_timeout=settings.first_reply_timeout,
        thinking=settings.thinking,
        thinking_budget=settings.max_thinking_tokens,
    )
    session.llm.fallback_model, session.llm.effort = settings.fallback_model, settings.effort  # -p's flags
    session.llm.raw_events = settings.partial_messages  # stream-json's partial messages
    session.llm.use_tool_search(settings.tool_search)  # the route to tools on demand
    session.permissions = Permissions.from_settings(
        settings.permission_mode, settings.permissions, interactive or settings.host_answers_approvals
    )
    session.permissions.on_mode = lambda mode: session.emit(
        ModeChanged(mode=mode)
    )  # stored: session/load goes on in it
    session.trusted = trusted = settings.trusted
    sources, plugins = settings.setting_sources, settings.plugins  # --setting-sources; engine/plugins.py
    agent_types = load_agent_types(workspace.root, notices, trusted=trusted, sources=sources, plugins=plugins)
    session.commands = load_commands(workspace.root, notices, sources=sources, plugins=plugins)  # slash commands
    session.skills = load_skills(workspace.root, notices, trusted=trusted, sources=sources, plugins=plugins)
    session.commands |= {name: s.as_command() for name, s in session.skills.items() if name not in session.commands}
    session.skill_tool = SkillTool(session.skills, trusted)
    session.sandbox = sandbox = Sandbox.for_setting(
        settings.sandbox, network=settings.sandbox_network, allowed_hosts=settings.sandbox_allowed_hosts
    )
    if sandbox is not None and (missing := sandbox.startup_notice()):
        notices.append(missing)
    session.hooks = Hooks(
        parse_hooks(settings.hooks, "hooks"),
        root=workspace.root,
        emit=session.emit,
        session_id=session.id,
        keep_secret_env=settings.tools.keep_secret_env,
        transcript_path=str(kept.main_path) if kept else "",
        sandbox=sandbox,
    )
    session.hooks.permission_mode = lambda: session.permissions.mode
    in_git = is_git_repo(workspace.root)
    worktree_tools = [WorktreeDiff(session.id), WorktreeAction(session.id)] if in_git else []
    skill_tools = [session.skill_tool] if session.skills else []
    session.lsp = language_servers(
        settings.lsp,
        settings.lsp_discover,
        settings.plugin_lsp,
        settings.lsp_timeout,
        workspace.root,
        functools.partial(command_env, settings.tools.keep_secret_env),
        sandbox,
        on_progress=lambda text: session.deliver(LanguageServerWorking(text=text)),
    )
    tools = ToolRegistry(
        [
            *default_tools(workspace.root),
            TaskTool(agent_types),
            MessageSubagent(),
            *worktree_tools,
            *skill_tools,
            *([LspTool(session.lsp)] if session.lsp else []),
            *web_search.offer(settings.web_search, session.llm, session.permissions, session.hooks),
        ]
    )
    session.interactive = interactive
    session.mcp = McpServers(
        settings.mcp_servers,
        root=workspace.root,
        env=command_env(settings.tools.keep_secret_env),
        sandbox=sandbox,
        startup_timeout=settings.mcp_startup_timeout,
        tool_timeout=settings.mcp_tool_timeout,
        on_ready=lambda server: session.sync_mcp_tools(server),
        on_trouble=session.warn,
        ask=session.ask_user,
        roots=lambda: [workspace.root, *workspace.extra_dirs],
        log=project_dir(workspace.root) / session.id / "mcp.log" if kept else None,
    )
    session.mcp_told = bridge.InstructionsNews()  # where the servers' instructions reach the main agent
    session.subagents = subagents = Subagents(
        llm=session.llm,
        tools=tools,
        agent_types=agent_types,
        type_settings=settings.agents,
        budgets=Budgets(settings.subagent_max_turns, settings.subagent_timeout, settings.max_parallel_subagents),
        compact_threshold=settings.compact_threshold,
        task_models=list(settings.task_models),
    )
    subagents.budget_usd = settings.max_budget_usd or None  # near it children wind down, none starts
    subagents.spent = lambda: session.usage.cost or 0.0  # the whole session's: the main agent's too
    subagents.transcript_of = lambda child: str(kept.path_for(child)) if kept else ""
    session.lifecycle = Lifecycle(session.hooks, "resume" if resume else "startup", interactive, subagents.records)
    subagents.worktree_place = worktrees.Place(
        project_dir(workspace.root) / session.id / "worktrees", session.id, kept.main_path if kept else None
    )
    mb = 1024 * 1024
    session.checkpoints = Checkpoints(
        workspace.root,
        kept.checkpoint_dir if kept else None,
        max_file_bytes=int(settings.checkpoint_file_max_mb * mb),
        max_total_bytes=int(settings.checkpoint_session_max_mb * mb),
    )
    ctx = ToolContext(
        workspace=workspace,
        emit=session.emit,
        permissions=session.permissions,
        subagents=subagents,
        settings=settings.tools,
        output_dir=kept.output_dir if kept else None,
        checkpoints=session.checkpoints,
        hooks=session.hooks,
        sandbox=sandbox,
        edit_watch=EditDiagnostics(session.lsp) if session.lsp else None,
        editor=editor,
    )
    # The prompt's git snapshot runs git a few times: off the way to the first screen, ready before
    # the first model call (Session.system_ready()).
    mode = session.permissions.mode
    skipped: list[str] = []  # memory files left out, said once the prompt is built
    listed = catalog(session.skills.values())
    memory_used: list[str] = []  # the memory section the prompt holds, as /context counts it
    session.building_system(
        in_thread(
            lambda: main_system_prompt(workspace, mode, interactive, skipped, listed, memory_used), "session-prep"
        ),
        skipped,
        memory_used,
    )
    if settings.system_prompt:  # the Agent SDK passes --system-prompt "" when given none: agentcli's own stays
        session.system_changes.append(lambda system: settings.system_prompt)
    if settings.append_system_prompt:
        session.system_changes.append(lambda system: f"{system}\n\n{settings.append_system_prompt}")
    if workspace.extra_dirs:  # --add-dir
        folders = ", ".join(str(d) for d in workspace.extra_dirs)
        session.system_changes.append(
            lambda system: (
                f"{system}\n\nBesides the workspace, the tools may use these folders (absolute paths): {folders}"
            )
        )
    session.main = main = Agent(
        llm=session.llm,
        tools=tools,
        ctx=ctx,
        system="",
        max_turns=settings.max_turns,
        compact_threshold=settings.compact_threshold,
    )
    main.inbox = lambda: subagents.take_results(session.emit)  # background results, as they finish
    main.notes = ModeNews(session.permissions)  # a mode change, as a note at the request's end
    session.steering = main.steers  # what the user sends into the running turn (the front ends' steer key)
    if settings.only_tools is not None:  # --tools
        session.only_tools(settings.only_tools)
    # What '@' completes besides files, and what each mention adds to a message (engine/mentions.py);
    # an MCP resource (@server:uri) is only named here: sending attaches it (bridge.attach_resources).
    session.mention_sources = [
        mentions.AgentTypes(lambda: subagents.agent_types),
        mentions.SubagentReceipts(lambda: subagents.records),
        mentions.McpResources(session.mcp.resources),
    ]
    if resume is not None and kept is not None:
        notices += restore(session)
    if in_git and interactive:
        notices += worktrees.leftover_warning(workspace.root, session.id)
    # None unless OTEL_* asks for traces; environ(): the collector's headers are held as secrets
    session.telemetry = telemetry.start(secret_env.environ(), notices.append, session.id)
    if session.telemetry is not None:
        session.subscribers.append(session.telemetry)
    for text in [*settings.notices, *notices]:  # settings.notices: e.g. what an untrusted workspace asked for
        session.emit(Notice(level="warning", text=text))
    session.opened_now()
    return session


def restore(session: Session) -> list[str]:
    """Load the stored transcripts into the main agent and the subagent records; returns warnings."""
    assert session.store is not None
    records, warnings = read_records(session.store.main_path)
    state = agent_state(records)
    main, subagents = session.main, session.subagents
    main.messages, main.turns = state.messages, state.turns
    main.usage, main.last_usage = state.usage, state.last_usage
    main.ledger = compaction.Ledger.from_dict(state.ledger)
    session.prompts = len(user_prompts(records))
    session.restored_events = [
        e for e in replay_events(records) if e.agent_id == MAIN or isinstance(e, (SubagentStarted, SubagentFinished))
    ]
    children, child_warnings = child_records(session.store.main_path)
    for agent_id, child in children.items():
        record = subagent_record(child, agent_id)
        if record is None:
            continue
        subagents.records[agent_id] = record
        if not ended(child):  # died with the process
            session.save(lambda store: store.write(record.events[-1]))  # noqa: B023 (save calls it at once)
            session.restored_events.append(record.events[-1])
        if undelivered(records, agent_id):  # a background result the main agent never read: next call, once
            subagents.pending.append(record)
    numbers = [int(i.removeprefix("sa-")) for i in children if i.removeprefix("sa-").isdigit()]
    subagents.next_number = max(numbers, default=0) + 1
    return warnings + child_warnings
