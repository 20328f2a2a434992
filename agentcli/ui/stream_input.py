"""``--input-format stream-json``: user messages as JSON lines on standard input, one turn each, and the
control protocol ``claude-agent-sdk`` speaks over the same pipe.

Each ``{"type": "user", "message": {"role": "user", "content": ...}}`` line is one prompt (text, and images
as the API's image blocks); prompts run in order, each ending with its result line (one agentcli cannot take,
such as a document block or a damaged image, with an error result that says why, so no client waits on it); with ``--replay-user-messages`` each is written back, with its
``uuid`` (the line's own, or a new one), as it is taken up. ``control_request`` lines are answered at once,
even while a turn runs: ``initialize``, ``interrupt`` (stops the running turn), ``set_permission_mode``,
``rewind_files`` (the files as they were before the user message of that uuid) and the rest in ``serve``;
any other request gets an error ``control_response`` that names it, and the run goes on. When standard
input closes, the prompts already read are finished, then agentcli exits.

agentcli asks the program on the other end too, with control requests of its own, whose answers come
back as ``control_response`` lines (``Host``):

- ``can_use_tool`` for every approval, with ``--permission-prompt-tool stdio``: allow (maybe with
  another input), or deny with a message, and ``interrupt`` stops the turn as well;
- ``hook_callback`` for the hooks the ``initialize`` request registered (its ``hooks``), whose answers
  count as a command hook's JSON output would;
- ``mcp_message`` for MCP servers of type ``sdk``, which live in that program.

Once standard input closes, no answer can come: a question still open is answered no.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
import threading
import uuid
from typing import IO, Any, NamedTuple

from ..core.door import (
    HOOK_EVENTS,
    MODES,
    AgentFileError,
    Hook,
    SessionError,
    SessionSurface,
    agent_from_definition,
    claude_name,
    images,
)
from ..core.events import ALLOW_ONCE, ALLOW_SESSION, DENY, MAIN, Approval, ApprovalRequested
from ..signals import exit_signals
from .headless import Answer, HeadlessOutput, answer, exit_status, report, whole_characters
from .prompt_mark import Mark
from .stream_json import MCP_STATUS

EOF = None


class Prompt(NamedTuple):
    text: str
    images: list[dict[str, Any]]
    message: dict[str, Any]  # the line's message, as it came
    uuid: str
    refusal: str = ""  # why agentcli cannot take it: it gets an error result saying so, and nothing is sent


class UnsupportedRequest(Exception):
    """A control request agentcli does not serve; the message names it."""


class HostGone(Exception):
    """Standard input closed: the program that would answer a control request is gone."""


class Host:
    """Control requests agentcli sends to the program driving it, each waiting for its response line."""

    def __init__(self, output: HeadlessOutput) -> None:
        self.output = output
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.count = 0
        self.gone = False

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """The response to one request; an Exception with the host's error, HostGone when it cannot answer."""
        if self.gone:
            raise HostGone("standard input is closed, so the program driving agentcli cannot answer")
        self.count += 1
        request_id = f"agentcli_{self.count}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        self.output.line({"type": "control_request", "request_id": request_id, "request": request})
        try:
            return await future
        except asyncio.CancelledError:  # the call was stopped: the host need not answer any more
            self.output.line({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self.waiting.pop(request_id, None)

    def answered(self, message: dict[str, Any]) -> None:
        response: dict[str, Any] = message["response"] if isinstance(message.get("response"), dict) else {}
        future = self.waiting.get(response.get("request_id"))  # type: ignore[arg-type]  # no id: finds nothing
        if future is None or future.done():
            return
        if response.get("subtype") == "error":
            future.set_exception(Exception(str(response.get("error") or "the program gave no reason")))
        else:
            body = response.get("response")
            future.set_result(body if isinstance(body, dict) else {})

    def close(self) -> None:
        self.gone = True
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(HostGone("standard input closed before the program driving agentcli answered"))


def read_lines(stream: IO[str], loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
    """Standard input, line by line, into ``queue`` (a thread: stdin may be a file, a pipe or a socket)."""
    try:
        for line in stream:
            loop.call_soon_threadsafe(queue.put_nowait, line)
    except (OSError, ValueError):
        pass
    loop.call_soon_threadsafe(queue.put_nowait, EOF)


def prompt_of(message: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The text and image blocks of a user message line (the images checked as Claude Code's are, each with its
    marker); ValueError with one sentence when it is not one agentcli can take."""
    body = message.get("message")
    content = body.get("content") if isinstance(body, dict) else None
    if isinstance(content, str):
        return whole_characters(content), []
    if not isinstance(content, list):
        raise ValueError("a user message needs message.content, a string or a list of content blocks")
    texts: list[str] = []
    pictures: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else type(block).__name__
        if kind == "image":
            try:
                pictures += images.from_block(block, f"image {len(pictures) // 2 + 1} of the message")
            except images.ImageError as exc:
                raise ValueError(str(exc).rstrip(".")) from None
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        else:
            raise ValueError(f"agentcli takes text and image content blocks in user messages, not {kind!r}")
    if not texts and not pictures:
        raise ValueError("a user message needs some content: its content list is empty")
    return whole_characters("\n\n".join(texts)), pictures


class Driver:
    """Reads standard input, answers control requests, and runs the prompts one after another."""

    def __init__(self, session: SessionSurface, output: HeadlessOutput, replay: bool = False) -> None:
        self.session, self.output, self.replay = session, output, replay
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()  # standard input, as it comes
        self.prompts: asyncio.Queue[Prompt | None] = asyncio.Queue()
        self.prompt_numbers: dict[str, int] = {}  # a user message's uuid -> its prompt's number (checkpoints)
        self.turn: asyncio.Task[Answer] | None = None
        self.ended_by: list[int] = []
        self.last: Answer | None = None
        self.host = Host(output)
        self.default_model = session.model  # what set_model with no model goes back to
        self.asking: set[asyncio.Task[None]] = set()  # approvals waiting for the host's answer
        if session.approvals_answered:  # --permission-prompt-tool stdio: the host answers approvals
            output.on_approval = self.approve
        for name, server in session.mcp_servers.servers.items():
            if server.config.transport == "sdk":
                session.relay_server(name, functools.partial(self.mcp_message, name))

    async def run(self, stream: IO[str]) -> int:
        lines = self.lines
        loop = asyncio.get_running_loop()
        threading.Thread(target=read_lines, args=(stream, loop, lines), name="stdin", daemon=True).start()
        self.output.attach(self.session, announce=False)
        worker = asyncio.create_task(self.work())
        with exit_signals(self.on_signal):
            try:
                while not self.ended_by and not self.output.reader_gone:
                    line = await next_line(lines, worker)
                    if line is EOF:
                        break
                    self.take(line)
                self.host.close()  # nobody is left to answer agentcli's own requests
                self.prompts.put_nowait(EOF)  # finish what was read, then stop
                await worker
            finally:
                worker.cancel()
                await self.session.aclose()
        if self.output.reader_gone:
            return self.output.gone_status
        return exit_status(self.output, self.last or Answer("", "done"), self.ended_by, self.session)

    def on_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: stop the running turn, read no more, and exit 128 + signum."""
        self.ended_by.append(signum)
        self.interrupt()
        self.lines.put_nowait(EOF)

    def take(self, line: str) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            self.warn(f"standard input held a line that is not JSON: {line.strip()[:80]!r}")
            return
        except RecursionError:
            self.warn("standard input held a line nested too deeply to read; it was skipped")
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "control_request":
            self.control(message)
        elif kind == "user":  # every user message gets its result, one agentcli cannot take an error result
            given = message.get("uuid")
            message_id = given if isinstance(given, str) and given else str(uuid.uuid4())
            body = message["message"] if isinstance(message.get("message"), dict) else {}
            try:
                self.prompts.put_nowait(Prompt(*prompt_of(message), body, message_id))
            except ValueError as exc:
                refusal = f"{exc}; the message was not sent"
                self.warn(refusal)
                self.prompts.put_nowait(Prompt("", [], body, message_id, refusal[0].upper() + refusal[1:] + "."))
        elif kind == "control_response":
            self.host.answered(message)
        elif kind not in ("control_cancel_request", "keep_alive"):
            self.warn(f"standard input held a line of unknown type {kind!r}; it was skipped")

    def warn(self, text: str) -> None:
        self.output.write(self.output.err, f"agentcli: {text}\n")

    def control(self, message: dict[str, Any]) -> None:
        request_id = message.get("request_id")
        request: dict[str, Any] = message["request"] if isinstance(message.get("request"), dict) else {}
        if request.get("subtype") in ("mcp_reconnect", "mcp_toggle"):  # these wait for a server: answered later
            task = asyncio.ensure_future(self.respond_later(request_id, self.serve_server(request)))
            self.asking.add(task)
            task.add_done_callback(self.asking.discard)
            return
        try:
            response = self.serve(request)
        except UnsupportedRequest as exc:
            self.respond(request_id, error=str(exc))
            return
        self.respond(request_id, response)

    def respond(self, request_id: Any, response: dict[str, Any] | None = None, error: str = "") -> None:
        body = {"subtype": "error", "error": error} if error else {"subtype": "success", "response": response}
        self.output.line({"type": "control_response", "response": {**body, "request_id": request_id}})

    async def respond_later(self, request_id: Any, work: Any) -> None:
        try:
            self.respond(request_id, await work)
        except UnsupportedRequest as exc:
            self.respond(request_id, error=str(exc))

    def server_named(self, request: dict[str, Any]) -> Any:
        name = request.get("serverName")
        server = self.session.mcp_servers.servers.get(name) if isinstance(name, str) else None
        if server is None:
            known = ", ".join(self.session.mcp_servers.servers) or "none"
            raise UnsupportedRequest(f"there is no MCP server {name!r} in this session (it has: {known})")
        return server

    async def serve_server(self, request: dict[str, Any]) -> dict[str, Any]:
        """``mcp_reconnect`` and ``mcp_toggle``: start a server again, or stop it (its tools then say so)."""
        server = self.server_named(request)
        if request.get("subtype") == "mcp_toggle" and request.get("enabled") is False:
            await self.session.stop_server(server.name)
            return {}
        await self.session.restart_server(server.name)
        if server.state != "ready":
            raise UnsupportedRequest(f"the MCP server {server.name!r} did not start again: {server.error}")
        return {}

    def context_usage(self) -> dict[str, Any]:
        """``get_context_usage``: what the main context held at the latest call, in Claude Code's shape."""
        session = self.session
        used, window = session.context_used(), session.context_window()
        tools = [
            {"name": t.name, "serverName": t.name.split("__")[1], "tokens": 0, "isLoaded": True}
            for t in session.tools
            if t.name.startswith("mcp__")
        ]
        return {
            "categories": [{"name": "Messages", "tokens": used, "color": "purple"}],
            "totalTokens": used,
            "maxTokens": window,
            "rawMaxTokens": window,
            "percentage": round(100 * used / window, 2),
            "model": session.model,
            "isAutoCompactEnabled": True,
            "memoryFiles": [],
            "mcpTools": tools,
            "agents": [{"agentType": name, "source": t.source, "tokens": 0} for name, t in session.agent_types.items()],
            "gridRows": [],
        }

    def mcp_status(self) -> dict[str, Any]:
        """``mcp_status``: each server's state and tools, in Claude Code's words."""
        servers = []
        for name, server in self.session.mcp_servers.servers.items():
            entry: dict[str, Any] = {
                "name": name,
                "status": MCP_STATUS.get(server.state, "failed"),
                "config": {"type": server.config.transport},
                "scope": server.config.source,
                "tools": [{"name": t.name, "description": t.description} for t in server.tools],
            }
            if server.error:
                entry["error"] = server.error
            servers.append(entry)
        return {"mcpServers": servers}

    def serve(self, request: dict[str, Any]) -> dict[str, Any]:
        subtype = request.get("subtype")
        if subtype == "initialize":
            if request.get("systemPromptSnapshot"):
                raise UnsupportedRequest("agentcli does not support systemPromptSnapshot in the initialize request")
            self.register_agents(request.get("agents"))
            self.register_hooks(request.get("hooks"))
            commands = [
                {"name": c.name, "description": c.description, "argumentHint": c.argument_hint}
                for c in sorted(self.session.commands.values(), key=lambda c: c.name)
            ]
            return {
                "commands": commands,
                "agents": [{"name": name} for name in sorted(self.session.agent_types)],
                "output_style": "default",
                "available_output_styles": ["default"],
                "models": [],
                "account": {},
                "pid": os.getpid(),
            }
        if subtype == "interrupt":
            self.interrupt()
            return {}
        if subtype == "set_permission_mode":
            mode = request.get("mode")
            if mode not in MODES:
                raise UnsupportedRequest(f"agentcli has no permission mode {mode!r} (it has {', '.join(MODES)})")
            self.session.set_permission_mode(mode)
            return {}
        if subtype == "set_model":
            model = request.get("model") or self.default_model
            try:
                self.session.set_model(str(model))
            except ValueError as exc:
                raise UnsupportedRequest(str(exc)) from None
            return {}
        if subtype == "get_context_usage":
            return self.context_usage()
        if subtype == "mcp_status":
            return self.mcp_status()
        if subtype == "stop_task":
            task_id = request.get("task_id")
            if not isinstance(task_id, str) or not self.session.cancel_child(task_id):
                raise UnsupportedRequest(f"there is no running task {task_id!r} to stop")
            return {}
        if subtype == "rewind_files":
            return self.rewind_files(request)
        raise UnsupportedRequest(f"agentcli does not support the control request {subtype!r}")

    def rewind_files(self, request: dict[str, Any]) -> dict[str, Any]:
        """``rewind_files``: the files the agents changed since the user message ``user_message_id`` came as
        they were before it (``dry_run``: only say which), in Claude Code's shape. A file changed by hand
        since is left alone and listed."""
        if self.turn is not None and not self.turn.done():
            raise UnsupportedRequest(
                "rewind_files: a turn is running and may change the files still; interrupt it first"
            )
        message_id = request.get("user_message_id")
        number = self.prompt_numbers.get(message_id) if isinstance(message_id, str) else None
        if number is None:
            raise UnsupportedRequest(
                f"rewind_files: no user message {message_id!r} started a prompt in this run "
                "(the uuids are those of the user messages sent; --replay-user-messages "
                "writes them back)"
            )
        dry_run = request.get("dry_run") is True or request.get("dryRun") is True
        try:
            restore = self.session.rewind(number, conversation=False, files=not dry_run)
        except SessionError as exc:
            raise UnsupportedRequest(f"rewind_files: {exc}") from None
        root = self.session.workspace.root
        response: dict[str, Any] = {"canRewind": True, "filesChanged": [str(root / p) for p in restore.restored]}
        if restore.changed_by_hand or restore.not_kept:
            response["agentcli_left_alone"] = {
                "changed_by_hand": [str(root / p) for p in restore.changed_by_hand],
                "not_kept": [str(root / p) for p in restore.not_kept],
            }
        return response

    def register_agents(self, agents: Any) -> None:
        """The ``agents`` of the initialize request: agent types for this session, as agent files are."""
        if not agents:
            return
        if not isinstance(agents, dict):
            raise UnsupportedRequest("the agents of the initialize request must be an object of definitions by name")
        notes: list[str] = []
        try:
            types = {
                name: agent_from_definition(name, spec, source="the Agent SDK's agents", notes=notes)
                for name, spec in agents.items()
            }
        except AgentFileError as exc:
            raise UnsupportedRequest(f"agents: {exc}") from None
        self.session.add_agent_types(types)
        for note in notes:
            self.warn(note)

    def register_hooks(self, hooks: Any) -> None:
        """The ``hooks`` of the initialize request: each callback id runs as a hook, through ``hook_callback``."""
        if not hooks:
            return
        if not isinstance(hooks, dict):
            raise UnsupportedRequest("the hooks of the initialize request must be an object of events")
        added: list[Hook] = []
        for event, matchers in hooks.items():
            if event not in HOOK_EVENTS:
                raise UnsupportedRequest(f"agentcli has no hook event {event!r} (it has {', '.join(HOOK_EVENTS)})")
            for matcher in matchers if isinstance(matchers, list) else []:
                matcher = matcher if isinstance(matcher, dict) else {}
                timeout = matcher.get("timeout")
                timeout = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else 60.0
                for callback_id in matcher.get("hookCallbackIds") or []:

                    async def call(fields: dict[str, Any], callback_id: str = str(callback_id)) -> dict[str, Any]:
                        return await self.host.ask(
                            {
                                "subtype": "hook_callback",
                                "callback_id": callback_id,
                                "input": fields,
                                "tool_use_id": fields.get("tool_use_id"),
                            }
                        )

                    added.append(
                        Hook(
                            event,
                            f"(the Agent SDK's callback {callback_id})",
                            timeout,
                            str(matcher.get("matcher") or ""),
                            callback=call,
                        )
                    )
        self.session.add_hooks(added)

    async def mcp_message(self, server: str, message: dict[str, Any]) -> dict[str, Any] | None:
        """One JSON-RPC message to an MCP server of type sdk, and its reply."""
        reply = await self.host.ask({"subtype": "mcp_message", "server_name": server, "message": message})
        answer = reply.get("mcp_response")
        return answer if isinstance(answer, dict) else None

    def approve(self, event: ApprovalRequested) -> None:
        """An approval, asked of the host as ``can_use_tool``; the call waits for its answer."""
        task = asyncio.ensure_future(self.ask_approval(event))
        self.asking.add(task)
        task.add_done_callback(self.asking.discard)
        if event.future is not None:  # the call was stopped: the question is withdrawn
            event.future.add_done_callback(lambda future: task.cancel() if future.cancelled() else None)

    async def ask_approval(self, event: ApprovalRequested) -> None:
        name = claude_name(event.tool)
        shown = self.session.claude_input(event.tool, event.input)
        request: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": name,
            "input": shown,
            "permission_suggestions": [],
            "tool_use_id": event.tool_use_id or None,
        }
        if event.reason:
            request["decision_reason"] = event.reason
        if event.agent_id != MAIN:
            request["agent_id"] = event.agent_id
        interrupt = False
        try:
            reply = await self.host.ask(request)
        except Exception as exc:  # noqa: BLE001 - its callback failed, or the host is gone: a no
            answer = Approval(DENY, message=f"The program driving agentcli did not allow this {name} call: {exc}.")
        else:
            behavior = reply.get("behavior")
            if behavior == "allow":
                given = reply.get("updatedInput")
                changed = (
                    self.session.own_input(event.tool, given, event.input)
                    if isinstance(given, dict) and given != shown
                    else None
                )
                answer = Approval(ALLOW_SESSION if reply.get("updatedPermissions") else ALLOW_ONCE, input=changed)
            else:
                message = reply.get("message") if behavior == "deny" else None
                answer = Approval(
                    DENY,
                    message=str(
                        message
                        or f"The program driving agentcli denied this {name} "
                        "call. Do not retry it; take another approach."
                    ),
                )
                interrupt = behavior == "deny" and reply.get("interrupt") is True
        if event.future is not None and not event.future.done():
            event.future.set_result(answer)
        if interrupt:
            self.interrupt()

    def interrupt(self) -> None:
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()

    async def work(self) -> None:
        """Run the prompts in order until the end of input. The init line comes with the first prompt,
        once the MCP servers have started (an SDK server's through the requests this reads meanwhile)."""
        announced = False
        while (taken := await self.prompts.get()) is not EOF:
            if self.ended_by or self.output.reader_gone:
                continue
            if not announced:
                announced = True
                await self.session.wait_servers()
                self.output.announce(self.session)
            message_id = taken.uuid
            if self.replay:
                self.output.line(
                    {
                        "type": "user",
                        "message": taken.message,
                        "parent_tool_use_id": None,
                        "session_id": self.session.id,
                        "uuid": message_id,
                        "isReplay": True,
                    }
                )
            mark, before = Mark.of(self.session), self.session.prompt_number
            if taken.refusal:
                self.last = Answer(taken.refusal, "refused", taken.refusal)
            elif self.output.over_budget:  # the budget holds for the whole session
                self.last = Answer("", "budget", f"the cost passed --max-budget-usd {self.output.budget}")
            else:
                self.turn = asyncio.create_task(
                    answer(self.session, taken.text, self.output, self.ended_by, taken.images)
                )
                self.output.run = self.turn
                try:
                    self.last = await self.turn
                except asyncio.CancelledError:  # interrupted before it started
                    self.last = Answer(self.session.last_text(), "interrupted", "interrupted")
                self.output.run = None
            if self.session.prompt_number != before:  # it became a prompt (no hook refused it)
                self.prompt_numbers[message_id] = self.session.prompt_number
            report(self.output, self.session, mark, self.last)


async def next_line(lines: asyncio.Queue[str | None], worker: asyncio.Task[None]) -> str | None:
    """The next input line; EOF as well when the worker stopped (it never does on its own)."""
    get = asyncio.ensure_future(lines.get())
    await asyncio.wait({get, worker}, return_when=asyncio.FIRST_COMPLETED)
    if get.done():
        return get.result()
    get.cancel()
    return EOF


async def run_stream_input(
    session: SessionSurface, output: HeadlessOutput, stream: IO[str] | None = None, *, replay: bool = False
) -> int:
    return await Driver(session, output, replay).run(stream or sys.stdin)
