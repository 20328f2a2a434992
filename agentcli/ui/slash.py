"""Slash commands shared by the TUI and line mode: names, help, parsing, and reports."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.events import Usage
from .escapes import visible
from .format import KEPT_OUT, context_bars, seconds  # the reports use slash.tokens, slash.money
from .format import money as money
from .format import tokens as tokens

if TYPE_CHECKING:
    from ..core.door import ContextUsage, CustomCommand, McpView, Review, ServerConfig, SessionSurface
    from .view import SessionView


@dataclass(frozen=True)
class SlashCommand:
    """One slash command as the menus and /help list it: its name, arguments, help and front ends."""

    name: str
    args: str
    help: str
    front_ends: tuple[str, ...] = ("tui", "plain")
    custom: bool = False  # a command file's prompt (.claude/commands, …), sent to the model as a message
    yields: bool = False  # a command file of the same name takes its place (a name many command folders hold)


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "", "List commands and keys"),
    SlashCommand("clear", "", "Start a fresh conversation (the session file keeps the old one)"),
    SlashCommand("agents", "", "Show this session's subagents, and the agent types"),
    SlashCommand("transcript", "N", "Print subagent N's full transcript", ("plain",)),
    SlashCommand("cost", "", "Tokens and cost per agent and in total, and context use"),
    SlashCommand(
        "context", "", "What the next request holds: system prompt, memory, tools, conversation, tool results"
    ),
    SlashCommand("model", "NAME", "Switch the main agent's model"),
    SlashCommand("compact", "[FOCUS]", "Summarize older turns to free context"),
    SlashCommand(
        "review",
        "[TARGET]",
        "Review changes with parallel reviewers (uncommitted; BASE, A...B, A..B or a diff file)",
        yields=True,
    ),
    SlashCommand("permissions", "[MODE]", "Show or set the permission mode"),
    SlashCommand(
        "rewind",
        "[N [files|conversation|both]]",
        "List your prompts with the files changed after each; go back to before prompt N",
    ),
    SlashCommand("stop", "", "Cancel every running subagent; each still reports what it found"),
    SlashCommand("steer", "ID TEXT", "Send a running subagent a message it reads before its next turn"),
    SlashCommand("wrapup", "ID", "Ask a running subagent to finish now and answer with what it has"),
    SlashCommand("bashes", "[kill ID]", "List background shells (bash run_in_background); kill ID stops one"),
    SlashCommand("diff", "ID", "Show what an isolated subagent changed in its worktree"),
    SlashCommand("merge", "ID", "Apply an isolated subagent's changes to your working tree"),
    SlashCommand("discard", "ID", "Drop an isolated subagent's worktree and branch"),
    SlashCommand("mcp", "", "MCP servers: their state, tools, prompts (/mcp__server__prompt), resources (@server:uri)"),
    SlashCommand("skills", "", "List the skills the model may load (/<name> runs one)"),
    SlashCommand(
        "plugin",
        "[install|enable|… NAME]",
        "Plugins: list; install (it says what it runs, and asks), enable, disable, uninstall, update; "
        "marketplace add|list|update|remove",
    ),
    SlashCommand(
        "export",
        "[FILE]",
        "Write this session, subagents and receipts included, secrets redacted, to FILE "
        "as Markdown (a .json name: JSON); default agentcli-ID.md here",
    ),
    SlashCommand("resume", "", "Pick an earlier session of this workspace and go back to it", ("tui",)),
    SlashCommand("exit", "", "Quit agentcli"),
)
ALIASES = {"quit": "exit", "q": "exit", "?": "help"}


class UnknownCommand(Exception):
    pass


def commands_for(front_end: str, custom: Iterable[SlashCommand] = ()) -> list[SlashCommand]:
    """The built-in commands of ``front_end``, less those that yield to a ``custom`` command of their name."""
    own = {c.name for c in custom}
    return [c for c in COMMANDS if front_end in c.front_ends and not (c.yields and c.name in own)]


def custom_commands(commands: Mapping[str, CustomCommand]) -> list[SlashCommand]:
    """The session's custom commands that no built-in command (or alias) shadows, as slash commands, each by the
    name it is called by: a plugin's command is listed as ``/plugin:name`` and, where it has it, as ``/name``."""
    taken = {c.name for c in COMMANDS if not c.yields} | set(ALIASES)
    return [
        SlashCommand(
            name,
            visible(c.argument_hint),
            visible(c.description or "(no description)") + (" (project)" if c.project else " (user)"),
            custom=True,
        )
        for name, c in commands.items()
        if name not in taken
    ]


