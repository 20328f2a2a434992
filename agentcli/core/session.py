"""A session: the main agent, its subagents, and the append-only JSONL store of every transcript.

Layout under ``$AGENTCLI_HOME/projects/<workspace slug>/``:
``<session>.jsonl`` holds the main transcript; ``<session>/subagents/<sa-id>.jsonl`` each child's.
Each record is one event as JSON plus a timestamp, written and flushed as it happens.
"""

from __future__ import annotations

import datetime
import json
import secrets
from pathlib import Path
from typing import IO, Any

from .. import paths
from ..config import Settings
from .agents import load_agent_types
from .context import main_system_prompt
from .events import MAIN, Event, SubagentFinished, SubagentStarted, TextDelta, Usage
from .llm import LLM, context_window
from .loop import Agent, RunResult
from .permissions import Permissions
from .subagents import Budgets, Subagents
from .tools import ToolRegistry, default_tools
from .tools.base import ToolContext
from .workspace import Workspace


def new_session_id() -> str:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


class SessionStore:
    """Appends each agent's events to its own JSONL file, flushed per record."""

    def __init__(self, project_dir: Path, session_id: str) -> None:
        self.project_dir = project_dir
        self.session_id = session_id
        self.main_path = project_dir / f"{session_id}.jsonl"
        self.subagent_dir = project_dir / session_id / "subagents"
        self._files: dict[str, IO[str]] = {}

    @classmethod
    def for_workspace(cls, root: Path, session_id: str) -> "SessionStore":
        return cls(paths.data_home() / "projects" / paths.project_slug(root), session_id)

    def path_for(self, agent_id: str) -> Path:
        return self.main_path if agent_id == MAIN else self.subagent_dir / f"{agent_id}.jsonl"

    def write(self, event: Event) -> None:
        if isinstance(event, TextDelta):  # the AssistantMessage that follows holds the whole text
            return
        record = {"ts": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
                  **event.to_dict()}
        self._append(event.agent_id, record)
        if isinstance(event, (SubagentStarted, SubagentFinished)):
            self._append(MAIN, record)  # the main transcript lists its children too

    def append_record(self, agent_id: str, record: dict[str, Any]) -> None:
        self._append(agent_id, record)

    def _append(self, agent_id: str, record: dict[str, Any]) -> None:
        f = self._files.get(agent_id)
        if f is None:
            path = self.path_for(agent_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            f = self._files[agent_id] = path.open("a", encoding="utf-8")
        f.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        f.flush()

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()


class Session:
    """What a front end drives: user text goes in, events come out through ``sink``."""

    def __init__(self, settings: Settings, workspace: Workspace, sink: Any, *, interactive: bool,
                 llm: LLM | None = None, session_id: str | None = None, store: bool = True) -> None:
        self.settings = settings
        self.workspace = workspace
        self.id = session_id or new_session_id()
        self.store = SessionStore.for_workspace(workspace.root, self.id) if store else None
        self.sink = sink
        self.llm = llm or LLM(model=settings.model, max_tokens=settings.max_tokens)
        self.permissions = Permissions.from_settings(settings.permission_mode, settings.permissions, interactive)
        agent_types = load_agent_types(workspace.root)
        tools = ToolRegistry(default_tools(agent_types))
        self.subagents = Subagents(
            llm=self.llm, tools=tools, agent_types=agent_types, type_settings=settings.agents,
            budgets=Budgets(settings.subagent_max_turns, settings.subagent_timeout, settings.max_parallel_subagents))
        env = {"keep_secret_env": "1"} if settings.keep_secret_env else {}
        ctx = ToolContext(workspace=workspace, emit=self.emit, permissions=self.permissions,
                          subagents=self.subagents, env=env,
                          output_dir=self.store.project_dir / self.id / "outputs" if self.store else None)
        self.main = Agent(llm=self.llm, tools=tools, ctx=ctx, system=main_system_prompt(workspace),
                          max_turns=settings.max_turns)

    def emit(self, event: Event) -> None:
        if self.store is not None:
            self.store.write(event)
        self.sink(event)

    async def send(self, text: str) -> RunResult:
        """Run the main agent on one user message."""
        return await self.main.run(text)

    def clear(self) -> None:
        """Start a fresh conversation with the same settings; the store keeps what came before."""
        self.main.messages = []
        self.main.last_usage = Usage()

    def set_model(self, model: str) -> None:
        self.main.model = model

    def context_used(self) -> int:
        """Tokens the main context held at the latest call."""
        return self.main.last_usage.context_tokens

    def context_window(self) -> int:
        return context_window(self.main.model)

    @property
    def usage(self) -> Usage:
        return self.main.usage + self.subagents.usage

    def close(self) -> None:
        if self.store is not None:
            self.store.close()

