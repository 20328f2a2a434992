"""Delegation savings: "find where X is defined" on the large repository, done inline by the main
agent and delegated to a subagent, both played by the stand-in server's reactive demo agent."""

from __future__ import annotations

import asyncio
import time

from tests.fakes.anthropic_server import offers_tool
from tests.fakes.scenarios import demo_responder

from .bigrepo import DEFINED_IN, SYMBOL, BigRepo
from .common import StandIn, close_session, make_session, request_bytes, request_tokens
from .stats import Section, Stat

# demo_responder delegates when asked to ("subagent", "find where") and searches itself otherwise.
PROMPTS = {
    "inline": f"Grep for `{SYMBOL}` and tell me where it is defined.",
    "delegated": f"Use a subagent to find where `{SYMBOL}` is defined.",
}


async def _errand(server: StandIn, repo: BigRepo, prompt: str) -> dict[str, float]:
    server.reset()
    session = make_session(server, repo.root)
    started = time.perf_counter()
    result = await session.send(prompt)
    seconds = time.perf_counter() - started
    await close_session(session)
    server.assert_no_rejections()
    if DEFINED_IN not in result.text:
        raise RuntimeError(f"the errand went wrong: {result.text[:300]!r}")
    bodies = server.requests
    main = [b for b in bodies if offers_tool(b, "task")]
    largest = max(main, key=request_bytes)
    return {
        "bytes": request_bytes(largest),
        "tokens": request_tokens(largest),
        "main_calls": len(main),
        "conversation": max(request_bytes({"messages": b["messages"]}) for b in main),
        "all_tokens": sum(request_tokens(b) for b in bodies),
        "seconds": seconds,
    }


async def _measure(repo: BigRepo, runs: int, section: Section) -> None:
    got: dict[str, list[dict[str, float]]] = {"inline": [], "delegated": []}
    with StandIn(responder=demo_responder) as server:
        for prompt in PROMPTS.values():  # warm up: imports, connections, the page cache
            await _errand(server, repo, prompt)
        for _ in range(runs):
            for way, prompt in PROMPTS.items():
                got[way].append(await _errand(server, repo, prompt))

    def col(way: str, key: str) -> list[float]:
        return [r[key] for r in got[way]]

    section.compare(
        "largest main-agent request: inline",
        col("inline", "bytes"),
        "delegated",
        col("delegated", "bytes"),
        unit="bytes",
        digits=0,
        note="inline ÷ delegated: how much more the main context holds",
    )
    saved = Stat([a - b for a, b in zip(col("inline", "tokens"), col("delegated", "tokens"), strict=True)], "tokens", 0)
    section.compare(
        "… in estimated tokens",
        col("inline", "tokens"),
        "delegated",
        col("delegated", "tokens"),
        unit="tokens",
        digits=0,
        note=f"{saved} kept out of the main context",
    )
    section.compare(
        "… its messages alone",
        col("inline", "conversation"),
        "delegated",
        col("delegated", "conversation"),
        unit="bytes",
        digits=0,
        note="without the system prompt and tool schemas, which every request repeats",
    )
    section.compare(
        "input tokens, all agents",
        col("inline", "all_tokens"),
        "delegated",
        col("delegated", "all_tokens"),
        unit="tokens",
        digits=0,
        note="the price: the subagent reads the same output in its own context",
    )
    section.compare(
        "wall time",
        [s * 1000 for s in col("inline", "seconds")],
        "delegated",
        [s * 1000 for s in col("delegated", "seconds")],
        unit="ms",
        digits=0,
    )
    section.notes.append(
        f"Errand: where is `{SYMBOL}` defined, in the large repository ({repo.describe()}; the name is used "
        f'in about 1,100 tracked lines and defined once, in {DEFINED_IN}). Inline: "{PROMPTS["inline"]}" — '
        "the main agent greps (output capped at 250 lines), reads the defining file and answers. Delegated: "
        f'"{PROMPTS["delegated"]}" — the main agent calls `task`; the subagent greps and reads; the main '
        "agent gets back only the subagent's short answer and footer. Both are driven by "
        "`tests/fakes/scenarios.py:demo_responder` through the real SDK; the answer is checked to name "
        f"{DEFINED_IN}. Sizes are of the JSON request body; tokens are estimated as the stand-in server "
        f"counts them (JSON characters ÷ 4). The numbers are deterministic; {runs} runs each."
    )


def run(repo: BigRepo, runs: int = 3) -> Section:
    section = Section("Delegation savings")
    asyncio.run(_measure(repo, runs, section))
    return section
