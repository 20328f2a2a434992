"""What a front end may use of a session (``SessionSurface``). ``core/session.py``'s ``Session`` implements it;
front ends are typed against it, so the type checker finds one that reaches past it into the agents
(docs/architecture.md says what is on it). The settings a session reads are ``core/settings.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .content import Message

if TYPE_CHECKING:
    from .engine.agents import AgentType
    from .engine.context_usage import ContextUsage
    from .engine.custom_commands import CustomCommand
    from .engine.history import Prompt
    from .engine.loop import RunResult
    from .engine.mentions import Mention
    from .engine.review import Review
    from .engine.skills import Skill
    from .engine.steering import Steers
    from .engine.subagent_record import SubagentRecord
    from .events import Event, Sink, ToolCallStarted, Usage
    from .lifecycle import Attention
    from .policy.hooks import Hook
    from .policy.status_command import StatusCommand
    from .settings import EngineSettings
    from .storage.checkpoints import Checkpoint, Restore
    from .system.workspace import Workspace
    from .tools.base import Tool
    from .tools.shells import BackgroundShells
    from .views import McpView, SavedView, ToolsView


class SessionSurface(Protocol):
    """What a front end may use of a session: ``Session`` implements it, and every front end is typed against
    it (``open_session`` returns it), so mypy finds a front end that reaches past it into the agents.

    Sending (``send``, ``read_results``, …) runs the main agent; what it does comes back as events to the
    sink and the subscribers. The subagents' public facts are their records (``children``); a front end
    answers an approval by resolving the request's future, never through the session."""

    id: str
    workspace: Workspace
    settings: EngineSettings  # what it was opened with
    trusted: bool  # the workspace's own files may widen what the agent does
    commands: dict[str, CustomCommand]  # custom slash commands (and skills), by name
    skills: dict[str, Skill]
    # The main agent's mailbox for steering: ``steering.add(text)`` while it works puts ``text`` into the
    # running turn at the next tool-result boundary (SteerDelivered says when); ``steering.take()`` gives
    # back what it has not read when the turn ended first (it becomes the next prompt) or was interrupted.
    steering: Steers
    asks_user: bool  # the front end answers a server's questions (ElicitationRequested); False: refused
    opened: list[Event]  # the warnings the session gave while it opened
    restored_events: list[Event]  # a resumed session's main transcript, to draw

    # sending, and the conversation
    def subscribe(self, sink: Sink) -> None: ...
    def emit(self, event: Event) -> None: ...
    def start_servers(self) -> None: ...
    async def send(self, text: str, images: Sequence[dict[str, Any]] = ()) -> RunResult: ...
    async def read_results(self) -> RunResult | None: ...
    async def finish_background(self) -> RunResult | None: ...
    async def compact(self, focus: str = "") -> bool: ...
    async def review(self, target: str = "") -> Review: ...  # ReviewTargetError: the target names nothing to review
    def clear(self) -> None: ...
    def prompt_list(self) -> list[Prompt]: ...
    def rewind(self, number: int, *, conversation: bool, files: bool, overwrite: bool = False) -> Restore: ...
    async def worktree(self, action: str, ident: str) -> str: ...
    async def worktree_root(self, ident: str) -> Path | None: ...
    def last_text(self) -> str: ...
    def call_started(self, block: dict[str, Any]) -> ToolCallStarted: ...
    def close(self) -> None: ...
    async def aclose(self, reason: str = "other") -> None: ...  # reason: SessionEnd's
    @property
    def messages(self) -> list[Message]: ...  # the main agent's history

    # the main agent's model, tools and counts
    @property
    def model(self) -> str: ...
    def set_model(self, model: str) -> None: ...
    def change_system(self, change: Callable[[str], str]) -> None: ...
    @property
    def tools(self) -> ToolsView: ...  # the main agent's tools, read only
    def add_tool(self, tool: Tool) -> None: ...  # one more for the main agent (--json-schema's answer tool)
    def only_tools(self, names: Iterable[str]) -> None: ...
    @property
    def shells(self) -> BackgroundShells: ...
    @property
    def max_turns(self) -> int: ...
    @property
    def turns(self) -> int: ...
    @property
    def usage(self) -> Usage: ...  # the main agent's and every subagent's
    @property
    def main_usage(self) -> Usage: ...
    @property
    def last_usage(self) -> Usage: ...  # the main agent's latest call
    def context_used(self) -> int: ...
    def context_window(self) -> int: ...
    async def context_usage(self) -> ContextUsage: ...  # /context's breakdown of the next request

    # the subagents' public facts, and steering, wrapping up or cancelling them
    @property
    def children(self) -> list[SubagentRecord]: ...  # every subagent of the session, oldest first
    @property
    def running_children(self) -> list[SubagentRecord]: ...
    @property
    def results_waiting(self) -> bool: ...  # a background child's result the main agent has not read
    @property
    def background_work(self) -> bool: ...  # a background child runs, or its result waits
    @property
    def tokens_kept_out(self) -> int: ...
    def usage_by_type(self) -> dict[str, tuple[int, Usage]]: ...  # per agent type: children ran, usage summed
    @property
    def agent_types(self) -> dict[str, AgentType]: ...
    def add_agent_types(self, types: dict[str, AgentType]) -> None: ...
    def cancel_child(self, agent_id: str) -> bool: ...
    def cancel_children(self) -> list[str]: ...
    def steer_child(self, agent_id: str, text: str) -> str: ...  # "" when queued, else why not
    def wrap_up_child(self, agent_id: str) -> str: ...  # "" when asked, else why not
    def mention_choices(self) -> list[Mention]: ...  # what '@' completes besides files
    def status_command(self) -> StatusCommand | None: ...  # the statusLine setting's command

    # the parts, through verbs and read-only views (session_parts.py)
    @property
    def permission_mode(self) -> str: ...
    def set_permission_mode(self, mode: str) -> None: ...  # ValueError: an unknown mode, in one sentence
    def describe_permissions(self) -> str: ...  # the mode and every rule, for /permissions
    def deny_for_session(self, rules: Iterable[str]) -> None: ...  # "reject always"
    @property
    def approvals_answered(self) -> bool: ...  # someone answers approvals; else a call that would ask is refused
    @property
    def mcp_servers(self) -> McpView: ...  # the MCP servers, read only
    async def wait_servers(self) -> None: ...  # started, and each ready or failed
    async def restart_server(self, name: str) -> None: ...
    async def stop_server(self, name: str) -> None: ...
    def relay_server(self, name: str, relay: Callable[[dict[str, Any]], Any]) -> None: ...  # a server of type sdk
    @property
    def saved(self) -> SavedView | None: ...  # the session's file, read only; None: nothing is saved
    def checkpoint_list(self) -> list[Checkpoint]: ...  # for /rewind's list
    @property
    def prompt_number(self) -> int: ...  # the latest user prompt's number
    def add_hooks(self, hooks: Iterable[Hook]) -> None: ...  # a host program's callbacks, --json-schema's check
    def watch_hooks(self, watch: Callable[[dict[str, Any]], None]) -> None: ...  # each hook run, as it goes
    def claude_input(self, tool: str, tool_input: Any) -> Any: ...  # a call's input as Claude Code's tool takes it
    def own_input(self, tool: str, given: dict[str, Any], before: Any) -> dict[str, Any]: ...  # and back again
    def add_attention(self, reach: Attention) -> None: ...  # a terminal notification when the user is needed
    @property
    def api_seconds(self) -> float: ...  # time spent waiting on the API
    @property
    def web_search_off(self) -> str: ...  # why the API's web search is not offered; "" when it is
    @property
    def has_credentials(self) -> bool: ...