def mcp_prompts(servers: McpView) -> list[SlashCommand]:
    """The ready MCP servers' prompts as slash commands (``/mcp__<server>__<prompt> ARG [ARG]``), as they are
    listed now: a server that connects later, or lists its prompts again, changes them."""
    from ..core.door import mcp_tool_name as tool_name

    return [
        SlashCommand(
            tool_name(server.name, prompt.name),  # letters, digits, _ and - only
            visible(" ".join(a.upper() if required else f"[{a.upper()}]" for a, required in prompt.arguments)),
            visible(prompt.description or "(no description)") + f" (MCP {server.name})",
            custom=True,
        )
        for server in servers.ready()
        for prompt in server.prompts
    ]


def web_search_line(session: SessionSurface) -> str:
    """/help's word on the API's web search: offered, or why not (docs/README.md#web-search)."""
    off = session.web_search_off
    return f"Web search is off: {off}." if off else "Web search: on (the API's web_search; sources show under answers)."


def session_commands(session: SessionSurface) -> list[SlashCommand]:
    """What '/' completes, /help lists and the palette offers after the built-in commands: the session's custom
    commands, then its MCP servers' prompts. Read again each time, since servers connect after the first screen."""
    return [*custom_commands(session.commands), *mcp_prompts(session.mcp_servers)]


def is_custom(text: str, commands: Mapping[str, CustomCommand]) -> bool:
    """Whether ``text`` calls a custom command: the front end then sends it as a message."""
    from ..core.door import find_command as find

    called = find(commands, text.strip())
    if text.strip().startswith("/mcp__"):  # an MCP server's prompt: the session runs it (core/mcp/bridge.py)
        return True
    return called is not None and called[0].name in {c.name for c in custom_commands(commands)}


IN_A_SHELL = {"review": "agentcli review [TARGET]", "plugin": "agentcli plugin list (or install, enable, disable NAME)"}


def not_sent_headless(text: str, commands: Mapping[str, CustomCommand]) -> str:
    """Why ``-p`` does not send ``text`` to the model: it names a slash command -p cannot run (the sentence),
    or "" when it is a message, a custom command or an MCP prompt (the session runs those). As in the app,
    a first word such as /tmp is read as a command; one with a second slash (/usr/lib) is a path."""
    head = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    if not head.startswith("/") or "/" in head[1:] or head.startswith("/mcp__") or is_custom(text.strip(), commands):
        return ""
    name = ALIASES.get(head[1:].lower(), head[1:].lower())
    how = "start the prompt with another character to send it as text"
    if shell := IN_A_SHELL.get(name):
        return f"{head} is a command of the app and line mode; headless, run {shell} instead."
    if any(c.name == name for c in COMMANDS):
        return f"{head} is a command of the app and line mode, which -p does not run, so nothing was sent; {how}."
    return f"Unknown command {head}, so nothing was sent: -p runs only custom commands and MCP prompts; {how}."


def parse(text: str, front_end: str = "tui") -> tuple[SlashCommand, str]:
    """Split '/model opus' into the command and its argument text."""
    head, _, rest = text.strip().lstrip("/").partition(" ")
    name = ALIASES.get(head.lower(), head.lower())
    for command in commands_for(front_end):
        if command.name == name:
            return command, rest.strip()
    raise UnknownCommand(f"Unknown command /{head}; /help lists the commands.")


def complete(prefix: str, front_end: str = "tui", custom: Iterable[SlashCommand] = ()) -> list[SlashCommand]:
    """Commands (built-in, then ``custom``) whose name starts with what follows the slash."""
    typed = prefix.lstrip("/").lower()
    custom = list(custom)
    return [c for c in [*commands_for(front_end, custom), *custom] if c.name.lower().startswith(typed)]


def stop(session: SessionSurface) -> str:
    """/stop: cancel every running subagent, and say which."""
    stopped = session.cancel_children()
    if not stopped:
        return "No subagent is running."
    return f"Cancelling {', '.join(stopped)}; each sends the main agent a summary of what it found."


