"""What the ACP tests share: an editor as the SDK's own Client, and `agentcli acp` processes that serve many
tests, since starting one costs more than most tests do.

Two processes serve every test of a pytest worker: one whose client did not opt in to child sessions, one whose
client did (``clientCapabilities.subagents`` is connection-wide). They share one stand-in server and one home.
Each test opens its own sessions in its own repository and scripts its own replies (the server is reset for
it); it sees only what arrives while it runs (its own ``Client``), and asserts on its own sessions. At its end
whatever it left running is cancelled, so no test depends on another or on their order.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import acp
import pytest
import pytest_asyncio
from acp import schema as s
from pydantic import TypeAdapter

from agentcli.ui.acp.children import UPDATE_FIELDS
from tests.conftest import API_KEY, PATIENT
from tests.fakes.anthropic_server import FakeAnthropic

ROOT = Path(__file__).resolve().parents[2]
# Every async test of the ACP files runs in the session's event loop, the one the shared processes live in.
shared = pytest.mark.asyncio(loop_scope="session")


# The newest official ACP schema (npm @agentclientprotocol/sdk, installed beside acpx by `make test`): a strict
# client's view of every message; the stable one, and for child sessions, which the Python SDK does not model,
# the unstable one (they are unstable there).
NPM_SCHEMAS = ROOT / "tests/acpx/node_modules/@agentclientprotocol/sdk/schema/v1"


@functools.cache
def strict(definition: str, unstable: bool = False) -> Any:
    """A validator of one definition of the npm schema, or None without it (no npm: the acpx test skips too)."""
    path = NPM_SCHEMAS / ("schema.unstable.json" if unstable else "schema.json")
    if not path.exists():
        return None
    import jsonschema

    defs = json.loads(path.read_text())["$defs"]
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": defs})


# The agent's other requests to the client, with the SDK's model and the schema's definition of each.
REQUESTS: dict[str, tuple[Any, str]] = {
    "fs/read_text_file": (s.ReadTextFileRequest.model_validate, "ReadTextFileRequest"),
    "fs/write_text_file": (s.WriteTextFileRequest.model_validate, "WriteTextFileRequest"),
    "elicitation/create": (TypeAdapter(s.CreateElicitationRequest).validate_python, "CreateElicitationRequest"),
}


def check(message: dict[str, Any]) -> None:
    """One message from the agent, against the SDK's own models (acp.schema) and the newest official schemas
    (``strict``); ``subagent_update``, which the SDK does not model, against the unstable schema alone and the
    fields agentcli means to send."""
    method = message.get("method")
    if method == "session/update":
        params, update = message["params"], message["params"]["update"]
        if update.get("sessionUpdate") == "subagent_update":
            assert set(update) <= set(UPDATE_FIELDS), update
            assert isinstance(update["sessionId"], str) and update["sessionId"].startswith(params["sessionId"] + ":")
            state = update.get("state")
            assert state is None or state["state"] in ("running", "idle"), state
        else:
            s.SessionNotification.model_validate(params)
    elif method == "session/request_permission":
        s.RequestPermissionRequest.model_validate(message["params"])
    elif method in REQUESTS:
        REQUESTS[method][0](message["params"])
    definition = {
        "session/update": "SessionNotification",
        "session/request_permission": "RequestPermissionRequest",
        **{name: model_name for name, (_, model_name) in REQUESTS.items()},
    }
    child = method == "session/update" and message["params"]["update"].get("sessionUpdate") == "subagent_update"
    if method in definition and (validator := strict(definition[method], unstable=child)) is not None:
        validator.validate(message["params"])
    elif "error" in message:
        assert isinstance(message["error"]["code"], int) and message["error"]["message"]


class Client:
    """An editor, as one test sees it: records every update and answers permission requests from a list."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.questions: list[s.RequestPermissionRequest] = []
        self.answers = list(answers or [])
        self.raw: list[dict[str, Any]] = []  # every message from the agent
        self.invalid: list[str] = []
        self.sessions: list[str] = []  # the sessions this test opened

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: s.ToolCallUpdate, options: list[s.PermissionOption], **kwargs: Any
    ) -> s.RequestPermissionResponse:
        self.questions.append(s.RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options))
        if not self.answers:
            return s.RequestPermissionResponse(outcome=s.DeniedOutcome(outcome="cancelled"))
        return s.RequestPermissionResponse(outcome=s.AllowedOutcome(outcome="selected", option_id=self.answers.pop(0)))

    def observe(self, message: dict[str, Any]) -> None:
        self.raw.append(message)
        try:
            check(message)
        except Exception as exc:  # the SDK's client drops an invalid update with a log line: fail instead
            self.invalid.append(f"{message}: {exc!r}")

    def of(self, kind: type, session_id: str) -> list[Any]:
        return [u for sid, u in self.updates if isinstance(u, kind) and sid == session_id]

    def said(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.of(s.AgentMessageChunk, session_id))

    def notes(self, session_id: str) -> list[dict[str, Any]]:
        """The raw ``session/update`` params of one session, as they came."""
        return [
            m["params"]
            for m in self.raw
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
        ]

    def subagent_updates(self, parent: str) -> list[dict[str, Any]]:
        return [p["update"] for p in self.notes(parent) if p["update"].get("sessionUpdate") == "subagent_update"]


