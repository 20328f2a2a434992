"""The models agentcli knows by name: the default, the short names users type, prices, extended thinking.

A model this table does not know (a local server's) works all the same: it reports tokens only, and
gets no thinking by default.
"""

from __future__ import annotations

import re

from ..events import Usage

DEFAULT_MODEL = "claude-sonnet-5-5"
# Short names users type (as in Claude Code), for the newest model of each family.
MODEL_ALIASES = {"sonnet": DEFAULT_MODEL, "opus": "claude-opus-5-5", "haiku": "claude-haiku-5-5"}
TASK_MODELS = ("haiku", "sonnet", "opus")  # what the main agent may choose for a subagent by default (task_models)
# Context window size in tokens; current Claude models have at least this much.
DEFAULT_CONTEXT_WINDOW = 200_000


def context_window(model: str) -> int:
    return DEFAULT_CONTEXT_WINDOW


# USD per million tokens: input, output, cache write, cache read. Matched by prefix,
# longest first; unknown models report tokens only.
PRICES: dict[str, tuple[float, float, float, float]] = {
    # Opus 5 as Claude Code 2.1.332 prices it (its modelUsage costUSD: $4 in, $20 out; caches at 1.25x and 0.1x).
    "claude-opus-5": (4.0, 20.0, 5.0, 0.40),
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-6": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-1": (15.0, 75.0, 18.75, 1.50),
    "claude-opus-4": (15.0, 75.0, 18.75, 1.50),
    "claude-sonnet-4": (3.0, 15.0, 3.75, 0.30),
    "claude-sonnet-5": (3.0, 15.0, 3.75, 0.30),
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.10),
    "claude-3-5-haiku": (0.80, 4.0, 1.0, 0.08),
}

# Extended thinking: the modes of the setting, Claude Code's spellings, and the budget for "on".
THINKING_MODES = ("auto", "off", "on", "adaptive")
THINKING_SPELLINGS = {"disabled": "off", "enabled": "on", "false": "off", "true": "on"}
DEFAULT_THINKING_BUDGET = 10_000
MIN_THINKING_BUDGET = 1_024  # the least the API accepts
ADAPTIVE_FAMILY = re.compile(r"^claude-(?:opus|sonnet|haiku)-(\d+)-(\d+)")


def thinking_mode(text: str) -> str:
    """A thinking setting as one of THINKING_MODES; ValueError with one sentence for anything else."""
    mode = THINKING_SPELLINGS.get(text.strip().lower(), text.strip().lower())
    if mode not in THINKING_MODES:
        raise ValueError(f"Unknown thinking mode {text!r}; use off, on or adaptive (or disabled, enabled).")
    return mode


def supports_adaptive_thinking(model: str) -> bool:
    """Claude 4.6 and later think adaptively; other names (a local server's model) get no thinking by default."""
    found = ADAPTIVE_FAMILY.match(model)
    return found is not None and (int(found.group(1)), int(found.group(2))) >= (4, 6)


def resolve_model(name: str) -> str:
    """A model id from what a user wrote: 'opus' → the newest Opus id; anything else as written."""
    return MODEL_ALIASES.get(name.strip().lower(), name.strip())


def price_for(model: str) -> tuple[float, float, float, float] | None:
    for prefix in sorted(PRICES, key=len, reverse=True):
        if model.startswith(prefix):
            return PRICES[prefix]
    return None


def usage_with_cost(model: str, input_tokens: int, output_tokens: int, cache_read: int, cache_write: int) -> Usage:
    price = price_for(model)
    cost = None
    if price is not None:
        p_in, p_out, p_write, p_read = price
        cost = (input_tokens * p_in + output_tokens * p_out + cache_write * p_write + cache_read * p_read) / 1e6
    return Usage(input_tokens, output_tokens, cache_read, cache_write, cost)


# --effort: the API's output_config.effort, on the models that take it (the levels each has; another level
# becomes the nearest below it). Claude Opus 4.5 and the Haiku 5 models have low to high; the Opus and Sonnet
# 4.6 models and later add max, and Opus 4.7 and the Opus and Sonnet 5 models add xhigh. Other models get a
# thinking budget for the level (LLM.model_params).
EFFORT_ORDER = ("low", "medium", "high", "xhigh", "max")
EFFORT_BUDGETS = {"low": 0, "medium": 4_096, "high": DEFAULT_THINKING_BUDGET, "xhigh": 32_000, "max": 32_000}
FALLBACK_AFTER = 3  # overloaded answers in a row before --fallback-model takes over, as in Claude Code


def effort_level(model: str, effort: str) -> str | None:
    """The API's effort level for ``model`` at ``effort``; None where the model has no effort (or none asked)."""
    found = ADAPTIVE_FAMILY.match(model)
    if not effort or found is None:
        return None
    family, version = model.split("-")[1], (int(found.group(1)), int(found.group(2)))
    if version < ((4, 5) if family == "opus" else (4, 6)) or (family == "haiku" and version < (5, 0)):
        return None
    levels = ["low", "medium", "high"]
    if version >= (4, 6) and family != "haiku":
        levels.append("max")
    if family != "haiku" and (version >= (5, 0) or family == "opus" and version >= (4, 7)):
        levels.append("xhigh")
    wanted = EFFORT_ORDER.index(effort)
    return max((level for level in levels if EFFORT_ORDER.index(level) <= wanted), key=EFFORT_ORDER.index)
