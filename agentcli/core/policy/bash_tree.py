"""tree-sitter's syntax tree of a bash line, walked without recursion: how deep it nests, whether tree-sitter
skipped text bash would read, and its nodes in order (for bash_syntax.py, which trusts a line only
when both readings agree).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Node


def _deeper_than(root: Node, limit: int) -> bool:
    cursor = root.walk()
    depth = 0
    while True:
        if depth > limit:
            return True
        if cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return False
            depth -= 1


_BLANK = re.compile(rb"(?:[ \t\r\n]|\\\n)*")
_OPAQUE = {
    "string",
    "heredoc_body",
    "heredoc_redirect",
    "comment",
    "raw_string",
    "ansi_c_string",
    "regex",
    "word",
    "expansion",
    "string_content",
    "heredoc_content",
}


def _skipped_text(root: Node, source: bytes) -> bool:
    """Whether tree-sitter left out text bash would read (it drops an escaped space that starts a word)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _OPAQUE:
            continue
        at = node.start_byte
        for child in node.children:
            if not _BLANK.fullmatch(source[at : child.start_byte]):
                return True
            at = max(at, child.end_byte)
            stack.append(child)
        if node.children and not _BLANK.fullmatch(source[at : node.end_byte]):
            return True
    return not _BLANK.fullmatch(source[: root.start_byte]) or not _BLANK.fullmatch(source[root.end_byte :])


def _descendants(node: Node) -> Any:
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        yield child
        stack.extend(reversed(child.children))
