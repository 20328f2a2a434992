"""A saved 500-turn session with tool calls, to render, scroll and resume.

One real exchange is recorded first: a user question, nine turns of tool calls (read_file, grep,
glob) and a Markdown answer, driven through ``Session.send`` and stored by the engine's own store.
Its JSONL records are then repeated 50 times (fresh tool_use ids, numbered questions and answers)
into one session file, which is quicker than replaying 500 ever-longer requests and stays
exactly in the engine's format.
"""

from __future__ import annotations

import asyncio
import datetime
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import Reply, new_tool_use_id, reply, text, text_block, tool_use_block

from .common import StandIn, close_session, make_session

EXCHANGES = 50
TURNS_PER_EXCHANGE = 10  # 9 tool-call turns and the answer
QUESTION = "Question 1 of 50: how does the cache module expire entries?"
ANSWER_HEAD = "Answer 1 of 50"
_CALLS = [("read_file", {"path": "src/cache.py"}), ("grep", {"pattern": "def "}), ("glob", {"pattern": "**/*.py"})]


@dataclass(frozen=True)
class LongSession:
    root: Path
    session_id: str
    path: Path
    turns: int
    last_marker: str  # text of the last answer, on screen once the resumed session is drawn


def responder(body: dict[str, Any]) -> Reply:
    done = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if done + 1 < TURNS_PER_EXCHANGE:
        name, args = _CALLS[done % len(_CALLS)]
        return reply(text_block(f"Step {done + 1}: looking with `{name}`."), tool_use_block(name, args))
    return text(
        f"## {ANSWER_HEAD}\n\nEntries expire in `src/cache.py:12` (`Cache.expire`), which:\n\n"
        "- drops entries older than `ttl` seconds;\n- runs on every `get`, so no timer thread is needed;\n"
        "- counts what it dropped in `stats.expired`.\n\n```python\ndef expire(self, now):\n"
        "    for key, (stamp, _) in list(self.items.items()):\n        if now - stamp > self.ttl:\n"
        "            del self.items[key]\n```\n\nThe tests in `tests/test_cache.py` cover both paths."
    )


def _workspace(root: Path) -> None:
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "cache.py").write_text(
        "import time\n\n\nclass Cache:\n    def __init__(self, ttl=60):\n        self.ttl = ttl\n"
        "        self.items = {}\n\n    def get(self, key):\n        self.expire(time.time())\n"
        "        return self.items.get(key)\n\n    def expire(self, now):\n        for key, (stamp, _) in "
        "list(self.items.items()):\n            if now - stamp > self.ttl:\n                del self.items[key]\n"
    )
    for i in range(12):
        (root / "src" / f"mod_{i}.py").write_text("".join(f"def f_{i}_{n}(x):\n    return x + {n}\n" for n in range(8)))


async def _record_one(root: Path) -> Path:
    with StandIn(responder=responder) as server:
        session = make_session(server, root)
        result = await session.send(QUESTION)
        await close_session(session)
        server.assert_no_rejections()
    if result.turns != TURNS_PER_EXCHANGE or session.store is None:
        raise RuntimeError(f"the recorded exchange went wrong: {result}")
    return session.store.main_path


def build(root: Path) -> LongSession:
    """Write the workspace and its 500-turn session; returns where it is."""
    _workspace(root)
    template = asyncio.run(_record_one(root))
    header, *body = template.read_text(encoding="utf-8").splitlines()
    old_id = template.stem
    new_id = datetime.datetime(2026, 1, 1).strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)
    lines = [header.replace(old_id, new_id)]
    ids = re.compile(r"toolu_[0-9A-Za-z]+")
    for k in range(1, EXCHANGES + 1):
        fresh: dict[str, str] = {}
        for line in body:
            line = ids.sub(lambda m, fresh=fresh: fresh.setdefault(m.group(0), new_tool_use_id()), line)
            line = line.replace("Question 1 of 50", f"Question {k} of {EXCHANGES}")
            lines.append(line.replace(ANSWER_HEAD, f"Answer {k} of {EXCHANGES}"))
    path = template.with_name(f"{new_id}.jsonl")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    template.unlink()
    return LongSession(root, new_id, path, EXCHANGES * TURNS_PER_EXCHANGE, f"Answer {EXCHANGES} of {EXCHANGES}")
