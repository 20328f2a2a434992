"""What agentcli holds of an MCP server's offer and questions (tools, prompts, resources, elicitations),
where the MCP library's log lines go, and the one-line descriptions of what went wrong."""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from ..system import processes
from .config import VARIABLE, ServerConfig

State = Literal[
    "waiting", "starting", "ready", "failed", "exited", "stopped"
]  # an MCP server's, as servers.py keeps it


@dataclass(frozen=True)
class RemoteTool:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class RemotePrompt:
    """A server's prompt: offered as the slash command ``/mcp__<server>__<name>``."""

    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...]  # each argument's name and whether it is required


@dataclass(frozen=True)
class RemoteResource:
    """A resource a server lists: attached to a prompt as ``@<server>:<uri>``."""

    server: str
    uri: str
    name: str
    description: str = ""
    mime_type: str = ""


@dataclass(frozen=True)
class Elicitation:
    """A server's question to the user (MCP elicitation). ``schema``: the JSON schema of the answer's
    fields (flat: strings, numbers, booleans, enums); ``url``: in URL mode, the page to open instead."""

    server: str
    message: str
    schema: dict[str, Any]
    url: str = ""


@dataclass(frozen=True)
class ElicitationAnswer:
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    refused: str = ""  # no one could be asked: why, in one sentence (sent to the server as an error)


Ask = Callable[[Elicitation], Awaitable[ElicitationAnswer]]
Progress = Callable[[float, "float | None", "str | None"], Awaitable[None]]
NO_ONE_TO_ASK = "agentcli runs without a user here (-p), so it cannot ask the user this question"
INSTRUCTIONS_CAP = 2_048  # characters of a server's instructions the system prompt takes
LOG = logging.getLogger("agentcli.mcp")
# The SDK's and ours: they write to the session's MCP log, never the terminal. The SDK's client session logs
# as plain "client" (mcp/client/session.py), outside its "mcp" tree: without a handler, logging's last resort
# printed its warnings and tracebacks (a notification it cannot validate) on standard error.
_LOGGERS = ("mcp", "client", "agentcli.mcp")
_log_handler: logging.Handler | None = None


def log_to(path: Path | None) -> None:
    """Send the MCP SDK's log lines (its tracebacks among them) and ours to ``path``, and nowhere else:
    never to the terminal, whatever a front end configured for the root logger. None: drop them."""
    global _log_handler
    handler: logging.Handler = logging.NullHandler()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handler = logging.FileHandler(path, encoding="utf-8", delay=True)
            handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        except OSError:
            pass
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.propagate = False
        if _log_handler is not None:
            logger.removeHandler(_log_handler)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    if _log_handler is not None:
        _log_handler.close()
    _log_handler = handler


def tasks_required(tool: Any) -> bool:
    """Whether a listed tool can only run as an MCP Task, which agentcli does not support."""
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None) == "required"


def unauthorized(status: int | None, config: ServerConfig) -> str:
    """The sentence for an HTTP server's 401, naming what to check (the headers, or a url that carries the
    token) and the ``${VARIABLE}`` holding it; "" for any other status."""
    if status != 401:
        return ""
    variables = sorted(
        {m.group(1) for value in (config.url, *(v for _, v in config.headers)) for m in VARIABLE.finditer(value)}
    )
    tokens = (
        ""
        if not variables
        else f" and the token in ${{{variables[0]}}}"
        if len(variables) == 1
        else f" and the tokens in {', '.join('${' + v + '}' for v in variables)}"
    )
    if config.headers:
        names = ", ".join(name for name, _ in config.headers)
        told = f"check the {names} header{'s' if len(config.headers) > 1 else ''} in {config.source}{tokens}"
    elif variables or urlsplit(config.url).query:
        told = f"check the credentials in its url in {config.source}{tokens}"
    else:
        told = f'it sends no credentials; add an "Authorization": "Bearer ${{TOKEN}}" header in {config.source}'
    return f"the server answered 401 Unauthorized: {told}"


def describe(exc: BaseException) -> str:
    """One line for an exception, looking inside the groups anyio raises."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"the command {exc.filename} was not found"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).strip() or type(exc).__name__
    if text.startswith("(") and "," in text:  # MCPError's args tuple
        text = getattr(exc, "message", text)
    return text.splitlines()[0][:300]


def _alive(pid: int) -> bool:
    stat = processes._stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def _child_with_marker(marker: str) -> int | None:
    """Our child process that carries ``marker``: the stdio server we just started (Linux)."""
    me = os.getpid()
    for pid in processes._pids():
        stat = processes._stat(pid)
        if stat is not None and stat[1] == me and processes._marker_of(pid) == marker:
            return pid
    return None
