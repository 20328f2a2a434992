"""Parallel subagents: three children at once, each slowed by the same server-side delay, against one."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import Reply, offers_tool
from tests.fakes.scenarios import demo_responder

from .common import StandIn, close_session, make_session
from .stats import Section

DELAY = 0.25  # seconds the server waits before each subagent reply
NAMES = ("alpha_handler", "beta_handler", "gamma_handler")
PROMPTS = {
    1: f"Use a subagent to find where `{NAMES[0]}` is defined.",
    3: "Use subagents to find where " + ", ".join(f"`{n}`" for n in NAMES[:2]) + f" and `{NAMES[2]}` are defined.",
}


def responder(body: dict[str, Any]) -> Reply:
    chosen = demo_responder(body)
    return chosen if offers_tool(body, "task") else chosen.with_options(delay=DELAY)


def _workspace(root: Path) -> Path:
    for name in NAMES:
        path = root / "src" / f"{name.split('_')[0]}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"import logging\n\n\ndef {name}(event):\n    logging.info('%s', event)\n    return event\n")
    return root


async def _wall(server: StandIn, root: Path, children: int) -> float:
    server.reset()
    session = make_session(server, root)
    started = time.perf_counter()
    await session.send(PROMPTS[children])
    wall = time.perf_counter() - started
    await close_session(session)
    server.assert_no_rejections()
    records = list(session.subagents.records.values())
    if len(records) != children or any(r.status != "done" for r in records):
        raise RuntimeError(f"expected {children} finished subagents, got {[(r.id, r.status) for r in records]}")
    return wall * 1000


async def _measure(root: Path, runs: int, section: Section) -> None:
    one: list[float] = []
    three: list[float] = []
    with StandIn(responder=responder) as server:
        await _wall(server, root, 1)  # warm up
        for i in range(runs):
            if i % 2 == 0:
                three.append(await _wall(server, root, 3))
                one.append(await _wall(server, root, 1))
            else:
                one.append(await _wall(server, root, 1))
                three.append(await _wall(server, root, 3))
    section.compare(
        "3 children vs 1, wall time",
        three,
        "1 child",
        one,
        digits=0,
        note="1.00× would be perfectly parallel; 3.00× serial",
    )
    section.notes.append(
        f"Each child greps, reads a file and answers: three model calls, each held {DELAY * 1000:.0f} ms by the "
        "server (`Reply.delay`), so one child takes at least "
        f"{3 * DELAY * 1000:.0f} ms. The main agent's own calls are not delayed. Wall time of `Session.send` "
        f'for "{PROMPTS[3]}" against "{PROMPTS[1]}"; {runs} paired runs, order alternated. The default limit '
        "is 3 children at once."
    )


def run(work: Path, runs: int = 5) -> Section:
    section = Section("Parallel subagents")
    asyncio.run(_measure(_workspace(work / "parallel-ws"), runs, section))
    return section
