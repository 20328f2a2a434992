"""Loop overhead: 200 turns of tool calls through ``Session.send``, the stand-in server answering at once,
against a bare SDK loop (mini-swe-agent style) doing the same calls with the same tool."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from pathlib import Path
from typing import Any

from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools import default_tools
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.files import ReadFile
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text, tool_use

from .common import API_KEY, TOOLS, StandIn, close_session, make_session
from .stats import Section, Stat, paced

TURNS = 200
BUDGET = 80.0  # seconds for the timed runs (half as much for memory); at least three of each
PROMPT = "Read notes.md again and again."


class Script:
    """A model that reads a file on each of its first ``turns`` turns, then answers."""

    def __init__(self) -> None:
        self.turns = TURNS

    def __call__(self, body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if done < self.turns:
            return tool_use("read_file", {"path": "notes.md"})
        return text(f"Read it {self.turns} times; it says the same thing.")


def _workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.md").write_text("- keep the loop short\n- say each idea once\n- measure, don't guess\n")
    return root


async def _agentcli(server: FakeAnthropic, root: Path, turns: int) -> Any:
    """One run through the engine; returns the session (kept alive while memory is read)."""
    session = make_session(server, root, max_turns=turns + 10)
    result = await session.send(PROMPT)
    await close_session(session)
    if result.turns != turns + 1:
        raise RuntimeError(f"expected {turns + 1} model calls, got {result}")
    return session


async def _bare(server: FakeAnthropic, root: Path, turns: int) -> Any:
    """The floor: the same SDK calls and the same tool, with nothing around them. Returns the history."""
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(api_key=API_KEY, base_url=server.base_url, max_retries=0)
    tools = [t.schema() for t in default_tools()]
    ctx = ToolContext(workspace=Workspace.at(root), emit=lambda e: None, permissions=Permissions(), settings=TOOLS)
    read_file = ReadFile()
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    while True:
        async with client.messages.stream(
            model="claude-sonnet-5-5", max_tokens=16_000, system="You are terse.", messages=messages, tools=tools
        ) as stream:
            async for _ in stream:
                pass
            final = await stream.get_final_message()
        content = [b.model_dump(exclude_none=True) for b in final.content]
        messages.append({"role": "assistant", "content": content})
        calls = [b for b in content if b["type"] == "tool_use"]
        if not calls:
            break
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": await read_file.run(call["input"], ctx),
                    }
                    for call in calls
                ],
            }
        )
    await client.close()
    return messages


def client_ms_per_turn(server: FakeAnthropic) -> float:
    """Mean time from the server finishing one reply to the next request arriving: the client's share."""
    spans = sorted(server.timeline)
    gaps = [spans[i + 1][1] - spans[i][2] for i in range(len(spans) - 1)]
    return sum(gaps) * 1000 / len(gaps)


async def _one(kind: str, server: FakeAnthropic, root: Path, turns: int, traced: bool) -> tuple[float, float]:
    """(client ms per turn, MiB still held after the run, or nan when not traced)."""
    server.reset()
    gc.collect()
    if traced:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0] if traced else 0
    keep = await (_agentcli if kind == "agentcli" else _bare)(server, root, turns)
    server.assert_no_rejections()
    per_turn = client_ms_per_turn(server)
    server.reset()  # the server's record of every request is not the client's memory
    gc.collect()
    held = (tracemalloc.get_traced_memory()[0] - before) / 2**20 if traced else float("nan")
    if traced:
        tracemalloc.stop()
    del keep
    return per_turn, held


