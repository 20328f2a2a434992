"""The demo's background child and the steer that reaches it: "check the tests in the background".

* **Main agent.** A request that says "in the background" → a ``task`` call with ``run_in_background`` for an
  explore child with BRIEF; its id back → how to steer it (``/steer sa-N …`` or ``m`` on its panel entry),
  then the turn ends. The child's result arriving (agentcli's note "Background subagent sa-N … has finished")
  → a report quoting it.
* **The child** (its brief is BRIEF): lists the tests, reads them, lists what ``shop/`` defines, answers. A
  message the user steered in is acknowledged at its next turn, in its first words; a term it names (``orders``)
  is looked for in the tests, one more step; the answer says what the user told it.

The child's replies are streamed slowly by the demo's server (``PACE``), so there is time to steer it: its
turns take seconds, where the rest of the demo's take a fraction of one. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Blocks = list[dict[str, Any]]
Block = Callable[..., dict[str, Any]]
Text = Callable[[str], dict[str, Any]]

WANTS_BACKGROUND = re.compile(r"\bin (?:the )?background\b", re.I)
DESCRIPTION = "Check the tests"
BRIEF = (
    "Check the tests of this repository: list them, read them, and compare them with what shop/ defines. "
    "Report what is tested and what is not, in a few lines."
)
PACE = 16  # times the demo's pace between streamed events, for the child's replies: time to steer it
FINISHED = re.compile(
    r"Background subagent (sa-\d+) \(([^)\n]*)\) (?:has finished|was interrupted[^\n]*)\.\s*(.*)", re.S
)
STEERED = re.compile(r"A message from the user while you work \([^)\n]*\):\s*(.*?)\s*(?:</system-reminder>|$)", re.S)
STARTED = re.compile(r"\b(sa-\d+) started in the background")
WORD = re.compile(r"\b[a-z][a-z_]{3,}\b")  # a word the user named, when no term stands out
PLAIN = {
    "look",
    "also",
    "tests",
    "test",
    "please",
    "first",
    "only",
    "check",
    "what",
    "them",
    "then",
    "more",
    "into",
    "those",
    "these",
    "there",
    "about",
    "while",
    "your",
    "with",
    "from",
    "that",
    "this",
}
NOTE_CLOSE = "</system-reminder>"
NOTES = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.S)


def is_child(brief: str) -> bool:
    """Whether this brief is the background check's (its requests are the ones streamed slowly)."""
    return brief.strip().startswith(BRIEF[:40])


def main_step(
    request: str,
    results: list[tuple[dict[str, Any], dict[str, Any]]],
    result_text: Callable[..., str],
    block: Block,
    text_block: Text,
) -> Blocks | None:
    """The main agent's next reply about a background check, or None when this is not one.
    ``request``: the latest user text (a background result arrives as one); ``results``: the tool calls and
    results of the last message."""
    if (done := FINISHED.search(request)) is not None:
        child, description, said = done.groups()
        answer, _, rest = NOTES.sub("", said).partition("\n\nReceipt for")  # the receipt is for the model
        footer = re.findall(r"^\[sa-\d+ · [^\n]*\]$", rest, re.M)
        lines = [*answer.replace(NOTE_CLOSE, "").strip().splitlines()[:14], "", *footer[:1]]
        quoted = "\n".join("> " + line if line else ">" for line in lines).rstrip("\n>")
        return [
            text_block(
                f"## {child} is back: {description}\n\n{quoted}\n\n"
                "- Ask for another, e.g. *check the tests in the background* again, or "
                "*add a discount to the cart*."
            )
        ]
    started = [STARTED.search(result_text(result)) for use, result in results if use.get("name") == "task"]
    if started and started[0] is not None:
        child = started[0].group(1)
        return [
            text_block(
                f"{child} is checking the tests in the background; I'll report when its result arrives. "
                "Meanwhile you can type, and tell it something while it works:\n\n"
                f"- `/steer {child} look at orders too` (in the full-screen app, `m` on its entry in "
                "the side panel starts that line)\n"
                f"- `/wrapup {child}` asks it to finish now; `/stop` stops it."
            )
        ]
    if results or not WANTS_BACKGROUND.search(request):
        return None
    return [
        text_block("I'll have a subagent check the tests in the background, so you can go on meanwhile."),
        block(
            "task", {"description": DESCRIPTION, "prompt": BRIEF, "subagent_type": "explore", "run_in_background": True}
        ),
    ]


