"""The door to the engine: the one module of core a front end imports, beside the plain data modules (``events``,
``content``, ``units``, ``comparison``, ``vocabulary``). It opens a session (``open_session``, which returns the
``SessionSurface`` Protocol of ``surface.py``: small verbs and read-only views, no raw part) and hands out the
names a front end needs around one: errors, credentials, the workspace, the permission modes, agent types, what
'@' completes, the saved sessions' records. An import-linter contract in pyproject.toml keeps the front ends to
it (docs/architecture.md).

The TUI draws its first screen before the engine loads, so only the light names below are imported with this
module; each of the rest (the ``if TYPE_CHECKING:`` block, which is what mypy reads) loads its module when a
front end first takes it (PEP 562's module ``__getattr__``, which reads where each comes from in the block
itself: ``later()``).
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import images as images  # front ends check the images a program sends (images.from_block)
from .errors import ToolError as ToolError  # also what a front end's EditorFiles raises
from .model.api_errors import LLMError as LLMError
from .model.catalogue import context_window as context_window
from .model.credentials import MISSING_KEY_MESSAGE as MISSING_KEY_MESSAGE
from .model.credentials import MissingCredentials as MissingCredentials
from .model.credentials import resolve_credentials as resolve_credentials
from .model.sdk_import import import_frozen as import_frozen
from .model.sdk_import import import_sdk as import_sdk
from .model.sdk_import import start_sdk_import as start_sdk_import
from .settings import EngineSettings as EngineSettings
from .storage.store import SessionError as SessionError
from .storage.store import SessionInfo as SessionInfo
from .storage.store import child_records as child_records
from .storage.store import find_session as find_session
from .storage.store import image_folder as image_folder
from .storage.store import in_use as in_use
from .storage.store import latest_session as latest_session
from .storage.store import list_sessions as list_sessions
from .storage.store import new_session_id as new_session_id
from .storage.store import project_dir as project_dir
from .storage.store import read_records as read_records
from .storage.store import record_event as record_event
from .storage.store import session_info as session_info
from .storage.store import writable_folder as writable_folder
from .surface import SessionSurface as SessionSurface
from .system.secret_env import command_env as command_env
from .system.secret_env import redact as redact
from .system.threads import in_thread as in_thread
from .system.workspace import Workspace as Workspace
from .views import McpServerView as McpServerView
from .views import McpView as McpView
from .views import SavedView as SavedView
from .views import ToolsView as ToolsView
from .vocabulary import MODES as MODES

if TYPE_CHECKING:
    from .assembly import open_session as open_session
    from .engine.agents import AgentFileError as AgentFileError
    from .engine.agents import AgentType as AgentType
    from .engine.agents import agent_from_definition as agent_from_definition
    from .engine.agents import load_agent_types as load_agent_types
    from .engine.context_usage import ContextUsage as ContextUsage
    from .engine.custom_commands import CustomCommand as CustomCommand
    from .engine.custom_commands import find as find_command
    from .engine.history import Prompt as Prompt
    from .engine.history import replay_events as replay_events
    from .engine.history import subagent_record as subagent_record
    from .engine.mentions import Mention as Mention
    from .engine.mentions import WorkspaceFiles as WorkspaceFiles
    from .engine.mentions import complete as complete_mentions
    from .engine.review import Review as Review
    from .engine.review import ReviewTargetError as ReviewTargetError
    from .engine.skills import Skill as Skill
    from .engine.subagent_record import SubagentRecord as SubagentRecord
    from .mcp.bridge import elicitation_answer as elicitation_answer
    from .mcp.config import ServerConfig as ServerConfig
    from .mcp.tool import tool_name as mcp_tool_name
    from .model.catalogue import MODEL_ALIASES as MODEL_ALIASES  # ACP's model picker lists them
    from .model.llm import LLM as LLM  # the model client, with its HTTP and streaming: the session's, once it opens
    from .policy.hooks import EVENTS as HOOK_EVENTS
    from .policy.hooks import Hook as Hook
    from .policy.status_command import StatusCommand as StatusCommand
    from .saved import SavedSession as SavedSession
    from .storage.checkpoints import Checkpoint as Checkpoint
    from .storage.checkpoints import Restore as Restore
    from .storage.checkpoints import checkpoint_bytes as checkpoint_bytes
    from .storage.worktrees import WorktreeError as WorktreeError
    from .storage.worktrees import listing as worktree_listing
    from .storage.worktrees import listing_lines as worktree_lines
    from .tool_facts import claude_name as claude_name
    from .tools import call_summary as call_summary
    from .tools.base import EditorFiles as EditorFiles  # front ends implement it (ui/acp/editor.py)
    from .tools.preview import file_diff as file_diff  # an approval's diff, and a call's shown later
    from .tools.structured_output import StructuredOutput as StructuredOutput

__all__ = [
    "find_command",
    "complete_mentions",
    "mcp_tool_name",
    "HOOK_EVENTS",
    "worktree_listing",
    "worktree_lines",
]  # renamed on the way out


def __getattr__(name: str) -> Any:
    """A name of the ``if TYPE_CHECKING:`` block, its module imported now (once: the name then stays here)."""
    # A dunder is none of them: ``from door import x`` asks for ``__path__`` first, which would read this file
    # (``later``) before the TUI's first screen, where it takes nothing from the block.
    if name.startswith("__") or name not in later():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = later()[name]
    value = getattr(importlib.import_module(module, __package__), attribute)
    globals()[name] = value
    return value


@functools.cache
def later() -> dict[str, tuple[str, str]]:
    """What loads on first use, as the ``if TYPE_CHECKING:`` block imports it: name → (module, its name there).
    Read from this file, so that the block is the one list of them."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    return {
        alias.asname or alias.name: ("." * node.level + (node.module or ""), alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
