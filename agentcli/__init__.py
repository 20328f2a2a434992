"""agentcli: a terminal coding agent with reviewable subagents."""

__version__ = "0.1.0"
