"""One word of a bash command line read the way bash reads it: its value after quote removal, or None when only
bash running it can tell (``$f``, ``*.py``, ``{a,b}``), and what in it is not modelled.

``WordReader`` is the part of bash_syntax.py's walk that reads words; the walk itself (statements, redirections,
arithmetic, the substitutions a word may hold) is its subclass there, and fills in the three methods it leaves
abstract.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from .bash_commands import Word
from .bash_quoting import _ansi_c, _double_quoted, _quoted_length

if TYPE_CHECKING:
    from tree_sitter import Node

_OPERATORS = {":-", "-", ":+", "+", ":?", "?", "%", "%%", "#", "##", "/", "//", "/#", "/%", "^", "^^", ",", ",,"}


class WordReader(ABC):
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.substitution = False  # a word ran a command substitution
        self.unknown = ""  # the first thing met that is not modelled
        self.globbed = False  # a word has a glob character unquoted

    def not_modelled(self, why: str) -> None:
        self.unknown = self.unknown or why

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # ------------------------------------------------------------ what a word may hold, read by the walk

    @abstractmethod
    def statement(self, node: Node) -> None:
        """A statement inside the word (a command substitution's)."""

    @abstractmethod
    def arithmetic(self, node: Node) -> None:
        """An arithmetic expansion."""

    @abstractmethod
    def walk_for_substitutions(self, node: Node) -> None:
        """Text that expands again (a pattern in an expansion), for the substitutions in it."""

    # ------------------------------------------------------------ words

    def word(self, node: Node) -> Word:
        """The word's value after quote removal, or None when it is known only at run time."""
        kind = node.type
        text = self.text(node)
        if kind == "word":
            return self.unquoted(text)
        if kind == "number":
            return text if re.fullmatch(r"[0-9]+", text) else self.unquoted(text)
        if kind == "raw_string":
            return text[1:-1]
        if kind == "ansi_c_string":
            if _quoted_length(text, 2, "'") != len(text):
                self.not_modelled("bash would end one of its $'...' strings elsewhere")
            value = _ansi_c(text[2:-1])
            if value is None:
                self.not_modelled("it uses $'...' quoting that agentcli cannot decode exactly")
            return value
        if kind == "string":
            inner = [c for c in node.named_children]
            if all(c.type == "string_content" for c in inner):
                if _quoted_length(text, 1, '"') != len(text):
                    self.not_modelled("bash would end one of its quoted strings elsewhere")
                return _double_quoted(text[1:-1])
            if "\\" in text:
                self.not_modelled("a string that expands also uses backslashes, which agentcli does not model")
            for child in inner:
                if child.type != "string_content":
                    self.word(child)
            return None
        if kind == "concatenation":
            values = [self.word(child) for child in node.children]
            if "".join(self.text(c) for c in node.children) != text:
                self.not_modelled("bash would read one of its words differently")
            if not node.children or any(not c.is_named for c in node.children):
                self.not_modelled('it uses $"..." or another quoting agentcli does not model')
            if "{" in text and "}" in text and ("," in text or ".." in text):
                return None  # brace expansion: one word may become several
            if any(v is None for v in values):
                return None
            return "".join(v or "" for v in values)
        if kind == "simple_expansion":
            if len(node.named_children) != 1 or node.named_children[0].type not in (
                "variable_name",
                "special_variable_name",
            ):
                self.not_modelled("it uses an expansion agentcli does not model")
            return None
        if kind == "expansion":
            self.expansion(node)
            return None
        if kind in ("command_substitution", "process_substitution"):
            self.substitution_of(node)
            return None
        if kind == "arithmetic_expansion":
            self.arithmetic(node)
            return None
        if kind == "translated_string":
            self.not_modelled('it uses $"..." quoting')
            return None
        self.not_modelled(f"it uses {kind.replace('_', ' ')} in a word, which agentcli does not model")
        return None

    def unquoted(self, text: str) -> Word:
        out: list[str] = []
        i = 0
        dynamic = False
        while i < len(text):
            ch = text[i]
            if ch == "\\":
                if i + 1 < len(text) and text[i + 1] != "\n":
                    out.append(text[i + 1])
                i += 2
                continue
            if ch in "$`'\"()<>|&; \t\n":
                self.not_modelled("bash would read one of its words differently")
            if ch in "*?[":
                self.globbed = True
                dynamic = dynamic or not out  # at the start, one of the file names may look like an option
            if ch == "~":
                dynamic = True  # a home folder, after = and : too
            if ch == "{" and "}" in text[i:] and ("," in text[i:] or ".." in text[i:]):
                dynamic = True
            out.append(ch)
            i += 1
        return None if dynamic else "".join(out)

    def expansion(self, node: Node) -> None:
        for child in node.children:
            kind = child.type
            if kind in ("${", "}", "variable_name", "special_variable_name"):
                continue
            if not child.is_named:
                if kind not in _OPERATORS:
                    self.not_modelled(f"it uses the expansion operator {kind!r}, which agentcli does not model")
                continue
            if kind == "regex":
                self.walk_for_substitutions(child)
                if any(c in self.text(child) for c in "$`"):
                    self.not_modelled("a pattern in an expansion expands again")
                continue
            if kind in (
                "word",
                "string",
                "raw_string",
                "concatenation",
                "simple_expansion",
                "expansion",
                "number",
                "command_substitution",
                "ansi_c_string",
            ):
                self.word(child)
                continue
            self.not_modelled(f"it uses {kind.replace('_', ' ')} in an expansion, which agentcli does not model")

    def substitution_of(self, node: Node) -> None:
        self.substitution = True
        if node.children and node.children[0].type == "`" and "\\" in self.text(node):
            self.not_modelled("a backquoted substitution uses backslashes, which bash reads twice")
        for child in node.children:
            if child.is_named:
                self.statement(child)
            elif child.type not in ("$(", "`", ")", "<(", ">(", "\n", ";", "&"):
                self.not_modelled(f"it uses {child.type!r} in a substitution")
