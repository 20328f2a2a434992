"""What the demo says and asks first: its stand-in model's name, the question it sends, the note above it.

A leaf, so the demo's app (app.py) and its start (``__init__``) both take them without importing each other.
"""

from __future__ import annotations

MODEL = "demo-stand-in"
PROMPT = "Use a subagent to find where `login` is handled"
INTRO = (
    "Demo: a scripted stand-in model (no key, no network) in a sample repository, {root}.\n"
    "Watch the subagent in the panel; its transcript opens when it is done (esc closes it). "
    "Then ask your own, e.g. find where `session` is handled, grep for `TODO`, or add a discount to the "
    "cart (a plan, an edit you approve, /rewind to undo it), or check the tests in the background (a "
    "subagent works while you type: steer it with /steer sa-2 look at orders too, or m on its panel entry)."
)
TRY_PLAIN = (
    "Then try: add a discount to the cart · check the tests in the background (then steer it "
    "with the /steer line it suggests) · /help"
)
