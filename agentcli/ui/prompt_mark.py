"""Where the session stood when a prompt went in, so that -p's result (and `agentcli review`'s) reports what
happened since; its own small module, so that -p's text output does not load the stream-json renderer."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.door import SessionSurface
    from ..core.events import Usage


@dataclass
class Mark:
    """Where the session stood when a prompt went in: a result reports what happened since."""

    turns: int
    usage: Usage
    api_seconds: float
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def of(cls, session: SessionSurface) -> Mark:
        return cls(session.turns, session.usage, session.api_seconds)
