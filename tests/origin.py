"""Whose an event is: the two fields every event carries (agent_id, parent_tool_use_id), as a TypedDict, so a test that
writes them once and passes them as ``**CHILD`` to many events has them checked by name and type."""

from __future__ import annotations

from typing import TypedDict


class Origin(TypedDict):
    agent_id: str
    parent_tool_use_id: str