def steer(session: SessionSurface, arg: str) -> tuple[str, bool]:
    """/steer ID TEXT: what to say, and whether it failed."""
    ident, _, text = arg.strip().partition(" ")
    if not ident or not text.strip():
        return "Say which subagent and what to tell it, e.g. /steer sa-2 look in lib/ as well.", True
    why = session.steer_child(subagent_id(ident), text)
    return (why, True) if why else (f"{subagent_id(ident)} reads your message before its next turn.", False)


def wrap_up(session: SessionSurface, arg: str) -> tuple[str, bool]:
    """/wrapup ID: what to say, and whether it failed."""
    if not arg.strip():
        return "Say which subagent should wrap up, e.g. /wrapup sa-2.", True
    why = session.wrap_up_child(subagent_id(arg))
    return (
        (why, True)
        if why
        else (
            f"{subagent_id(arg)} is asked to wrap up: before its next turn it answers, "
            "without tools, with what it has.",
            False,
        )
    )


def still_running(session: SessionSurface) -> str:
    """The question before quitting while subagents run; "" when none does."""
    running = [record.id for record in session.running_children]
    if not running:
        return ""
    one = len(running) == 1
    return (
        f"{', '.join(running)} {'is' if one else 'are'} still running. Quit anyway? "
        f"{'Its transcript is' if one else 'Their transcripts are'} kept as interrupted."
    )


TEMPORARY_HOME = "AGENTCLI_HOME_IS_TEMPORARY"  # set by --demo: its home, sessions included, goes when it ends
FROM_MAKE = "AGENTCLI_FROM_MAKE"  # set by `make run`: in the clone agentcli is not on PATH, and `make demo` is there


def demo_command(plain: bool = False) -> str:
    """What the user types to try the demo, from where this agentcli was started."""
    if os.environ.get(FROM_MAKE):
        return "make demo ARGS=--plain" if plain else "make demo"
    return "agentcli --demo --plain" if plain else "agentcli --demo"


def goodbye(session: SessionSurface | None, resume: str) -> str:
    """What quitting says: how to come back to this session (with the command ``resume``), when it was
    saved to stay."""
    store = session.saved if session is not None else None
    if store is not None and store.off:
        if not store.main_path.exists():
            return f"Nothing was saved: writing the session failed ({store.problem})."
        return (
            f"Session {store.session_id} is saved only up to where writing failed ({store.problem}); "
            f"resume it with: {resume}"
        )
    if session is None or store is None or not store.main_path.exists():
        return "Nothing was saved: no message was sent."
    if os.environ.get(TEMPORARY_HOME):
        return (
            "The demo's session goes with its temporary folder, so there is nothing to resume; "
            "run agentcli in a repository of yours to keep your sessions."
        )
    return f"Session {session.id} is saved; resume it with: {resume}"


def export(session: SessionSurface, arg: str) -> tuple[str, bool]:
    """/export [FILE]: this session's file as a document (ui/export.py) written to FILE, relative to the workspace
    (default ``agentcli-<id>.md`` there; a ``.json`` name gets JSON). The sentence to show, and whether it failed."""
    from pathlib import Path

    from ..core.door import SessionError
    from .export import export as document
    from .export import write_export

    if session.saved is None:
        return "This session is not saved, so there is nothing to export.", True
    target = session.workspace.root / Path(arg.strip() or f"agentcli-{session.id}.md").expanduser()
    try:
        written = write_export(
            target,
            document(
                session.saved.main_path,
                "json" if target.suffix == ".json" else "markdown",
                running=[r.id for r in session.running_children],
            ),
        )
    except SessionError as exc:
        return str(exc), True
    shown = written.relative_to(session.workspace.root) if written.is_relative_to(session.workspace.root) else written
    return f"Exported this session to {shown}.", False


def unknown_cost_note(session: SessionSurface) -> list[str]:
    """/cost's one line about a cost it cannot say (its rows say "unknown"), or none."""
    if session.usage.cost is None and session.usage.total_tokens:
        return [f"Cost unknown for this model: agentcli has no price for {visible(session.model)}."]
    unpriced = dict.fromkeys(r.model for r in session.children if r.usage.cost is None and r.usage.total_tokens)
    if not unpriced:
        return []
    return [
        f"Cost unknown for {', '.join(visible(m or '?') for m in unpriced)}, which agentcli has no price for: "
        "the total leaves those subagents out."
    ]


