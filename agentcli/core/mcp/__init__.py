"""MCP servers: their configuration, running them, and their tools as agentcli tools."""
