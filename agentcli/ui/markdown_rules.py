"""Markdown as agentcli reads the model's answers: an underscore is a character, never emphasis.

CommonMark lets ``__`` or ``_`` emphasise next to punctuation, so ``agentcli/__main__.py:9`` drew as
``agentcli/`` + bold ``main`` + ``.py:9``, and a bare ``__init__`` as a bold ``init``. In a coding agent's
answers an underscore is nearly always part of a path or an identifier, where a wrong path is worse than
plain text; ``*`` and ``**`` still emphasise, as models write them. Both front ends' parsers take this rule:
the TUI's (``widgets/answer.py``) and line mode's (``plain/stream.py``).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline


def _underscores_as_text(state: StateInline, silent: bool) -> bool:
    """A run of underscores, taken as text before the emphasis rule can read it as a delimiter."""
    start = state.pos
    if state.src[start] != "_":
        return False
    end = start
    while end < state.posMax and state.src[end] == "_":
        end += 1
    if not silent:
        state.pending += state.src[start:end]  # joined with the text around it, as the text rule's
    state.pos = end
    return True


def literal_underscores(md: MarkdownIt) -> None:
    """A markdown-it plugin: underscores are text (``md.use(literal_underscores)``)."""
    md.inline.ruler.before("emphasis", "literal_underscores", _underscores_as_text)
