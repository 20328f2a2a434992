"""What a session offers of its subagents: their records, the controls the user has over them (/stop, /steer,
/wrapup), their agent types and budget. A part of ``Session`` (session.py), which holds ``subagents``."""

from __future__ import annotations

from .engine.agents import AgentType
from .engine.loop import Agent
from .engine.subagent_record import SubagentRecord
from .engine.subagents import Subagents
from .engine.task_tool import TaskTool
from .events import Usage


class SessionChildren:
    main: Agent
    subagents: Subagents

    def add_agent_types(self, types: dict[str, AgentType]) -> None:
        """More agent types for this session (the Agent SDK's ``agents``, ``--agents``): they join, or
        replace by name, those of the built-ins and agent files, and the task tool offers them."""
        self.subagents.agent_types.update(types)
        for registry in {id(r): r for r in (self.main.tools, self.subagents.tools)}.values():
            if TaskTool.name in registry:
                registry.add(TaskTool(self.subagents.agent_types))

    @property
    def children(self) -> list[SubagentRecord]:
        return list(self.subagents.records.values())

    @property
    def running_children(self) -> list[SubagentRecord]:
        return self.subagents.running

    @property
    def results_waiting(self) -> bool:
        return bool(self.subagents.pending)

    @property
    def background_work(self) -> bool:
        return bool(self.subagents.background_running or self.subagents.pending)

    @property
    def tokens_kept_out(self) -> int:
        return self.subagents.tokens_kept_out

    def usage_by_type(self) -> dict[str, tuple[int, Usage]]:
        """Per agent type: how many subagents of it ran, and their usage summed (/cost, json)."""
        return self.subagents.usage_by_type()

    @property
    def agent_types(self) -> dict[str, AgentType]:
        return self.subagents.agent_types

    def cancel_child(self, agent_id: str) -> bool:
        """Stop one running subagent; its parent still gets its summary. False when it is not running."""
        return self.subagents.cancel(agent_id)

    def cancel_children(self) -> list[str]:
        """Stop every running subagent (/stop); returns their ids."""
        return self.subagents.cancel_all()

    def steer_child(self, agent_id: str, text: str) -> str:
        """The user's message for a running subagent, read at its next turn (/steer); "" or why not."""
        return self.subagents.steer(agent_id, text, source="user")

    def wrap_up_child(self, agent_id: str) -> str:
        """Ask a running subagent, for the user, to answer now with what it has (/wrapup); "" or why not."""
        return self.subagents.wrap_up(agent_id, source="user")
