"""Tools on demand (core/tools/on_demand.py): what the first requests carry, and what loading a tool mid-way
costs the prompt cache, route by route, on the stand-in server; and Claude Code's first request beside ours."""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from agentcli.core.tools.on_demand import CARRIED
from tests.fakes.anthropic_server import text, tool_use

from .common import BIN, StandIn, api_env, close_session, make_session, request_bytes
from .report import Section

ROUTES = ("off", "agentcli", "api")


def in_context(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the model reads it: without the definitions the API's tool search keeps out until found."""
    return {**body, "tools": [t for t in body.get("tools", []) if not t.get("defer_loading")]}


def _repo() -> Path:
    root = Path(tempfile.mkdtemp(prefix="bench-on-demand-"))
    (root / "app.py").write_text("def main():\n    return 1\n")
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "start"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


async def first_requests(root: Path, route: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first request for "hello", and an explore child's first request, on ``route``."""
    with StandIn() as server:
        server.script(text("Hello."))
        session = make_session(server, root, tool_search=route)
        await session.send("hello")
        hello = server.requests[0]
        await close_session(session)
    with StandIn() as server:
        server.script(
            tool_use(
                "task", {"description": "Find main", "prompt": "Where is main defined?", "subagent_type": "explore"}
            ),
            text("app.py:1"),
            text("It is in app.py:1."),
        )
        session = make_session(server, root, tool_search=route)
        await session.send("where is main?")
        child = server.requests[1]
        await close_session(session)
    return hello, child


# The scripted session of the cache measure: reads, then a deferred tool loaded and used, then more reads.
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("grep", {"pattern": "main"}),
    ("read_file", {"path": "app.py"}),
    ("glob", {"pattern": "*.py"}),
    ("tool_search", {"query": "git_log"}),
    ("git_log", {}),
    ("read_file", {"path": "app.py"}),
    ("grep", {"pattern": "return"}),
    ("glob", {"pattern": "*"}),
    ("read_file", {"path": "app.py", "limit": 1}),
]


def _cache_order(body: dict[str, Any]) -> bytes:
    """tools → system → messages, as the prompt cache reads a request, without the breakpoints' marks."""

    def bare(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: bare(v) for k, v in value.items() if k != "cache_control"}
        return [bare(v) for v in value] if isinstance(value, list) else value

    parts = [bare(body.get("tools", [])), bare(body.get("system", [])), bare(body["messages"])]
    return b"".join(json.dumps(p, ensure_ascii=False, separators=(",", ":")).encode() for p in parts)


def _shared(a: bytes, b: bytes) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def prefix_share(bodies: list[dict[str, Any]]) -> tuple[float, int, int]:
    """(share of input bytes that repeat the previous request's beginning, bytes sent, bytes not repeated)."""
    orders = [_cache_order(b) for b in bodies]
    total = sum(len(o) for o in orders)
    repeated = sum(_shared(orders[i - 1], orders[i]) for i in range(1, len(orders)))
    return repeated / total, total, total - repeated


def priced(total: int, fresh: int) -> int:
    """Bytes weighed as the prompt cache prices tokens: a repeat at a tenth, a fresh byte (written) at 1.25."""
    return round(0.1 * (total - fresh) + 1.25 * fresh)


def appended(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The agentcli route's bodies as they were when a loaded tool was appended to the tools (before branch
    cache): each definition a note carries (Offer.carried) moved to the end of the tools, the note left out."""
    out = []
    for body in bodies:
        tools, messages = list(body["tools"]), []
        for message in json.loads(json.dumps(body["messages"])):
            blocks = message["content"] if isinstance(message["content"], list) else []
            notes = [b for b in blocks if CARRIED in str(b.get("text", ""))]
            for note in notes:
                tools += [json.loads(line) for line in note["text"].splitlines() if line.startswith('{"name"')]
            messages.append({**message, "content": [b for b in blocks if b not in notes] or message["content"]})
        out.append({**body, "tools": tools, "messages": messages})
    return out


async def scripted(root: Path, route: str) -> list[dict[str, Any]]:
    with StandIn() as server:
        steps = [(name, args) for name, args in SCRIPT if route == "agentcli" or name != "tool_search"]
        server.script(*(tool_use(name, args) for name, args in steps), text("Done."))
        session = make_session(server, root, tool_search=route)
        await session.send("look around")
        bodies = server.requests
        await close_session(session)
    return bodies


def claude_code_first(section: Section, work: Path) -> tuple[int, int] | None:
    """(Claude Code's, agentcli's) first main request for ``-p hi`` in bytes, each run once on one stand-in."""
    from .claude_code import QUIET, claude_binary, seed_home

    binary, why = claude_binary()
    if binary is None:
        section.not_measured("first request for hello: Claude Code beside agentcli", why)
        return None
    stamp = binary.parent / "claude.version"
    version = stamp.read_text().split()[0] if stamp.is_file() and stamp.read_text().split() else "?"
    ws, home = work / "cc-ws", work / "cc-home"
    ws.mkdir(parents=True, exist_ok=True), home.mkdir(exist_ok=True)
    (ws / "README.md").write_text("# A small project\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    seed_home(home, ws, version)
    sizes = []
    for argv, dialect, extra in (
        ([str(binary), "-p", "hi"], "claude-code", {"HOME": str(home)}),
        ([str(BIN / "agentcli"), "-p", "hi"], "api", {}),
    ):
        with StandIn(responder=lambda body: text("Hello."), dialect=dialect) as server:
            env = {**api_env(server), **QUIET, **extra}
            subprocess.run(argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
            main = [b for b in server.requests if len(b.get("tools", [])) > 1]  # not a title or quota call
            if not main:
                section.not_measured(f"first request for hello ({Path(argv[0]).name})", "no request with tools")
                return None
            sizes.append(request_bytes(main[0]))
    section.compare(
        "first request for hello: agentcli -p hi (auto: agentcli's route here)",
        [sizes[1]],
        f"Claude Code {version}",
        [sizes[0]],
        unit="bytes",
        digits=0,
        note="target ≤ 12,000 bytes with every tool reachable by name; one run each, the same stand-in",
    )
    return sizes[0], sizes[1]


def run(work: Path) -> Section:
    section = Section("Tools on demand")
    root = _repo()
    firsts = {route: asyncio.run(first_requests(root, route)) for route in ROUTES}
    for route in ROUTES:
        hello, child = firsts[route]
        note = (
            "in context: what the model reads (the API keeps deferred definitions out until found); "
            f"body {request_bytes(hello):,} bytes"
            if route == "api"
            else "the whole body"
        )
        section.row(
            f"first request for hello, tool_search = {route}", f"{request_bytes(in_context(hello)):,} bytes", note=note
        )
        section.row(
            f"explore child's first request, tool_search = {route}",
            f"{request_bytes(in_context(child)):,} bytes",
            note="target ≤ 7,000 bytes",
        )
    runs = {route: asyncio.run(scripted(root, route)) for route in ROUTES}
    ways = {
        "off: every tool in every request": runs["off"],
        "agentcli: a loaded tool's definition in a note, tools unchanged": runs["agentcli"],
        "agentcli: a loaded tool appended to the tools (simulated, the way before)": appended(runs["agentcli"]),
        "api: defer_loading, found by the API's tool search": runs["api"],
    }
    for name, bodies in ways.items():
        share, total, fresh = prefix_share(bodies)
        section.row(
            f"cache prefix over {len(bodies)} requests, {name}",
            f"{share:.1%}",
            note=f"{total:,} bytes sent in cache order (tools → system → messages), {fresh:,} of them not a "
            f"repeat of the previous request's beginning; at cache prices {priced(total, fresh):,} "
            "byte-equivalents",
        )
    claude_code_first(section, work)
    section.notes.append(
        "The first requests: `Session.send` through the real SDK to the stand-in server (a git repository of one "
        "file), the body as JSON; on the API's route the deferred definitions are in the body but not in what the "
        "model reads, so the row gives the rest. The cache prefix: a scripted session (grep, read_file, glob, the "
        "deferred git_log loaded and used, then four more reads), each request laid out in the prompt cache's "
        "order (tools → system → messages, breakpoint marks left out) and compared byte for byte with the one "
        "before; the share is of all bytes sent. Appending a loaded tool to the tools rewrites the whole prefix "
        "once; its definition in a note after the latest message (agentcli's route since branch cache) costs only "
        "the note's bytes, and the model calls the tool by its name, which the request's tools do not declare (the "
        "stand-in takes that; whether every endpoint of this route lets a model call it was not checked). On the "
        "API's route "
        "nothing changes in the tools when the API finds one. Claude Code's first request: `claude -p hi` against "
        "the same stand-in (its main request, not its title call), one run each."
    )
    return section
