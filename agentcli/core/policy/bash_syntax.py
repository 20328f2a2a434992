"""Bash command lines read the way bash reads them, with tree-sitter-bash's grammar.

``parse`` turns a line into the simple commands it runs (those inside ``$(...)`` too), each with
its words after quote removal, and says when it cannot tell what the line runs: the parser found
an error, or the line uses something this module does not model (functions, ``case``, ``eval``,
traps, aliases, prompt expansion, arithmetic over variables, heredocs that expand, and so on).
Permission rules trust a line only when every part of it was understood (fail closed), so what
is not modelled here is never explained away: it is named in ``CommandLine.unknown``.

A word whose value is known only when bash runs it (``$f``, ``*.py``, ``{a,b}``) is ``None`` in
``SimpleCommand.words``, and the command is *dynamic*: no rule with a pattern can say what it
does. tree-sitter is imported on the first parse, so startup does without it.

The values it returns are in bash_commands.py; reading one word, in bash_words.py; undoing bash's quotes on a
word's text, in bash_quoting.py; walking tree-sitter's tree, in bash_tree.py.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING

from .bash_commands import CommandLine, SimpleCommand, Word
from .bash_quoting import _heredoc_delimiter
from .bash_tree import _deeper_than, _descendants, _skipped_text
from .bash_words import WordReader

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


@cache
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(command: str) -> CommandLine:
    """What ``bash -c command`` runs, as far as agentcli can tell (see the module's docstring)."""
    try:
        source = command.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no bytes bash could be given say it
        return CommandLine((), False, "it is not valid text")
    walker = _Walker(source)
    if "\0" in command:
        walker.unknown = "it contains a NUL character"
    elif _ODD_SPACE.search(command):  # tree-sitter splits words there, bash does not
        walker.unknown = "it contains whitespace other than spaces, tabs and newlines"
    tree = _parser().parse(source)
    if tree.root_node.has_error:
        walker.not_modelled("bash would read part of it differently: tree-sitter found a syntax error")
    elif b"\\" in source and _skipped_text(tree.root_node, source):  # what it skips starts with a backslash
        walker.not_modelled("bash would read part of it differently: tree-sitter skipped some of it")
    if _deeper_than(tree.root_node, _MAX_DEPTH):
        return CommandLine((), True, "it nests more deeply than agentcli reads")
    walker.statement(tree.root_node)
    return CommandLine(tuple(walker.commands), walker.substitution, walker.unknown)


_MAX_DEPTH = 150  # levels of the syntax tree; the walk below recurses once or twice a level


_ODD_SPACE = re.compile(r"[^\S \t\n]")
# Tokens that only give a line its shape.
_STRUCTURE = {
    ";",
    "&",
    "&&",
    "||",
    "|",
    "|&",
    "\n",
    "{",
    "}",
    "(",
    ")",
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "while",
    "until",
    "for",
    "in",
    "!",
}
# Words that are reserved where bash reads a command name: tree-sitter taking one for a command means
# the two readings differ.
_RESERVED = {
    "!",
    "{",
    "}",
    "[[",
    "]]",
    "case",
    "coproc",
    "do",
    "done",
    "elif",
    "else",
    "esac",
    "fi",
    "for",
    "function",
    "if",
    "in",
    "select",
    "then",
    "until",
    "while",
}
# Builtins that run text as code, change how later words are read, or define what a name runs.
_EVALUATING = {
    "eval",
    "source",
    ".",
    "exec",
    "trap",
    "alias",
    "unalias",
    "shopt",
    "enable",
    "bind",
    "complete",
    "compgen",
    "compopt",
    "fc",
    "hash",
    "let",
    "mapfile",
    "readarray",
    "history",
    "caller",
}
# Builtins that evaluate an array subscript in a name given to them (``printf -v 'a[$(cmd)]'``).
_SUBSCRIPTED = {
    "printf",
    "read",
    "unset",
    "test",
    "wait",
    "getopts",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "command",
    "builtin",
}
_SET_WORD = re.compile(r"[-+][euxvfCbhmBHPT]*|[-+]o|--?|pipefail|errexit|nounset|xtrace|verbose|noglob|noclobber")
_WRAPPERS = {"command", "builtin"}  # builtins that run the builtin named next
_SAFE_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
_WRITE_OPS = {">", ">>", ">|", "&>", "&>>"}
_ARITHMETIC = {"number", "binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression"}
_TEST_ARITHMETIC = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}


