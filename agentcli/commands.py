"""Subcommands that need no model: `agentcli agents` and `agentcli sessions …`."""

from __future__ import annotations

import argparse
from pathlib import Path


def run(args: argparse.Namespace, root: Path) -> int:
    if args.command == "agents":
        return list_agents(root)
    from .sessions_cli import run_sessions

    return run_sessions(args, root)


def list_agents(root: Path) -> int:
    from .core.agents import load_agent_types

    types = load_agent_types(root)
    width = max(len(name) for name in types)
    for agent_type in types.values():
        tools = ", ".join(agent_type.tools) if agent_type.tools is not None else "all tools but task"
        print(f"{agent_type.name:<{width}}  {agent_type.description}")
        print(f"{'':<{width}}  tools: {tools} · model: {agent_type.model} · from {agent_type.source}")
    return 0
