"""Agent types: what a subagent of each kind may use, and how it is told to work."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentType:
    name: str
    description: str
    tools: tuple[str, ...] | None = None  # None: every tool but task
    model: str = "inherit"
    max_turns: int | None = None  # at most the configured ceiling
    timeout: float | None = None  # seconds; at most the configured ceiling
    prompt: str = ""  # added to the subagent system prompt
    memory: bool = False  # whether AGENTS.md reaches it
    source: str = "built-in"


GENERAL_PURPOSE = AgentType(
    name="general-purpose",
    description="Researches a question or carries out a multi-step errand with every tool but task.",
)

BUILT_IN: dict[str, AgentType] = {GENERAL_PURPOSE.name: GENERAL_PURPOSE}


def load_agent_types(root: object = None) -> dict[str, AgentType]:
    """The agent types available in a workspace, by name."""
    return dict(BUILT_IN)
