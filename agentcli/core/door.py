"""The door to the engine: the one module of core a front end imports, beside the plain data modules (``events``,
``content``, ``units``, ``comparison``, ``vocabulary``). It opens a session (``open_session``, which returns the
``SessionSurface`` Protocol of ``surface.py``: small verbs and read-only views, no raw part) and hands out the
names a front end needs to drive one: errors, the workspace, the permission modes, agent types, what '@'
completes. An import-linter contract in pyproject.toml keeps the front ends to it (docs/architecture.md).
"""

from __future__ import annotations

from . import images as images  # front ends check the images a program sends (images.from_block)
from .assembly import open_session as open_session
from .engine.agents import AgentFileError as AgentFileError, AgentType as AgentType
from .engine.agents import agent_from_definition as agent_from_definition, load_agent_types as load_agent_types
from .engine.context_usage import ContextUsage as ContextUsage
from .engine.custom_commands import CustomCommand as CustomCommand, find as find_command
from .engine.history import Prompt as Prompt, replay_events as replay_events, subagent_record as subagent_record
from .engine.mentions import Mention as Mention, WorkspaceFiles as WorkspaceFiles, complete as complete_mentions
from .engine.review import Review as Review, ReviewTargetError as ReviewTargetError
from .engine.skills import Skill as Skill
from .engine.subagent_record import SubagentRecord as SubagentRecord
from .errors import ToolError as ToolError  # also what a front end's EditorFiles raises
from .mcp.bridge import elicitation_answer as elicitation_answer
from .mcp.config import ServerConfig as ServerConfig
from .mcp.remote import RemoteResource as RemoteResource
from .mcp.servers import McpServers as McpServers
from .mcp.tool import tool_name as mcp_tool_name
from .model.catalogue import MODEL_ALIASES as MODEL_ALIASES  # ACP's model picker lists them
from .model.llm import LLM as LLM, LLMError as LLMError, MISSING_KEY_MESSAGE as MISSING_KEY_MESSAGE
from .model.llm import MissingCredentials as MissingCredentials, resolve_credentials as resolve_credentials
from .policy.hooks import EVENTS as HOOK_EVENTS, Hook as Hook
from .policy.permissions import MODES as MODES
from .policy.status_command import StatusCommand as StatusCommand
from .settings import EngineSettings as EngineSettings
from .storage.checkpoints import Checkpoint as Checkpoint, Restore as Restore
from .storage.store import SessionError as SessionError, SessionInfo as SessionInfo, list_sessions as list_sessions
from .storage.store import new_session_id as new_session_id
from .storage.worktrees import WorktreeError as WorktreeError
from .surface import SessionSurface as SessionSurface
from .system.workspace import Workspace as Workspace
from .tool_facts import claude_name as claude_name
from .tools import ToolRegistry as ToolRegistry, call_summary as call_summary
from .tools.base import EditorFiles as EditorFiles  # front ends implement it (ui/acp/editor.py)
from .tools.structured_output import StructuredOutput as StructuredOutput

__all__ = ["find_command", "complete_mentions", "mcp_tool_name", "HOOK_EVENTS"]  # renamed on the way out
