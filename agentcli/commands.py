"""Subcommands that need no model: `agentcli agents`, `sessions …`, `rewind …`, `trust …`, `worktrees …` and
`mcp list`."""

from __future__ import annotations

import argparse
from pathlib import Path


def run(args: argparse.Namespace, root: Path) -> int:
    if args.command == "agents":
        return list_agents(root)
    if args.command == "worktrees":
        return worktrees_command(args.action, getattr(args, "id", None), root)
    if args.command == "trust":
        import sys

        from .trust import run_trust_command

        return run_trust_command(args.action, getattr(args, "path", None), sys.stdout, sys.stderr)
    if args.command == "rewind":
        from .rewind_cli import run_rewind

        return run_rewind(args, root)
    if args.command == "mcp":
        return list_mcp(args, root)
    from .sessions_cli import run_sessions

    return run_sessions(args, root)


def worktrees_command(action: str, ident: str | None, root: Path) -> int:
    """`agentcli worktrees list|diff|merge|discard ID`: what /diff, /merge and /discard do in the app."""
    import sys

    from .core.storage import worktrees
    from .ui.escapes import visible

    try:
        if action == "list":
            found = worktrees.listing(root)
            for line in worktrees.listing_lines(found):
                print(visible(line))
            if not found:
                print("No subagent worktrees in this repository.")
            return 0
        assert ident is not None
        print(visible(worktrees.act(root, action, ident).rstrip("\n")))
        return 0
    except worktrees.WorktreeError as exc:
        print(f"agentcli: {exc}", file=sys.stderr)
        return 1


def list_agents(root: Path) -> int:
    """Print the agent types available here, and a warning for each agent file that was skipped."""
    import shutil
    import sys
    import textwrap

    from . import paths
    from .config import load_settings
    from .core.engine import task_tool  # noqa: F401  (declares task, which agent files may name and never get)
    from .core.engine.agents import load_agent_types
    from .ui.escapes import visible

    settings = load_settings(root)
    warnings: list[str] = []
    types = load_agent_types(root, warnings, plugins=settings.plugins)  # and what enabled plugins bring
    for warning in warnings:
        print(f"agentcli: {visible(warning)}", file=sys.stderr)
    width = max(len(name) for name in types)
    columns = max(shutil.get_terminal_size().columns, width + 40)
    indent = " " * (width + 2)
    for agent_type in types.values():
        configured = settings.agents.get(agent_type.name, {}).get("model")
        model = configured or agent_type.model
        model = f"inherit ({settings.model})" if model == "inherit" else model + (" (config)" if configured else "")
        details = [f"tools: {agent_type.tools_text()}", f"model: {model}"]
        if agent_type.max_turns:
            details.append(f"max {agent_type.max_turns} turns")
        if agent_type.timeout:
            details.append(f"timeout {agent_type.timeout:g} s")
        if agent_type.memory:
            details.append("sees AGENTS.md")
        if agent_type.isolation:
            details.append("works in its own git worktree")
        details.append(agent_type.source)
        print(
            textwrap.fill(
                visible(agent_type.description),
                columns,
                initial_indent=f"{visible(agent_type.name):<{width}}  ",
                subsequent_indent=indent,
            )
        )
        # lines break between facts and inside the tool list, never inside another fact (a model's name)
        whole = [details[0], *(d.replace(" ", "\u00a0") for d in details[1:])]
        print(
            textwrap.fill(
                " · ".join(whole), columns, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
            ).replace("\u00a0", " ")
        )
    user_dir = paths.config_home() / "agents"
    print(
        f"\nAdd your own as .agentcli/agents/NAME.md here, or in {user_dir}/: front matter with name, "
        "description and optionally tools and model, then the agent's instructions."
    )
    return 0


def list_mcp(args: argparse.Namespace, root: Path) -> int:
    """Start every configured server (the workspace's only when trusted), print what /mcp shows, stop them."""
    import asyncio
    import sys

    from .config import load_settings
    from .core.mcp.config import load
    from .core.mcp.session_servers import McpServers
    from .core.system.secret_env import command_env
    from .trust import answer_for, request_for
    from .ui.slash import mcp_how_to, mcp_report

    trusted = args.trust_workspace or not request_for(root).sources or answer_for(request_for(root)) is True
    settings = load_settings(root, trusted=trusted, mcp_config=args.mcp_config or ())
    held_back = load(root, args.mcp_config or (), trusted=trusted).untrusted
    if not settings.mcp_servers and not held_back:
        print(f"No MCP servers are configured here; {mcp_how_to()}", file=sys.stdout)
        return 0

    async def check() -> str:
        from .core.system.sandbox import Sandbox

        sandbox = Sandbox.for_setting(settings.sandbox, settings.sandbox_network)  # as in a session
        servers = McpServers(
            settings.mcp_servers,
            root=root,
            env=command_env(settings.keep_secret_env),
            startup_timeout=settings.mcp_startup_timeout,
            tool_timeout=settings.mcp_tool_timeout,
            on_ready=lambda server: None,
            on_trouble=lambda text: None,
            sandbox=sandbox,
        )
        try:
            await servers.wait_started()
            return mcp_report(servers, held_back)
        finally:
            await servers.stop()
            if sandbox is not None:
                sandbox.close()

    print(asyncio.run(check()), file=sys.stdout)
    return 0
