"""What a front end may use of a session (``SessionSurface``). ``core/session.py``'s ``Session`` implements it;
front ends are typed against it, so the type checker finds one that reaches past it into the agents
(docs/architecture.md says what is on it). The settings a session reads are ``core/settings.py``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence
from pathlib import Path

from .content import Message

if TYPE_CHECKING:
    from .engine.agents import AgentType
    from .engine.context_usage import ContextUsage
    from .engine.custom_commands import CustomCommand
    from .engine.history import Prompt
    from .lifecycle import Lifecycle
    from .engine.mentions import Mention
    from .engine.loop import RunResult
    from .engine.review import Review
    from .engine.skills import Skill
    from .engine.steering import Steers
    from .engine.subagent_record import SubagentRecord
    from .events import Event, Sink, ToolCallStarted, Usage
    from .mcp.servers import McpServers
    from .model.llm import LLM
    from .settings import EngineSettings
    from .policy.hooks import Hooks
    from .policy.status_command import StatusCommand
    from .policy.permissions import Permissions
    from .storage.checkpoints import Checkpoints, Restore
    from .storage.store import SessionStore
    from .system.workspace import Workspace
    from .tools import ToolRegistry
    from .tools.shells import BackgroundShells


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
    store: SessionStore | None  # None: nothing is saved
    checkpoints: Checkpoints  # for /rewind's list
    permissions: Permissions  # the mode, and the rules /permissions shows and changes
    mcp: McpServers
    hooks: Hooks  # a host program's control protocol registers hooks
    lifecycle: Lifecycle  # front ends with a terminal add to its ``attention`` (a notification when the user is needed)
    # The main agent's mailbox for steering: ``steering.add(text)`` while it works puts ``text`` into the
    # running turn at the next tool-result boundary (SteerDelivered says when); ``steering.take()`` gives
    # back what it has not read when the turn ended first (it becomes the next prompt) or was interrupted.
    steering: Steers
    asks_user: bool  # the front end answers a server's questions (ElicitationRequested); False: refused
    llm: LLM  # the model client: API time, raw stream events
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
    def tools(self) -> ToolRegistry: ...
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
