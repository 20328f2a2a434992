"""The demo's scripted change, and what it says about an attached file: the parts of the demo beyond search.

* "add a discount to the cart" (any request to add, change, fix or implement something) → a plan
  (``todo_write``) and a read of ``shop/cart.py``, then an ``edit_file`` that the app asks you to approve,
  showing its diff, then the plan done and how ``/rewind`` undoes it. A refused edit is said as such.
* ``@shop/cart.py`` → what the attached file defines, from the text the app attached (never a search for
  its path).

Standard library only, like ``scenario.py``, which calls ``change_step`` and ``about_attachments``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Blocks = list[dict[str, Any]]

WANTS_CHANGE = re.compile(r"\b(add|change|fix|implement|refactor|rename|update|edit)\b", re.I)
FILE = "shop/cart.py"
OLD = (
    "    def total(self, prices: dict[str, int]) -> int:\n"
    "        # TODO: discounts\n"
    "        return sum(prices[sku] * n for sku, n in self.items.items())"
)
NEW = (
    "    def total(self, prices: dict[str, int], percent_off: int = 0) -> int:\n"
    "        full = sum(prices[sku] * n for sku, n in self.items.items())\n"
    "        return full - full * percent_off // 100"
)
STEPS = ("Read shop/cart.py", "Give Cart.total a percent_off discount", "Say how to undo it")
ATTACHED = re.compile(r'<file path="([^"\n]+)">\n(.*?)\n</file>', re.S)
ATTACHMENT_NOTE = re.compile(r"The user attached [^\n]*\n<file path=\"[^\"\n]+\">\n.*?\n</file>", re.S)


def plan(done: int) -> dict[str, Any]:
    """The todo_write input with ``done`` steps completed and the next one in progress."""
    return {
        "todos": [
            {
                "content": step,
                "status": "completed" if n < done else "in_progress" if n == done else "pending",
                "activeForm": step,
            }
            for n, step in enumerate(STEPS)
        ]
    }


def change_step(
    request: str,
    exchanges: list[tuple[dict[str, Any], dict[str, Any]]],
    result_text: Callable[[dict[str, Any]], str],
    block: Callable[..., dict[str, Any]],
    text_block: Callable[[str], dict[str, Any]],
) -> Blocks | None:
    """The next reply of the scripted change, or None when ``request`` asks for none."""
    if not WANTS_CHANGE.search(request):
        return None
    edits = [(use, result) for use, result in exchanges if use.get("name") == "edit_file"]
    if not exchanges:
        return [
            text_block("Here is my plan; the edit will ask for your approval and show its diff first."),
            block("todo_write", plan(0)),
            block("read_file", {"path": FILE}),
        ]
    if not edits:
        return [
            text_block(f"`{FILE}` has a TODO for discounts; changing `Cart.total`."),
            block("todo_write", plan(1)),
            block("edit_file", {"path": FILE, "old_string": OLD, "new_string": NEW}),
        ]
    use, result = edits[-1]
    if result.get("is_error"):
        why = result_text(result).strip().splitlines()[0] if result_text(result).strip() else "it was refused"
        return [
            text_block(
                f"## Not changed\n\nThe edit of `{FILE}` was not made: {why}\n\n"
                "- In the app or line mode (not `-p`) the edit asks you first: answer *yes* (`y`) "
                "to let it run."
            )
        ]
    if exchanges[-1][0].get("name") != "todo_write":
        return [block("todo_write", plan(len(STEPS)))]
    return [
        text_block(
            f"## Done\n\n`Cart.total` takes `percent_off` now (`{FILE}`).\n\n"
            "- `/rewind` (or esc esc) goes back to before this prompt: the file as it was, "
            "and the conversation too.\n"
            "- Or ask *find where `cart` is handled* to see a subagent at work."
        )
    ]


def attachments(message: str) -> list[tuple[str, str]]:
    """The files the app attached to a message (``@path``): each path and its numbered text."""
    return ATTACHED.findall(message)


def without_attachments(message: str) -> str:
    """A message without the attached files' text and the ``@path`` words that asked for them."""
    return re.sub(r"(?<!\S)@\S+", "", ATTACHMENT_NOTE.sub("", message)).strip()


def about_attachments(files: list[tuple[str, str]]) -> str:
    parts = ["## What you attached"]
    for path, numbered in files:
        rows = [line.split("\t", 1) for line in numbered.splitlines() if "\t" in line]
        defined = [
            f"`{m.group(2)}` (line {number.strip()})"
            for number, line in rows
            if (m := re.match(r"\s*(def|class)\s+(\w+)", line))
        ]
        what = ", ".join(defined) if defined else "no functions or classes"
        parts.append(f"- `{path}`: {len(rows)} lines; it defines {what}.")
    parts.append("- Ask me to change something in it, e.g. *add a discount to the cart*.")
    return "\n".join(parts)
