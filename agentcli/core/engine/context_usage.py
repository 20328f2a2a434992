"""/context: what the next request holds, part by part, in tokens.

The total is the server's count of the whole request (the SDK's ``messages.count_tokens``) where the
server offers one, else ``estimate_tokens`` of it. The parts (system prompt without the project memory,
the memory, tool definitions, conversation, tool results) are each estimated and then scaled to that
total, so they always add up to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..content import Message
from ..model.llm import LLM, estimate_tokens

COUNTED = "count_tokens"  # the server counted the request
ESTIMATED = "estimate"  # about four characters a token


@dataclass
class ContextUsage:
    parts: dict[str, int]  # label -> tokens, in request order; they add up to ``total``
    total: int
    window: int  # the model's context window
    method: str  # COUNTED or ESTIMATED
    kept_out: int  # what subagents kept out of the main context (not part of ``total``)
    shares: dict[str, float] = field(default_factory=dict)  # label -> share of the window

    def __post_init__(self) -> None:
        self.shares = {label: tokens / self.window if self.window else 0.0 for label, tokens in self.parts.items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "total_tokens": self.total,
            "context_window": self.window,
            "method": self.method,
            "tokens_kept_out": self.kept_out,
            "parts": dict(self.parts),
        }


def split_memory(system: str, memory: str) -> tuple[str, str]:
    """``system`` without the project memory section, and that section ("" when it is not in ``system``)."""
    if memory and memory in system:
        return system.replace(memory, "", 1), memory
    return system, ""


def part_sizes(system: str, memory: str, tools: list[dict[str, Any]], messages: list[Message]) -> dict[str, int]:
    """Each part's estimate: tool results are the ``tool_result`` blocks; the conversation is the rest."""
    rest, memory = split_memory(system, memory)
    results = sum(
        estimate_tokens(block)
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    )
    conversation = max(estimate_tokens(messages) - results, 0)
    return {
        "system prompt": estimate_tokens(rest),
        "project memory": estimate_tokens(memory),
        "tool definitions": estimate_tokens(tools) if tools else 0,
        "conversation": conversation,
        "tool results": results,
    }


def scaled(sizes: dict[str, int], total: int) -> dict[str, int]:
    """``sizes`` scaled to add up to ``total`` exactly (largest remainders get the rounding)."""
    whole = sum(sizes.values())
    if whole <= 0:
        return {label: (total if i == 0 else 0) for i, label in enumerate(sizes)}
    exact = {label: size * total / whole for label, size in sizes.items()}
    parts = {label: int(value) for label, value in exact.items()}
    short = total - sum(parts.values())
    for label in sorted(exact, key=lambda lb: exact[lb] - parts[lb], reverse=True)[:short]:
        parts[label] += 1
    return parts


async def context_usage(
    llm: LLM,
    *,
    model: str,
    system: str,
    memory: str,
    tools: list[dict[str, Any]],
    messages: list[Message],
    window: int,
    kept_out: int,
) -> ContextUsage:
    """The breakdown of a request of ``system``, ``tools`` and ``messages``; ``memory`` is the project memory
    section inside ``system``. An empty conversation is estimated (the endpoint wants a message)."""
    counted = await llm.count_tokens(system=system, messages=messages, tools=tools, model=model) if messages else None
    method = ESTIMATED if counted is None else COUNTED
    total = (
        counted
        if counted is not None
        else estimate_tokens(
            {"model": model, "system": system, "messages": messages, **({"tools": tools} if tools else {})}
        )
    )
    return ContextUsage(scaled(part_sizes(system, memory, tools, messages), total), total, window, method, kept_out)