class _Walker(WordReader):
    def __init__(self, source: bytes):
        super().__init__(source)
        self.commands: list[SimpleCommand] = []
        self.time_keyword = True

    # ------------------------------------------------------------ statements

    def statement(self, node: Node) -> None:
        kind = node.type
        if node.is_error or node.is_missing:
            self.not_modelled("bash would read part of it differently: tree-sitter found a syntax error")
        elif kind == "comment":
            return
        elif kind == "command":
            self.command(node, [])
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind in ("variable_assignment", "variable_assignments"):
            self.assignments_only(node)
        elif kind == "declaration_command" or kind == "unset_command":
            self.declaration(node)
        elif kind == "test_command":
            self.test(node)
        elif kind == "compound_statement" and node.children and node.children[0].type == "((":
            self.arithmetic(node)
        elif kind == "for_statement":
            self.for_loop(node)
        elif kind in (
            "program",
            "list",
            "pipeline",
            "compound_statement",
            "subshell",
            "do_group",
            "if_statement",
            "elif_clause",
            "else_clause",
            "while_statement",
            "negated_command",
        ):
            self.children(node)
        elif kind == "function_definition":
            self.not_modelled("it defines a shell function")
        elif kind == "case_statement":
            self.not_modelled("it uses case")
        elif kind == "c_style_for_statement":
            self.not_modelled("it uses a C-style for loop")
        else:
            self.not_modelled(f"it uses {kind.replace('_', ' ')}, which agentcli does not model")

    def children(self, node: Node) -> None:
        first = True
        for child in node.children:
            if child.is_named:
                # `time` is a keyword only where a pipeline starts: in `a | time b` it is a program.
                self.time_keyword, before = first or node.type != "pipeline", self.time_keyword
                self.statement(child)
                self.time_keyword = before
                first = False
            elif child.type not in _STRUCTURE:
                self.not_modelled(f"it uses {child.type!r}, which agentcli does not model")

    def for_loop(self, node: Node) -> None:
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field == "variable":
                continue
            if field == "value":
                self.word(child)
            elif field == "body" or child.is_named:
                self.statement(child)
            elif child.type == "select":
                self.not_modelled("it uses select")
            elif child.type not in _STRUCTURE:
                self.not_modelled(f"it uses {child.type!r}, which agentcli does not model")

    def redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        redirects = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "redirect"]
        others = [c for c in node.children if c.is_named and c != body and c not in redirects]
        for other in others:
            self.statement(other)
        if body is not None and body.type == "command":
            self.command(body, redirects)
            return
        start = len(self.commands)
        if body is not None:
            self.statement(body)
        marks, texts, extra, stdin, written = self.redirections(redirects)
        if extra:
            self.not_modelled("words follow a redirection of a compound command")
        if body is None:  # `> file` alone: it truncates the file
            self.commands.append(
                SimpleCommand(
                    " ".join(texts),
                    " ".join(texts),
                    redirects=tuple(texts),
                    writes=tuple(marks),
                    written_redirects=written,
                )
            )
            return
        for i in range(start, len(self.commands)):
            c = self.commands[i]
            self.commands[i] = replace(
                c,
                writes=tuple(dict.fromkeys(c.writes + tuple(marks))),
                stdin=c.stdin or stdin,
                writes_around=c.writes_around or bool(marks),
            )

    def command(self, node: Node, outer: list[Node]) -> None:
        assignments: list[str] = []
        parts: list[tuple[Word, str, bool]] = []  # each word's value, how it is written, whether a pattern
        redirects = [c for c in node.children if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect")]
        self.apart([c for i, c in enumerate(node.children) if node.field_name_for_child(i) in ("name", "argument")])
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if child.type == "variable_assignment":
                self.assignment(child)
                assignments.append(self.text(child))
            elif child in redirects:
                continue
            elif field in ("name", "argument"):
                target = child
                if child.type == "command_name":
                    if len(child.named_children) != 1:
                        self.not_modelled("bash would read its command name differently")
                    target = child.named_children[0] if child.named_children else child
                parts.append(self.part(target, self.text(child)))
            else:
                self.not_modelled(f"it uses {child.type!r} where agentcli expects a word")
        marks, redirect_texts, extra, stdin, written = self.redirections(redirects + outer)
        parts += [self.part(n, self.text(n)) for n in extra]
        # `time` is a keyword before anything else of a pipeline (not after `x=1`), unquoted; so is its option
        while self.time_keyword and not assignments and parts and parts[0][0] == "time" and parts[0][1] == "time":
            parts.pop(0)
            while parts and parts[0][0] == "-p":
                parts.pop(0)
        if parts and parts[0][2]:  # a pattern names the program (`/bin/r?`): which one is known at run time
            parts[0] = (None, parts[0][1], True)
        words = [value for value, _, _ in parts]
        self.check_builtin(words)
        dynamic = next((written for value, written, _ in parts if value is None), "")
        globs = tuple(i for i, (_, _, glob) in enumerate(parts) if glob)
        bare = " ".join([written for _, written, _ in parts] + redirect_texts)
        text = " ".join(assignments + [bare]) if bare else " ".join(assignments)
        self.commands.append(
            SimpleCommand(
                text,
                bare or text,
                tuple(words),
                tuple(assignments),
                tuple(redirect_texts),
                tuple(marks),
                dynamic,
                stdin,
                globs,
                tuple(written for _, written, _ in parts),
                written_redirects=written,
            )
        )

    def apart(self, words: list[Node]) -> None:
        """Words that tree-sitter took for two but that touch are one word to bash (``' $'\\x41``)."""
        if any(a.end_byte == b.start_byte for a, b in pairwise(words)):
            self.not_modelled("bash would read two of its words as one")

    def part(self, node: Node, written: str) -> tuple[Word, str, bool]:
        """A word of a command: its value, how it is written, and whether it is a file name pattern."""
        self.globbed = False
        value = self.word(node)
        return value, written, self.globbed

    def check_builtin(self, words: list[Word]) -> None:
        name_at = 0
        while name_at < len(words) and words[name_at] in _WRAPPERS:
            name_at += 1
            while name_at < len(words) and (words[name_at] or "").startswith("-"):
                name_at += 1
        if name_at >= len(words):
            return
        name = words[name_at]
        args = [w for w in words[name_at + 1 :] if w is not None]
        if name in _RESERVED:
            self.not_modelled(f"bash reads {name!r} as a reserved word there")
        elif name in _EVALUATING:
            self.not_modelled(f"it uses {name}, which runs or redefines what later words do")
        elif name in ("declare", "typeset", "local", "readonly", "export") and any(
            re.fullmatch(r"[-+][a-zA-Z]*[in][a-zA-Z]*", a) for a in args
        ):
            self.not_modelled(f"it gives a variable the integer or reference attribute with {name}")
        elif name == "set" and not all(_SET_WORD.fullmatch(a) for a in args):
            self.not_modelled("it uses set with options that change how bash reads later commands")
        if name in _SUBSCRIPTED and any("[" in a for a in args):
            self.not_modelled(f"{name} would evaluate an array subscript, which can run commands")
        if name in ("test", "[") and any(a in ("-v", "-R") for a in args):
            self.not_modelled("test -v evaluates an array subscript, which can run commands")

    def assignment(self, node: Node) -> None:
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field == "name":
                if child.type != "variable_name":
                    self.not_modelled("it assigns to an array element")
            elif field == "value":
                if child.type == "array":
                    self.not_modelled("it assigns an array")
                else:
                    self.word(child)
            elif child.type not in ("=", "+="):
                self.not_modelled(f"it uses {child.type!r} in an assignment")

    def assignments_only(self, node: Node) -> None:
        parts = [node] if node.type == "variable_assignment" else [c for c in node.children if c.is_named]
        for part in parts:
            if part.type != "variable_assignment":
                self.statement(part)
            else:
                self.assignment(part)
        texts = tuple(self.text(p) for p in parts)
        self.commands.append(SimpleCommand(" ".join(texts), " ".join(texts), (), texts))

    def declaration(self, node: Node) -> None:
        words: list[Word] = []
        texts: list[str] = []
        for child in node.children:
            if not child.is_named:
                words.append(child.type)  # the keyword: export, declare, unset...
            elif child.type == "variable_assignment":
                self.assignment(child)
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                name_text = self.text(name) if name is not None else ""
                operator = "+=" if any(c.type == "+=" for c in child.children) else "="
                words.append(
                    None
                    if value is None and operator not in self.text(child)
                    else _join(name_text + operator, self.word(value) if value is not None else "")
                )
            elif child.type == "variable_name":
                words.append(self.text(child))
            else:
                words.append(self.word(child))
            texts.append(self.text(child))
        self.check_builtin(words)
        dynamic = next((t for w, t in zip(words, texts, strict=True) if w is None), "")
        self.commands.append(SimpleCommand(" ".join(texts), " ".join(texts), tuple(words), dynamic=dynamic))

    def test(self, node: Node) -> None:
        """``[[ ... ]]`` and ``[ ... ]``: they run nothing, unless an operand is evaluated as arithmetic
        or names an array element."""
        double = bool(node.children) and node.children[0].type == "[["
        for child in _descendants(node):
            if child.type == "test_operator":
                op = self.text(child)
                if op in ("-v", "-R"):
                    self.not_modelled("test -v evaluates an array subscript, which can run commands")
                if op in _TEST_ARITHMETIC and double:
                    parent = child.parent
                    operands = [c for c in (parent.children if parent else []) if c.is_named and c != child]
                    if not all(o.type == "number" or re.fullmatch(r"-?\d+", self.text(o)) for o in operands):
                        self.not_modelled(f"[[ {op} ]] evaluates its operands as arithmetic, which can run commands")
        dynamic = ""
        for child in node.named_children:
            dynamic = dynamic or self.operands(child)
        if not double:
            text = self.text(node)
            self.commands.append(SimpleCommand(text, text, ("[",), dynamic=dynamic and "a word"))

    def operands(self, node: Node) -> str:
        """Walk a test's expression; the first operand known only at run time, as written."""
        if node.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
            found = ""
            for child in node.named_children:
                if child.type != "test_operator":
                    found = found or self.operands(child)
            return found
        if node.type == "regex":
            return "" if not node.named_children else self.operands(node.named_children[0])
        return "" if self.word(node) is not None else self.text(node)

    def arithmetic(self, node: Node) -> None:
        """``((...))`` or ``$((...))``: numbers and operators only; a variable's value is evaluated as an
        expression, and that can run commands (``x='a[$(cmd)]'; echo $((x))``)."""
        for child in node.named_children:
            if child.type not in _ARITHMETIC:
                self.not_modelled("its arithmetic uses variables or expansions, which can run commands")
                self.walk_for_substitutions(child)
            else:
                self.arithmetic(child)

    def walk_for_substitutions(self, node: Node) -> None:
        """Find the commands of every substitution in a part not otherwise modelled (for deny rules)."""
        if node.type in ("command_substitution", "process_substitution"):
            self.substitution_of(node)
            return
        for child in node.children:
            self.walk_for_substitutions(child)

    # ------------------------------------------------------------ redirections

    def redirections(self, nodes: list[Node]) -> tuple[list[str], list[str], list[Node], bool, tuple[int, ...]]:
        """The write marks, the texts, words that tree-sitter put after a redirection's target, whether
        text on the line is fed to stdin, and which of the texts write a file."""
        marks: list[str] = []
        written: list[int] = []
        texts: list[str] = []
        extra: list[Node] = []
        stdin = False
        for node in nodes:
            if node.type == "heredoc_redirect":
                stdin = True
                texts.append(_heredoc_text(self, node))
                self.heredoc(node)
                continue
            if node.type == "herestring_redirect":
                stdin = True
                for child in node.named_children:
                    self.word(child)
                texts.append(self.text(node))
                continue
            op = descriptor = ""
            targets: list[Node] = []
            for i, child in enumerate(node.children):
                field = node.field_name_for_child(i)
                if field == "descriptor":
                    descriptor = self.text(child)
                    if not descriptor.isdigit():
                        self.not_modelled("it redirects a named file descriptor")
                elif field == "destination":
                    targets.append(child)
                elif not child.is_named:
                    op += child.type
                else:
                    self.not_modelled(f"it uses {child.type!r} in a redirection")
            if not targets:
                if op not in (">&-", "<&-"):
                    self.not_modelled(f"it uses the redirection {op!r}")
                texts.append(descriptor + op)
                continue
            self.apart(targets)
            target, extra_words = targets[0], targets[1:]
            extra += extra_words
            value = self.word(target)
            texts.append(descriptor + op + ("" if op.endswith("&") else " ") + self.text(target))
            if op in _WRITE_OPS:
                if value not in _SAFE_TARGETS:
                    marks.append(">")
                    written.append(len(texts) - 1)
            elif op in (">&", "<&"):
                if value is None or not (value.isdigit() or value == "-"):
                    if op == "<&":
                        self.not_modelled("it duplicates a descriptor agentcli cannot read")
                    marks.append(">")  # `>& file` writes stdout and stderr to the file
                    written.append(len(texts) - 1)
            elif op != "<":
                self.not_modelled(f"it uses the redirection {op!r}")
        return marks, texts, extra, stdin, tuple(written)

    def heredoc(self, node: Node) -> None:
        quoted = False
        strip_tabs = any(c.type == "<<-" for c in node.children)
        delimiter = ""
        for child in node.children:
            if child.type == "heredoc_start":
                quoted = any(q in self.text(child) for q in "'\"\\")
                delimiter = _heredoc_delimiter(self.text(child))
            elif child.type == "heredoc_end":
                # tree-sitter ends a heredoc at a line that only looks like its delimiter (" E", "E "); bash
                # only at the delimiter itself, the whole line
                line_start = self.source.rfind(b"\n", 0, child.start_byte) + 1
                line_end = self.source.find(b"\n", child.end_byte)
                line = self.source[line_start : len(self.source) if line_end == -1 else line_end].decode(
                    "utf-8", "replace"
                )
                if (line.lstrip("\t") if strip_tabs else line) != delimiter:
                    self.not_modelled("bash would end a heredoc on it elsewhere")
            elif child.type == "heredoc_body":
                lines = self.text(child).split("\n")
                if delimiter in ([line.lstrip("\t") for line in lines] if strip_tabs else lines):
                    self.not_modelled("bash would end a heredoc on it elsewhere")
                if not quoted and any(c in self.text(child) for c in "$`\\"):
                    self.not_modelled("a heredoc on it expands variables or commands")
                    self.walk_for_substitutions(child)
            elif child.type in ("heredoc_end", "<<", "<<-", "heredoc_content"):
                continue
            elif child.is_named:
                self.statement(child)  # `cat <<EOF | grep x`: the rest of the line sits inside the node
            elif child.type not in _STRUCTURE:
                self.not_modelled(f"it uses {child.type!r} after a heredoc")


def _heredoc_text(walker: _Walker, node: Node) -> str:
    op = next((c.type for c in node.children if c.type in ("<<", "<<-")), "<<")
    start = next((walker.text(c) for c in node.children if c.type == "heredoc_start"), "")
    return f"{op}{start}"


def _join(prefix: str, value: Word) -> Word:
    return None if value is None else prefix + value
