"""``EngineSettings``: everything the engine reads of the settings, as one typed, frozen value.

``agentcli/config.py`` declares each setting once (its default, what it does, which files may set it),
reads the files, the environment and the flags, and builds this value (``Settings.engine()``); a session
opens with it fully configured and never looks anything up by name. The fields have no defaults, so a
setting added here and not given by config.py is a type error, and so is one given with the wrong type
(docs/architecture.md, "A new setting"). What tools read is its own part, ``tools`` (``ToolContext.settings``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .tool_settings import ToolSettings

if TYPE_CHECKING:
    from .engine.plugins import Plugin
    from .lsp.specs import ServerSpec
    from .mcp.config import ServerConfig

__all__ = ["EngineSettings", "ToolSettings"]


@dataclass(frozen=True)
class EngineSettings:
    """The settings a session reads (config.py's ``Settings.engine()`` builds it); each field is the setting of
    that name, config.py says what it does."""

    # the model
    model: str
    max_tokens: int
    api_retries: int
    stall_timeout: float
    first_reply_timeout: float
    thinking: str  # off, on or adaptive (config.py resolved "auto")
    max_thinking_tokens: int
    tool_search: str  # auto, api, agentcli or off (core/tools/on_demand.py)
    web_search: str  # true, false or auto (core/tools/web_search.py)
    # the agents
    max_turns: int
    compact_threshold: float
    subagent_max_turns: int
    subagent_timeout: float
    max_parallel_subagents: int
    max_budget_usd: float  # 0: none
    task_models: tuple[str, ...]
    agents: dict[str, dict[str, Any]]  # per agent type overrides
    # what may happen, and where
    permission_mode: str
    permissions: dict[str, list[str]]  # allow/ask/deny rules
    hooks: dict[str, list[Any]]  # Claude Code's format
    status_line: dict[str, Any]  # {} for none (core/policy/status_command.py)
    sandbox: str  # auto, on or off (core/system/sandbox.py)
    sandbox_network: bool
    sandbox_allowed_hosts: tuple[str, ...]
    checkpoint_file_max_mb: float
    checkpoint_session_max_mb: float
    # servers
    mcp_servers: dict[str, ServerConfig]
    mcp_startup_timeout: float
    mcp_tool_timeout: float
    lsp: dict[str, Any]  # core/lsp/specs.py
    lsp_discover: bool
    lsp_timeout: float
    plugin_lsp: tuple[ServerSpec, ...]  # the enabled plugins' language servers, beside the lsp setting's
    # what loading found
    trusted: bool  # the workspace's own widening files apply
    setting_sources: tuple[str, ...]  # the sources whose command, agent and skill files load
    plugins: tuple[Plugin, ...]  # enabled (agentcli/plugins.py)
    notices: tuple[str, ...]  # warnings the session emits once it opens
    # what tools read (ToolContext.settings)
    tools: ToolSettings
    # What a headless run's flags set (agentcli/scripting.py); no settings file sets them.
    fallback_model: str  # the model to go on with when the model is overloaded or not found ("": none)
    effort: str  # the API's effort level ("": the model's own)
    partial_messages: bool  # each API stream event is handed on (stream-json's partial messages)
    host_answers_approvals: bool  # the program on stdin answers approvals (--permission-prompt-tool stdio)
    system_prompt: str  # the main agent's system prompt instead of agentcli's ("": agentcli's)
    append_system_prompt: str  # added to the main agent's system prompt
    only_tools: tuple[str, ...] | None  # the only tools the agents are offered (None: every tool)
    # Carried for the front ends, which read them through ``session.settings``; the engine does not.
    subagent_stall_seconds: float  # no stream data or tool progress this long: a child's entry says so
    steer_on_enter: bool  # enter while the main agent works steers its turn (ctrl+s then queues)
    notifications: str  # how the terminal is told the user is needed (ui/notify.py)
    plugin_clone_max_mb: float  # the most one plugin or marketplace clone may write (/plugin)
    theme: str  # the TUI's colours
