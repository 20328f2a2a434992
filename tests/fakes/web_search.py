"""The stand-in's web search: the API's server tool ``web_search_20250305``, run by the stand-in as the API runs it.

A scripted reply holds the model's ``server_tool_use`` call (``search_call``); the stand-in answers it itself
(``answer_searches``): right after the call it puts a ``web_search_tool_result`` of the pages ``PAGES`` gives for
the query, as the API does within the same reply. ``cited`` is a text block that cites one of them. The checks
(``history_problem``) are the API's: the result blocks stand in assistant messages after their call, and each
citation carries what the API gave (``encrypted_index``, required by the SDK's citation param).
"""

from __future__ import annotations

import secrets
from typing import Any

TYPE = "web_search_20250305"
# query -> the pages the stand-in's search finds (title, url); any other query finds DEFAULT_PAGES.
PAGES: dict[str, list[tuple[str, str]]] = {}
DEFAULT_PAGES = [
    ("Python 3.13 release notes", "https://docs.python.org/3/whatsnew/3.13.html"),
    ("PEP 719 – Python 3.13 Release Schedule", "https://peps.python.org/pep-0719/"),
]


def search_call(query: str, id: str | None = None) -> dict[str, Any]:
    """The model's call of the API's web search, as a reply block."""
    return {
        "type": "server_tool_use",
        "id": id or "srvtoolu_" + secrets.token_hex(12),
        "name": "web_search",
        "input": {"query": query},
    }


def result_block(call: dict[str, Any]) -> dict[str, Any]:
    pages = PAGES.get(str(call["input"].get("query")), DEFAULT_PAGES)
    return {
        "type": "web_search_tool_result",
        "tool_use_id": call["id"],
        "content": [
            {
                "type": "web_search_result",
                "title": title,
                "url": url,
                "page_age": "April 30, 2025",
                "encrypted_content": "EncRypTed" + secrets.token_hex(8),
            }
            for title, url in pages
        ],
    }


def cited(text: str, title: str, url: str, cited_text: str = "") -> dict[str, Any]:
    """A text block citing one page found, as the API writes one."""
    return {
        "type": "text",
        "text": text,
        "citations": [
            {
                "type": "web_search_result_location",
                "url": url,
                "title": title,
                "cited_text": cited_text or text[:150],
                "encrypted_index": "EncIdx" + secrets.token_hex(6),
            }
        ],
    }


def answer_searches(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A reply's blocks with each web search call answered by its result, as the API runs the search."""
    out: list[dict[str, Any]] = []
    for i, block in enumerate(blocks):
        out.append(block)
        nxt = blocks[i + 1] if i + 1 < len(blocks) else {}
        if (
            block.get("type") == "server_tool_use"
            and block.get("name") == "web_search"
            and nxt.get("type") != "web_search_tool_result"
        ):
            out.append(result_block(block))
    return out


def offered(body: dict[str, Any]) -> bool:
    return any(isinstance(t, dict) and t.get("type") == TYPE for t in body.get("tools") or [])


def refuses(body: dict[str, Any]) -> str | None:
    """What an endpoint without the API's web search says to a request that offers it."""
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and tool.get("type") == TYPE:
            return f"tools.{i}: Input tag '{TYPE}' found using 'type' does not match any of the expected tags: 'custom'"
    return None


def history_problem(body: dict[str, Any]) -> str | None:
    """The API's checks of web search blocks in a request's messages, or None."""
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        calls: set[str] = set()
        for j, block in enumerate(content if isinstance(content, list) else []):
            kind, where = block.get("type"), f"messages.{i}.content.{j}"
            if kind in ("server_tool_use", "web_search_tool_result") and message.get("role") != "assistant":
                return f"{where}: `{kind}` blocks can only be in `assistant` messages"
            if kind == "server_tool_use" and block.get("name") == "web_search":
                calls.add(block.get("id"))
            if kind == "web_search_tool_result" and block.get("tool_use_id") not in calls:
                return f"{where}: web_search_tool_result does not follow its server_tool_use"
            for k, citation in enumerate(block.get("citations") or [] if kind == "text" else []):
                if citation.get("type") == "web_search_result_location" and not citation.get("encrypted_index"):
                    return f"{where}.citations.{k}.encrypted_index: Field required"
    return None


def stream_parts(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """A cited text block as the API streams it: started without its citations, each a ``citations_delta``, then
    its text (None for a block without citations)."""
    if block.get("type") != "text" or not block.get("citations"):
        return None
    deltas = [{"type": "citations_delta", "citation": c} for c in block["citations"]]
    return {"type": "text", "text": "", "citations": []}, deltas