def usage_line(label: str, usage: Usage, width: int = 10) -> str:
    return (
        f"{label:<{width}} in {tokens(usage.input_tokens):>7}  out {tokens(usage.output_tokens):>7}  "
        f"cache read {tokens(usage.cache_read_tokens):>7}  write {tokens(usage.cache_write_tokens):>7}  "
        f"{money(usage, cell=True):>9}"
    )


def cost_report(session: SessionSurface) -> str:
    """Usage per agent and in total, how full the main context is, and what delegation kept out."""
    rows = [
        ("main", session.main_usage, ""),
        *(
            (
                record.id,
                record.usage,
                f"  {record.model} · {visible(record.description)}"
                if record.model
                else f"  {visible(record.description)}",
            )
            for record in session.children
        ),
        *(
            (f"type {visible(kind)}", usage, f"  {count} subagent{'' if count == 1 else 's'}")
            for kind, (count, usage) in session.usage_by_type().items()
        ),
        ("total", session.usage, ""),
    ]
    width = max(10, *(len(label) for label, _, _ in rows))  # every row's figures in the same columns
    lines = [usage_line(label, usage, width) + suffix for label, usage, suffix in rows]
    lines += unknown_cost_note(session)
    lines.append(context_line(session))
    lines.append(kept_out_line(session.tokens_kept_out))
    lines += delegation_bars(session)
    lines += delegation_accounts(session)
    return "\n".join(lines)


CONTEXT_MARKS = "▓▒█#="  # one per part of /context's bar, in ContextUsage.parts' order


def context_how(usage: ContextUsage) -> str:
    how = (
        "counted by the API's count_tokens"
        if usage.method == "count_tokens"
        else "estimated (about four characters a token; the server offers no count_tokens)"
    )
    return (
        f"Next request: {tokens(usage.total)} of {tokens(usage.window)} tokens "
        f"({100 * usage.total / usage.window if usage.window else 0:.0f}%), {how}"
    )


def context_segments(usage: ContextUsage, width: int = 40) -> list[tuple[str, int]]:
    """The window as ``width`` cells: each part's mark and how many cells it fills (what is left is free)."""
    segments, left = [], width
    for mark, share in zip(CONTEXT_MARKS, usage.shares.values(), strict=False):
        cells = min(left, round(width * share))
        segments.append((mark, cells))
        left -= cells
    return segments


def context_parts_bar(usage: ContextUsage, width: int = 40) -> str:
    """The window as ``width`` cells: each part's cells in its mark, then what is free as '░'."""
    cells = "".join(mark * count for mark, count in context_segments(usage, width))
    return cells + "░" * (width - len(cells))


def context_report(usage: ContextUsage) -> str:
    """/context in text: the bar, one row a part (tokens, share of the window), and what subagents kept out."""
    lines = [context_how(usage), context_parts_bar(usage)]
    for mark, (label, count) in zip(CONTEXT_MARKS, usage.parts.items(), strict=False):
        lines.append(f"  {mark} {label:<17} {tokens(count):>7}  {100 * usage.shares[label]:5.1f}%")
    lines.append(f"  {context_kept_out(usage)}")
    return "\n".join(lines)


def context_kept_out(usage: ContextUsage) -> str:
    return f"{KEPT_OUT}: {tokens(usage.kept_out)} tokens (subagents' own contexts, not in the request)"


def delegation_accounts(session: SessionSurface) -> list[str]:
    """Per agent type, over the session: what its children spent, what their reports returned to the
    main agent, what they kept out of its context, and their time (each child's ``SubagentReport.account``)."""
    sums: dict[str, dict[str, float]] = {}
    for record in session.children:
        if record.report is None:
            continue
        total = sums.setdefault(record.type, {"children": 0, "spent": 0, "returned": 0, "kept_out": 0, "seconds": 0})
        total["children"] += 1
        for key, value in record.report.account().items():
            if key in total:
                total[key] += value or 0
    return ["Delegation by agent type:"] * bool(sums) + [
        f"  {visible(kind)} ×{int(t['children'])}: spent {tokens(int(t['spent']))}, returned "
        f"{tokens(int(t['returned']))}, kept out {tokens(int(t['kept_out']))}, {seconds(t['seconds'])}"
        for kind, t in sums.items()
    ]


