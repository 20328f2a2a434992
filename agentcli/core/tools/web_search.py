"""web_search: the Messages API's own web search, a server tool, offered where the endpoint runs it.

The API runs the search itself: the model's call comes back as a ``server_tool_use`` block and the results as a
``web_search_tool_result`` block in the same assistant message, and the answer's text blocks cite them
(``citations``). The loop keeps those blocks as they came and sends them back unchanged; no call of it ever runs
here. So nothing can ask the user before a search, and a rule or hook that wants to judge one cannot: a deny or
ask rule that names it (``WebSearch`` in Claude Code's files) or a PreToolUse hook whose matcher matches it keeps
it out of every request (``withheld_by``), failing closed.

The ``web_search`` setting: ``true``, ``false``, or ``auto`` (the default): on at Anthropic's API (no base URL, or
api.anthropic.com), off at other endpoints (a proxy to another model, vLLM, Ollama), which do not run it; and an
endpoint that refuses the tool's type turns it off for the session (``refused_by_endpoint``, loop.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import ToolError
from .base import Tool, ToolContext

if TYPE_CHECKING:
    from ..model.llm import LLM
    from ..policy.hooks import Hooks
    from ..policy.permissions import Permissions

NAME = "web_search"
TYPE = "web_search_20250305"  # anthropic.types.WebSearchTool20250305Param
MAX_USES = 5  # searches one request may make
SETTINGS = ("auto", "true", "false")  # as config.py keeps the setting


class WebSearch(Tool):
    """The registry's entry for the API's web search: its definition is the server tool's, and it never runs here."""

    name = NAME
    claude_name = "WebSearch"  # the API's own, a server tool
    built_in_types = ("explore",)  # where the endpoint runs it (web_search.withheld_by)
    list_place = 12  # its place when a built-in agent type's tools are listed
    on_demand = False  # a server tool's few bytes
    kind = "read"
    key_arg = "query"
    description: ClassVar[str] = "Search the web (run by the API; results come back with citations)."
    input_schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}

    def schema(self) -> dict[str, Any]:
        return {"type": TYPE, "name": NAME, "max_uses": MAX_USES}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:  # a model that calls it as a client tool
        raise ToolError("web_search is run by the API itself; this endpoint did not run it.")


def offer(setting: str, llm: LLM, permissions: Permissions, hooks: Hooks) -> list[Tool]:
    """The session's web search tool, or none; ``llm.web_search_off`` says why not (``/help`` shows it)."""
    llm.web_search_off = why_not(setting, llm.host(), permissions, hooks)
    return [] if llm.web_search_off else [WebSearch()]


def why_not(setting: str, host: str, permissions: Permissions, hooks: Hooks) -> str:
    """Why a session's requests to ``host`` do not offer web search under its ``web_search`` setting (true, false
    or auto); "" when they do."""
    if setting == "false":
        return "the web_search setting is false"
    if setting == "auto" and host != "api.anthropic.com":
        return (
            f"the endpoint ({host}) is not Anthropic's API, which runs the search; set web_search = true if it "
            "runs it too"
        )
    return withheld_by(permissions, hooks)


def withheld_by(permissions: Permissions, hooks: Hooks | None) -> str:
    """Why rules or hooks keep web search out of requests ("" when they do not): a search runs on the API's
    servers, so no rule can ask about it and no PreToolUse hook can see it before it runs."""
    for kind in ("deny", "ask"):
        if rule := next(iter(permissions.rules.of(kind, NAME)), None):
            return f"the {kind} rule `{rule.text}` names it (a search runs on the API's servers, unasked)"
    hook = next((h for h in hooks.hooks if h.event == "PreToolUse" and h.matches(NAME)), None) if hooks else None
    if hook is not None:
        return f"the PreToolUse hook `{hook.command}` would judge it, and a search runs on the API's servers, unseen"
    return ""


def refused_by_endpoint(status: int | None, message: str) -> bool:
    """Whether a failed request is an endpoint's refusal of the web search tool: its type named as one it does not
    know (not merely listed among those it does, as a refusal of the API's tool search may list it)."""
    return (
        status == 400
        and re.search(rf"'{TYPE}' found|unknown[^.]*{TYPE}|{TYPE}[^.]*not supported", message, re.IGNORECASE)
        is not None
    )