async def _measure(root: Path, runs: int, mem_runs: int, section: Section) -> None:
    import anthropic  # noqa: F401 - before the first session: the steady state, where every call goes through
    # the SDK (a session that starts while the SDK is not imported sends early, core/model/early_request.py, and
    # imports it in a thread that would run, and compete for the GIL, through half the measured turns)

    script = Script()
    with StandIn(responder=script) as server:
        script.turns = 20  # warm up imports, connections and caches on a short run of each
        for kind in ("agentcli", "bare"):
            await _one(kind, server, root, 20, False)
        script.turns = TURNS
        ms: dict[str, list[float]] = {"agentcli": [], "bare": []}
        mem: dict[str, list[float]] = {"agentcli": [], "bare": []}
        for i in paced(runs, BUDGET):
            for kind in ("agentcli", "bare") if i % 2 == 0 else ("bare", "agentcli"):
                ms[kind].append((await _one(kind, server, root, TURNS, False))[0])
        for _ in paced(mem_runs, BUDGET / 2):
            for kind in ("agentcli", "bare"):
                mem[kind].append((await _one(kind, server, root, TURNS, True))[1])
    section.compare(
        "ms per turn, excluding the model",
        ms["agentcli"],
        "bare SDK loop",
        ms["bare"],
        digits=2,
        note="target ≤ 0.6×; what did it: the body goes out as prepared bytes through the client's `post`, "
        "the history's JSON kept (core/model/request_body.py), and the message is put together "
        "from the raw events (llm.Accumulator). A cProfile of the old path, per call at 200 turns: the "
        "SDK's copy of the history (`copy_tree`, 4.4 ms under the profiler), its re-serialization (1.7 ms) and "
        "its MessageStream's accumulation (2 ms, most of it `ParsedMessage[...]` generics built per "
        "event). What stands in the way of 0.6× on a quiet machine (0.6-0.7× there; 0.4-0.5× on a loaded one): "
        "no single cost; a cProfile at 200 turns spreads the client's time over the HTTP stack both "
        "loops share (h11, httpcore2, anyio; the socket send of a body holding the whole history), "
        "the SDK's typed event per stream event, the session file (an event's dict, a JSON line and "
        "a flush, about 7 records a turn) and the body's join",
    )
    section.compare(
        f"memory held after {TURNS} turns",
        mem["agentcli"],
        "bare SDK loop",
        mem["bare"],
        unit="MiB",
        digits=2,
        note=f"{Stat([m * 1024 / TURNS for m in mem['agentcli']], 'KiB', 1)} per turn; target ≤ 1.2×; what "
        "moved it (516 to 441 KiB, tracemalloc): the history's JSON is kept as one piece per "
        "conversation, found again by the identity of its messages (request_body.py), instead of a "
        "bytes object, a list and a dict entry per message; then (441 to about 350 KiB, one change at a time): "
        "that JSON kept compressed but for its newest 16 KiB (core/model/packed.py; 70 KiB to about 8 here, "
        "where one file is read again and again; source files compress about 3×), the sandbox's list of "
        "hidden paths made when a command is wrapped rather than held (about 17 KiB), each tool call's name "
        "one interned string (58 bytes a call), the session file written unbuffered (its buffers about 5 KiB), "
        "the commands' environment made when a language server starts (about 5 KiB) and the history's content "
        "lists kept at their size; what is left over the bare loop: the session itself (its tools, settings, "
        "store, permissions: about 25 KiB), the JSON's newest part, and what a run leaves in caches the bare "
        "loop does not fill (about 17 KiB, read after the session is let go)",
    )


def run(work: Path, runs: int = 5, mem_runs: int = 3) -> Section:
    section = Section("Loop overhead")
    asyncio.run(_measure(_workspace(work / "loop-ws"), runs, mem_runs, section))
    section.notes.append(
        f"One `Session.send` that makes {TURNS} `read_file` tool calls and then answers ({TURNS + 1} model "
        "calls through the real SDK to the in-process stand-in server, which answers at once; the SDK is imported "
        "first, as it is about a second after launch, so no call goes out early). Per turn: the "
        "mean gap between the server finishing one reply and the next request arriving (the server's timeline), "
        "i.e. everything on the client side: SDK streaming and parsing, events, permission checks, the tool, the "
        "JSONL store, building and sending the next request, which holds the whole history. The peer is a bare "
        "`AsyncAnthropic` loop calling the same `read_file` tool with the same tool schemas. Memory: "
        "tracemalloc bytes still allocated after the run while the session (or the bare loop's message list) "
        "is alive, i.e. what a long session keeps; the server's own records are dropped first. Here and in every "
        "in-process measure the stand-in server's sockets have TCP_NODELAY, as real API front ends do; without "
        "it, each request of the fake waits about 40 ms on delayed ACKs, which would swamp these numbers."
    )
    return section