def steers(messages: list[str]) -> list[str]:
    """What the user steered into the child, oldest first, from its user messages' texts."""
    return [m.group(1).strip() for text in messages for m in STEERED.finditer(text)]


def child_step(
    user_texts: list[str],
    latest: str,
    exchanges: list[tuple[dict[str, Any], dict[str, Any]]],
    result_text: Callable[..., str],
    block: Block,
    text_block: Text,
    terms: Callable[[str], list[str]],
) -> Blocks:
    """The background check's next reply. ``user_texts``: each user message's text; ``latest``: the last one's."""
    told, new = steers(user_texts), steers([latest])
    heard = f"Got your message: “{new[-1]}”. " if new else ""
    named = next(
        (t for said in told for t in [*terms(said), *reversed(WORD.findall(said))] if t.lower() not in PLAIN), None
    )
    used = [(use.get("name"), use.get("input", {})) for use, _ in exchanges]
    if named and new and ("grep", {"pattern": named, "path": "tests", "case_insensitive": True}) not in used:
        return [
            text_block(f"{heard}Looking for `{named}` in the tests, as you asked."),
            block("grep", {"pattern": named, "path": "tests", "case_insensitive": True}),
        ]
    if "glob" not in [name for name, _ in used]:
        return [text_block(f"{heard}Listing the tests."), block("glob", {"pattern": "tests/**/*.py"})]
    if "read_file" not in [name for name, _ in used]:
        listed = next((result_text(r) for u, r in exchanges if u.get("name") == "glob"), "")
        first = next(
            (line.strip() for line in listed.splitlines() if line.strip().endswith(".py")), "tests/test_cart.py"
        )
        return [text_block(f"{heard}Reading `{first}`."), block("read_file", {"path": first})]
    if not any(name == "grep" and args.get("path") == "shop" for name, args in used):
        return [
            text_block(f"{heard}Listing what `shop/` defines, to see what the tests leave out."),
            block("grep", {"pattern": r"^\s*(def|class) ", "path": "shop", "output_mode": "content"}),
        ]
    return [text_block(heard + answer(told, named, exchanges, result_text))]


def answer(
    told: list[str],
    named: str | None,
    exchanges: list[tuple[dict[str, Any], dict[str, Any]]],
    result_text: Callable[..., str],
) -> str:
    defined = next((result_text(r) for u, r in exchanges if u.get("input", {}).get("path") == "shop"), "")
    untested = sorted(
        {
            m.group(1).split("/")[-1].removesuffix(".py")
            for m in re.finditer(r"^(?:\S*/)?(shop/\w+\.py):\d+:", defined, re.M)
        }
        - {"cart", "__init__"}
    )
    lines = [
        "## The tests",
        "",
        "- `tests/test_cart.py` is the only test file: it checks `Cart.add` and `Cart.total`.",
        f"- Nothing tests {', '.join(f'`shop/{n}.py`' for n in untested) or 'the rest of `shop/`'}.",
    ]
    if told:
        lines.append("- You told me while I worked: " + "; ".join(f"“{t}”" for t in told) + ".")
    if named:
        found = next((result_text(r) for u, r in exchanges if u.get("input", {}).get("pattern") == named), "")
        hits = [line for line in found.splitlines() if re.match(r"\S+:\d+:", line.strip())]
        lines.append(
            f"- `{named}` appears in the tests at {hits[0].split(':', 2)[0]}:{hits[0].split(':', 2)[1]}."
            if hits
            else f"- `{named}` appears in no test."
        )
    return "\n".join(lines)