def kept_out_line(kept_out: int) -> str:
    return f"{KEPT_OUT}: {tokens(kept_out)} tokens"


def delegation_bars(session: SessionSurface, width: int = 20) -> list[str]:
    """Two bars on the model's window: the main context now, and with what the subagents kept out added."""
    used = session.context_used()
    return context_bars(used, used + session.tokens_kept_out, session.context_window(), width)


def context_line(session: SessionSurface) -> str:
    used, window = session.context_used(), session.context_window()
    return f"main context: {tokens(used)} of {tokens(window)} tokens ({100 * used / window:.0f}%)"


def bashes_text(session: SessionSurface) -> str:
    """/bashes: one line per background shell of the session, newest last."""
    shells = session.shells.shells.values()
    if not shells:
        return "No background shells in this session; the model starts one with bash run_in_background."
    lines = []
    for shell in shells:
        command = shell.command.splitlines()[0] if shell.command.strip() else ""
        lines.append(
            f"{shell.id:<8} {shell.state():<22} pid {shell.pid:<8} {seconds(shell.seconds()):>10}  "
            f"{shell.owner:<6} {command[:80]}"
        )
    return "\n".join(lines) + "\n/bashes kill ID stops one; all are stopped when the session ends."


async def kill_bash(session: SessionSurface, arg: str) -> str:
    """/bashes kill ID: stop one background shell; the sentence to show."""
    shells = session.shells
    shell = shells.shells.get(arg.strip())
    if shell is None:
        return f"No background shell {arg.strip()!r}; /bashes lists them."
    if shell.status != "running":
        return f"{shell.id} is no longer running: it {shell.state()}."
    await shells.stop(shell)
    return f"Stopped {shell.id} and everything it started."


async def worktree(session: SessionSurface, action: str, arg: str) -> tuple[str, bool]:
    """/diff, /merge, /discard ID: (the text to show, whether it is an error)."""
    from ..core.door import WorktreeError

    if not arg.strip():
        return f"Usage: /{action} ID, such as /{action} sa-3 (a subagent that ran with isolation: worktree).", True
    try:
        return visible(await session.worktree(action, arg.strip())), False
    except WorktreeError as exc:
        return str(exc), True


async def review(session: SessionSurface, arg: str) -> Review | None:
    """/review [TARGET]: the reviewers run as children (the panel shows them); the summary, with each finding
    and what is unverified, or why there is nothing to review, comes as a notice."""
    from ..core.door import ReviewTargetError
    from ..core.events import Notice

    try:
        review = await session.review(arg.strip())
    except ReviewTargetError as exc:
        session.emit(Notice(level="warning", text=str(exc)))
        return None
    session.emit(Notice(level="info", text=review.summary()))
    return review


async def unmerged_attempts(session: SessionSurface, view: SessionView) -> list[str]:
    """The best-of-N attempts (task with attempts) whose worktrees are still there: neither merged nor discarded."""
    ids = dict.fromkeys(a.id for compared in view.comparisons for a in compared.attempts if a.files)
    return [ident for ident in ids if await session.worktree_root(ident) is not None]


def attempts_question(ids: list[str]) -> str:
    """What a front end asks about ``unmerged_attempts`` as the session ends."""
    one = len(ids) == 1
    return (
        f"{', '.join(ids)} {'is an attempt' if one else 'are attempts'} nobody merged or discarded. Discard "
        f"{'its worktree and branch' if one else 'their worktrees and branches'}? (No keeps them: `agentcli "
        "worktrees` lists them, and a later /merge or /discard takes them.)"
    )


async def discard_all(session: SessionSurface, ids: list[str]) -> str:
    """Discard each of ``ids``' worktrees: what happened, a line each."""
    return "\n".join([(await worktree(session, "discard", ident))[0] for ident in ids])


