"""ACP: an editor's prompt to the first ``agent_message_chunk`` of `agentcli acp`, driven by the ACP SDK's own
client, against `agentcli -p` answering the same prompt from launch, on the same stand-in server."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import text

from .common import BIN, StandIn, api_env
from .stats import Section


class FirstChunk:
    """The SDK's Client side: notes when the first message chunk of a prompt arrives."""

    def __init__(self) -> None:
        self.arrived: asyncio.Event = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", "") == "agent_message_chunk":
            self.arrived.set()

    async def request_permission(self, **kwargs: Any) -> Any:
        raise RuntimeError("the bench's prompt needs no permission")


async def _acp_runs(server: StandIn, ws: Path, runs: int) -> list[float]:
    import acp

    client = FirstChunk()
    times: list[float] = []
    async with acp.spawn_agent_process(
        client,
        str(BIN / "agentcli"),
        "acp",
        cwd=ws,
        env=api_env(server),
        transport_kwargs={"stderr": subprocess.DEVNULL},
    ) as (conn, _process):
        await conn.initialize(protocol_version=1)
        for _ in range(runs + 1):  # the first is a warm-up
            new = await conn.new_session(cwd=str(ws), mcp_servers=[])
            client.arrived.clear()
            started = time.monotonic()
            prompt = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[acp.text_block("hi")]))
            await client.arrived.wait()
            times.append((time.monotonic() - started) * 1000)
            await prompt
    return times[1:]


def _headless_run(server: StandIn, ws: Path) -> float:
    """Launch to the first byte of the answer on standard output."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(BIN / "agentcli"), "-p", "hi"],
        cwd=ws,
        env=api_env(server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    proc.stdout.read(1)
    elapsed = (time.monotonic() - started) * 1000
    proc.communicate(timeout=60)
    return elapsed


def run(work: Path, runs: int = 5) -> Section:
    section = Section("ACP")
    ws = work / "acp-ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "README.md").write_text("# A small project\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    with StandIn(responder=lambda body: text("Hello.")) as server:
        ours = asyncio.run(_acp_runs(server, ws, runs))
        _headless_run(server, ws)
        theirs = [_headless_run(server, ws) for _ in range(runs)]
    section.compare(
        "ACP prompt to first agent_message_chunk",
        ours,
        "agentcli -p: launch to the answer",
        theirs,
        digits=0,
        note="the editor's process is already running and its session open, as in Zed; -p starts a process per prompt",
    )
    section.notes.append(
        f"{runs} runs each after one warm-up, on the same stand-in server (a one-line answer). ACP: "
        "`agentcli acp` driven by the ACP SDK's client over stdio; each run opens a session "
        "(`session/new`), then times `session/prompt` to the first `agent_message_chunk`. `-p`: "
        "`agentcli -p hi` from launch to the first byte of its answer on standard output."
    )
    return section
