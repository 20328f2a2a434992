"""What a session offers front ends of its parts, as small verbs and read-only views instead of the parts: the
permission mode and rules, the MCP servers, the session's file, the hooks a host program adds, the model
client's facts. A part of ``Session`` (session.py), which holds the parts (assembly.py puts them in).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .lifecycle import Attention, Lifecycle
from .mcp.session_servers import McpServers
from .model.llm import LLM
from .policy.hooks import Hook, Hooks
from .policy.permissions import Permissions
from .storage.checkpoints import Checkpoint, Checkpoints
from .storage.store import SessionStore
from .views import McpView, SavedView


class SessionParts:
    llm: LLM
    permissions: Permissions
    mcp: McpServers
    store: SessionStore | None
    hooks: Hooks
    lifecycle: Lifecycle
    checkpoints: Checkpoints

    # the permission mode and rules
    @property
    def permission_mode(self) -> str:
        return self.permissions.mode

    def set_permission_mode(self, mode: str) -> None:
        """Switch modes (/permissions, shift+tab, a client's or host's request); ValueError with one sentence for
        an unknown mode. The change is stored (ModeChanged) and told to the model before its next call."""
        self.permissions.set_mode(mode)

    def describe_permissions(self) -> str:
        """The mode and every rule with where it came from, for /permissions."""
        return self.permissions.describe()

    def deny_for_session(self, rules: Iterable[str]) -> None:
        """ "Reject always": these rules denied for the rest of the session."""
        self.permissions.deny_for_session(rules)

    @property
    def approvals_answered(self) -> bool:
        """Someone answers approvals (a user, or a host program): False, a call that would ask is refused."""
        return self.permissions.interactive

    # the MCP servers
    @property
    def mcp_servers(self) -> McpView:
        """The servers, their state, tools, prompts and resources, read only."""
        return self.mcp

    async def wait_servers(self) -> None:
        """Start the MCP servers if need be and wait until each is ready or failed (at most mcp_startup_timeout)."""
        await self.mcp.wait_started()

    async def restart_server(self, name: str) -> None:
        """Start server ``name`` (one of ``mcp_servers.servers``) again."""
        await self.mcp.restart(self.mcp.servers[name])

    async def stop_server(self, name: str) -> None:
        """Stop server ``name``; its tools then say so."""
        await self.mcp.servers[name].stop()

    def relay_server(self, name: str, relay: Callable[[dict[str, Any]], Any]) -> None:
        """How a server of type sdk (it runs in the host program) gets its messages."""
        self.mcp.servers[name].relay = relay

    # the session's file, and the checkpoints of /rewind
    @property
    def saved(self) -> SavedView | None:
        """Where the session is saved and whether writing failed; None: nothing is saved."""
        return self.store

    def checkpoint_list(self) -> list[Checkpoint]:
        """What /rewind can put back, prompt by prompt."""
        return self.checkpoints.list()

    @property
    def prompt_number(self) -> int:
        """The number of the latest user prompt (checkpoints are kept per prompt)."""
        return self.checkpoints.prompt

    # hooks, and reaching the user
    def add_hooks(self, hooks: Iterable[Hook]) -> None:
        """More hooks for this session (a host program's callbacks, --json-schema's Stop check)."""
        self.hooks.hooks.extend(hooks)

    def watch_hooks(self, watch: Callable[[dict[str, Any]], None]) -> None:
        """Be told each hook run as it starts and ends (--include-hook-events)."""
        self.hooks.watch = watch

    def claude_input(self, tool: str, tool_input: Any) -> Any:
        """A call's input as Claude Code's tool of that name takes it (what hooks and hosts are shown)."""
        return self.hooks.claude_input(tool, tool_input)

    def own_input(self, tool: str, given: dict[str, Any], before: Any) -> dict[str, Any]:
        """An input given back in Claude Code's form (a host's ``updatedInput``) as the tool takes it."""
        return self.hooks.own_input(tool, given, before)

    def add_attention(self, reach: Attention) -> None:
        """A front end's way to reach the user when they are needed (a terminal notification)."""
        self.lifecycle.attention.append(reach)

    # the model client's facts
    @property
    def api_seconds(self) -> float:
        """Time spent waiting on the API, over all calls."""
        return self.llm.api_seconds

    @property
    def web_search_off(self) -> str:
        """Why requests do not offer the API's web search; "" when they do."""
        return self.llm.web_search_off

    @property
    def has_credentials(self) -> bool:
        """The model client was given its credentials (else they are looked up at the first call)."""
        return self.llm.credentials is not None