def subagent_id(arg: str) -> str:
    """'3' → 'sa-3'; 'sa-3' stays."""
    return f"sa-{arg.strip()}" if arg.strip().isdigit() else arg.strip()


async def before_discard(session: SessionSurface, arg: str) -> tuple[str, bool]:
    """/discard ID, before anything is dropped: (the question to ask, True), or (why not, False)."""
    shown, failed = await worktree(session, "diff", arg)  # the same checks: such a worktree, not running
    if failed:
        return shown, False
    ident = subagent_id(arg)
    return (
        f"Drop {ident}'s worktree and branch? What it changed there is lost for good (/diff {ident} shows "
        "it; /merge applies it to your tree)."
    ), True


async def bashes(session: SessionSurface, arg: str) -> str:
    """/bashes [kill ID]: the list, or the outcome of stopping one."""
    verb, _, rest = arg.strip().partition(" ")
    if not verb:
        return bashes_text(session)
    if verb == "kill" and rest.strip():
        return await kill_bash(session, rest)
    return "Usage: /bashes lists background shells; /bashes kill ID stops one."


def mcp_how_to() -> str:
    """How to configure MCP servers, said in full (an installed agentcli has no docs folder to point to)."""
    from .. import paths

    return (
        f"add them to .mcp.json in the workspace or to {paths.config_home() / 'mcp.json'} (or pass "
        "--mcp-config), in Claude Code's format: "
        '{"mcpServers": {"NAME": {"command": "PROGRAM", "args": ["ARG"]}}}, or {"type": "http", "url": "…"}.'
    )


def skills_report(session: SessionSurface) -> str:
    """/skills: each skill the model may load, what it is for, and where it comes from."""
    skills = sorted(session.skills.values(), key=lambda s: s.name)
    if not skills:
        held = "" if session.trusted else " (a workspace's own skills load only once it is trusted)"
        return (
            "No skills: a skill is a folder with a SKILL.md in .claude/skills/ or .agentcli/skills/ of the "
            f"workspace, or in ~/.claude/skills/ or agentcli's config folder{held}."
        )
    width = max(len(s.name) for s in skills)
    return "\n".join(visible(f"/{s.name:<{width}}  {s.description}  [{s.source}]") for s in skills)


def mcp_report(servers: McpView, held_back: dict[str, ServerConfig] | None = None) -> str:
    """/mcp and `agentcli mcp list`: each server, its state, its tools and its last error."""
    from ..core.door import mcp_tool_name as tool_name

    def plural(items: list[object] | dict[str, object], word: str) -> str:
        return f"{len(items)} {word}{'s' if len(items) != 1 else ''}"

    if not servers and not held_back:
        return f"No MCP servers are configured; {mcp_how_to()}"
    lines = []
    for server in servers.servers.values():
        lines.append(
            visible(f"{server.name:<16} {server.state:<9} {server.config.describe()}  [{server.config.source}]")
        )
        if server.offered:
            lines.append(visible(f"    {plural(list(server.offered), 'tool')}: {', '.join(server.offered)}"))
        for name, why in server.held_back:
            lines.append(visible(f"    not offered: {name}: {why}"))
        if server.prompts:
            names = ", ".join(
                "/" + tool_name(server.name, p.name) + "".join(f" {a.upper()}" for a, _ in p.arguments)
                for p in server.prompts
            )
            lines.append(visible(f"    {plural(list(server.prompts), 'prompt')}: {names}"))
        if server.resources:
            shown = ", ".join(
                f"@{server.name}:{r.uri}" + (f" ({r.name})" if r.name and r.name != r.uri else "")
                for r in server.resources[:50]
            )
            more = f" and {len(server.resources) - 50} more" if len(server.resources) > 50 else ""
            lines.append(visible(f"    {plural(list(server.resources), 'resource')}: {shown}{more}"))
        if server.error:
            lines.append(visible(f"    last error: {server.error}"))
    if servers and servers.log is not None:
        lines.append(f"Details of what the servers did: {servers.log}")
    for config in (held_back or {}).values():
        lines.append(visible(f"{config.name:<16} {'held back':<9} {config.describe()}  [{config.source}]"))
        lines.append(
            "    not started: this workspace is not trusted ('agentcli --trust-workspace' or answer yes "
            "when agentcli asks)"
        )
    return "\n".join(lines)
