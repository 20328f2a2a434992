"""The demo scenario for the stand-in server: ``demo_responder(body)`` plays a small coding agent.

The scenario itself ships with agentcli (``agentcli/demo/scenario.py``, what ``agentcli --demo``
serves); this wraps its answers as ``Reply`` objects, so tests, benchmarks and
``python -m tests.fakes.anthropic_server --scenario demo`` drive the real agentcli with it::

    with FakeAnthropic(responder=demo_responder) as server: ...
"""

from __future__ import annotations

from typing import Any

from agentcli.demo.scenario import MAX_EXPLORE_TURNS, answer, extract_terms, parse_grep_hits, wants_delegation
from tests.fakes.anthropic_server import Reply, reply

__all__ = ["demo_responder", "extract_terms", "parse_grep_hits", "wants_delegation", "MAX_EXPLORE_TURNS"]


def demo_responder(body: dict[str, Any]) -> Reply:
    """Reply to any /v1/messages body like a small coding agent (see agentcli/demo/scenario.py)."""
    return reply(*answer(body))