class Router:
    """The SDK's Client side of one connection: hands everything to the running test's ``Client``."""

    def __init__(self) -> None:
        self.current = Client()

    async def session_update(self, **kwargs: Any) -> None:
        await self.current.session_update(**kwargs)

    async def request_permission(self, **kwargs: Any) -> s.RequestPermissionResponse:
        return await self.current.request_permission(**kwargs)

    def observe(self, event: Any) -> None:
        if event.direction.value == "incoming":
            self.current.observe(event.message)


@dataclass
class Agent:
    """One `agentcli acp` process and its connection."""

    conn: acp.ClientSideConnection
    router: Router
    home: Path
    stderr: Path
    opened: list[str] = field(default_factory=list)

    async def new(self, cwd: Path, **kwargs: Any) -> str:
        new = await self.conn.new_session(cwd=str(cwd), mcp_servers=kwargs.pop("mcp_servers", []), **kwargs)
        self.router.current.sessions.append(new.session_id)
        return str(new.session_id)

    async def prompt(self, session_id: str, text: str) -> s.PromptResponse:
        answer: s.PromptResponse = await self.conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])
        return answer  # (the SDK's decorator leaves prompt's return untyped)


def agent_env(home: Path, server: FakeAnthropic) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(
        ANTHROPIC_BASE_URL=server.base_url,
        ANTHROPIC_API_KEY=API_KEY,
        AGENTCLI_HOME=str(home / "agentcli"),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        AGENTCLI_TOOL_SEARCH="off",
    )  # a shared agent starts before the tests' own environment is set
    env.update([PATIENT])
    return env


@pytest.fixture(scope="session")
def shared_server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture(scope="session")
def acp_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The processes' home. MCP servers may take long to start on a loaded machine: two minutes each."""
    home = tmp_path_factory.mktemp("acp-home")
    (home / "agentcli" / "config").mkdir(parents=True)
    (home / "agentcli" / "config" / "config.toml").write_text("mcp_startup_timeout = 120\n")
    return home


async def serve(
    home: Path,
    server: FakeAnthropic,
    subagents: bool,
    router: Router | None = None,
    capabilities: s.ClientCapabilities | None = None,
    name: str = "",
    unstable: bool = False,
) -> AsyncIterator[Agent]:
    """One process; ``router``, ``capabilities`` and ``unstable``: a client that offers more (its files, terminals,
    the SDK's methods it marks unstable, such as elicitation)."""
    router = router or Router()
    client = cast(acp.Client, router)  # the SDK calls only the methods a client has (Router hands them on)
    stderr = home / f"agent-stderr-{name or ('subagents' if subagents else 'plain')}.txt"
    with stderr.open("w") as handle:
        async with acp.spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "agentcli",
            "acp",
            cwd=home,
            env=agent_env(home, server),
            transport_kwargs={"stderr": handle.fileno(), "shutdown_timeout": 60.0},
            observers=[router.observe],
            use_unstable_protocol=unstable,
        ) as (conn, _process):
            if subagents:  # the SDK's ClientCapabilities predates `subagents`: sent through the raw connection
                await conn._conn.send_request(
                    "initialize", {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}}
                )
            else:
                await conn.initialize(
                    protocol_version=1,
                    client_capabilities=capabilities or s.ClientCapabilities(),
                    client_info=s.Implementation(name="zed", version="0.208.0"),
                )
            yield Agent(conn, router, home, stderr)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def plain_process(acp_home: Path, shared_server: FakeAnthropic) -> AsyncIterator[Agent]:
    async for agent in serve(acp_home, shared_server, subagents=False):
        yield agent


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def subagent_process(acp_home: Path, shared_server: FakeAnthropic) -> AsyncIterator[Agent]:
    async for agent in serve(acp_home, shared_server, subagents=True):
        yield agent


@pytest.fixture
def server(shared_server: FakeAnthropic) -> Iterator[FakeAnthropic]:
    """The shared stand-in server, with this test's replies only."""
    shared_server.reset()
    yield shared_server
    shared_server.reset()


@pytest.fixture
def api_env(server: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": API_KEY}


async def attach(agent: Agent, client: Client) -> AsyncIterator[tuple[Agent, Client]]:
    agent.router.current = client
    try:
        yield agent, client
    finally:
        children = {m["params"]["update"].get("sessionId") for m in client.raw if m.get("method") == "session/update"}
        for session_id in client.sessions:  # what this test left running stops before the next one
            for child in sorted(c for c in children if isinstance(c, str) and c.startswith(f"{session_id}:")):
                await agent.conn.cancel(session_id=child)  # a background child outlives its parent's prompt
            await agent.conn.cancel(session_id=session_id)
        agent.router.current = Client()


@pytest_asyncio.fixture(loop_scope="session")
async def plain(plain_process: Agent, server: FakeAnthropic) -> AsyncIterator[tuple[Agent, Client]]:
    """A client that did not opt in to child sessions; this test's own view of it."""
    async for pair in attach(plain_process, Client()):
        yield pair


@pytest_asyncio.fixture(loop_scope="session")
async def opted_in(subagent_process: Agent, server: FakeAnthropic) -> AsyncIterator[tuple[Agent, Client]]:
    """A client that opted in to child sessions (``clientCapabilities.subagents``); this test's own view."""
    async for pair in attach(subagent_process, Client()):
        yield pair
