"""A long Markdown answer, cut into model-sized tokens: headings, prose with inline code, lists and
fenced code blocks, as an agent's answers look."""

from __future__ import annotations

import random
import re

END = "END-OF-ANSWER-7f3a"  # the last token; its appearance on screen ends a measurement

_TOKEN = re.compile(r"\s*[^\s]{1,4}|\s+")


def _document(rng: random.Random, sections: int) -> str:
    words = (
        "request",
        "router",
        "handler",
        "cache",
        "session",
        "token",
        "stream",
        "widget",
        "event",
        "queue",
        "the",
        "a",
        "is",
        "and",
        "when",
        "then",
        "returns",
        "calls",
        "reads",
        "writes",
    )
    parts: list[str] = []
    for s in range(sections):
        parts.append(f"## {s + 1}. The {rng.choice(words)} {rng.choice(words)}\n")
        parts.append(
            " ".join(rng.choice(words) for _ in range(40)) + f" See `src/pkg_{s % 40:02d}/mod.py:{s + 7}`"
            " and **keep it short**.\n"
        )
        parts.append(
            "".join(f"- `{rng.choice(words)}_{i}`: {' '.join(rng.choice(words) for _ in range(8))}\n" for i in range(5))
        )
        parts.append(
            "```python\n"
            + "".join(
                f"def {rng.choice(words)}_{i}(value):\n    return value * {i} + {s}  # {rng.choice(words)}\n"
                for i in range(4)
            )
            + "```\n"
        )
        parts.append(
            "1. first, "
            + " ".join(rng.choice(words) for _ in range(10))
            + "\n2. then, "
            + " ".join(rng.choice(words) for _ in range(10))
            + "\n"
        )
    return "\n".join(parts)


def tokens(count: int = 20_000, end: str = END) -> list[str]:
    """``count`` tokens (about four characters each) of Markdown; the last one is ``end``."""
    rng = random.Random(7)
    pieces: list[str] = []
    sections = 60
    while len(pieces) < count:
        pieces = _TOKEN.findall(_document(rng, sections))
        sections *= 2
    pieces = pieces[: count - 1]
    fence_open = "".join(pieces).count("```") % 2 == 1
    return pieces + [("\n```" if fence_open else "") + f"\n\n{end}"]  # the marker as prose, not code
