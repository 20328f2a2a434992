"""Claude Code's names for agentcli's tools: the one table, and the views of it that hooks, permission
rules, agent files and ``--tools`` read.

Claude Code's files and flags name tools its way (``Bash``, ``Read``, ``TodoWrite``); a hook's matcher
and its ``tool_name`` see those names too. A leaf of core, so every room that meets them can import it.
"""

from __future__ import annotations

# Claude Code's name for each agentcli tool it has.
CLAUDE_NAMES: dict[str, str] = {
    "bash": "Bash", "read_file": "Read", "edit_file": "Edit", "write_file": "Write", "grep": "Grep",
    "glob": "Glob", "task": "Task", "bash_output": "BashOutput", "kill_bash": "KillShell",
    "todo_write": "TodoWrite", "skill": "Skill", "web_fetch": "WebFetch", "lsp": "LSP",
    "web_search": "WebSearch",  # the API's own, a server tool (tools/web_search.py)
    "structured_output": "StructuredOutput",  # --json-schema's answer
}
# Claude Code's other names for the same tools.
OTHER_NAMES: dict[str, str] = {"MultiEdit": "edit_file", "LS": "glob", "Agent": "task"}

# The tools that come with bash, its background shells: what gives bash gives them too.
BASH_COMPANIONS = ("bash_output", "kill_bash")

# Each of Claude Code's names, and the agentcli tool it stands for.
TOOLS: dict[str, str] = {claude: tool for tool, claude in CLAUDE_NAMES.items()} | OTHER_NAMES

# In a permission rule, Claude Code's Read covers every tool that reads files and its Edit every tool
# that changes them; every other name covers its one tool.
RULE_SCOPES: dict[str, tuple[str, ...]] = {"Read": ("read_file", "grep", "glob"), "Edit": ("edit_file", "write_file")}


def rule_tools(claude: str) -> tuple[str, ...]:
    """The tools a permission rule naming ``claude`` (one of Claude Code's names) covers."""
    return RULE_SCOPES.get(claude, (TOOLS[claude],))
