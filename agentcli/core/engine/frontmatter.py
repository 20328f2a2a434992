"""Markdown files with a YAML-style frontmatter block, parsed without a YAML library.

The subset is what agent definition files use:

    ---
    name: finder            # plain scalars: strings, numbers, true/false, null
    description: "Quoted, with \\n escapes"
    tools: [grep, read_file] # flow lists of scalars
    disallowed_tools:        # block lists of scalars
      - bash
    notes: |                 # block scalars: | keeps newlines, > folds them
      Several lines.
    ---
    The body.

Nested mappings are read too. Anchors, tags and multi-line quoted strings are not:
they raise FrontmatterError with the line number, as does anything else that does not parse.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DEFINITION_FILE_CAP = 256 * 1024  # bytes: a command or agent file larger than this is skipped

_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "0": "\0", " ": " ", "e": "\x1b"}
BLOCK_SCALAR = re.compile(r"([|>])([-+]?)\s*(#.*)?")


class FrontmatterError(ValueError):
    """The frontmatter does not parse; the message says where and why."""


def user_bases() -> tuple[Path, ...]:
    """The folders a user's own definition and memory files may lead into: the config folder and home."""
    from ... import paths

    return tuple(dict.fromkeys(folder.resolve() for folder in (paths.config_home(), Path.home())))


def definition_files(folder: Path, bases: tuple[Path, ...], where: str, recursive: bool = False) -> list[Path]:
    """The ``*.md`` files in ``folder`` (and its subfolders with ``recursive``), by their real paths;
    [] when there is no such folder. Raises ValueError when the folder leads outside ``bases``
    (``where`` names them): a cloned ``.claude -> /`` must not make agentcli walk the disk."""
    try:
        real = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        return []
    if not any(real == base or base in real.parents for base in bases):
        raise ValueError(f"it leads outside {where} (to {real})")
    try:
        found = real.rglob("*.md") if recursive else real.glob("*.md")
        return sorted(p for p in found if p.is_symlink() or not p.is_dir())  # read_definition judges the rest
    except OSError:
        return []


def read_definition(path: Path, bases: tuple[Path, ...], where: str) -> str:
    """The text of a command or agent file, read as read_file reads (``tools.files.read_confined``):
    confined to ``bases``, no FIFO or device, at most DEFINITION_FILE_CAP bytes. Raises OSError, or
    ValueError with the reason (leads elsewhere, not a regular file, too large, not UTF-8)."""
    from ..tools.files import Unreadable, read_confined

    data, size = read_confined(path, bases, DEFINITION_FILE_CAP + 1, where)
    if size > DEFINITION_FILE_CAP:
        raise Unreadable(f"it is larger than {DEFINITION_FILE_CAP // 1024} kB")
    return data.decode("utf-8")


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter of a Markdown text as a dict, and the body after it."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontmatterError("it does not start with a '---' frontmatter line")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        raise FrontmatterError("its frontmatter has no closing '---' line")
    meta = _Parser(lines[1:end], first_line=2).document()
    return meta, "\n".join(lines[end + 1:]).strip()


class _Parser:
    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first_line = first_line
        self.pos = 0

    def document(self) -> dict[str, Any]:
        self._skip_blank()
        if self.pos >= len(self.lines):
            return {}
        if self._indent(self.pos) != 0:
            self._fail("the first key must not be indented")
        return self._mapping(0)

    # -------------------------------------------------------------- structure

    def _mapping(self, indent: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while self._skip_blank():
            here = self._indent(self.pos)
            if here < indent:
                break
            if here > indent:
                self._fail("unexpected indentation")
            content = self.lines[self.pos].strip()
            if content.startswith("- ") or content == "-":
                self._fail("a list item where a 'key: value' line was expected")
            key, rest = self._split_key(content)
            if key in result:
                self._fail(f"the key '{key}' appears twice")
            self.pos += 1
            result[key] = self._value(rest, indent)
        return result

    def _value(self, rest: str, indent: int) -> Any:
        """The value of a key whose line (at ``indent``) ended with ``rest``."""
        block = BLOCK_SCALAR.fullmatch(rest)
        if block:
            return self._block_scalar(indent, folded=block.group(1) == ">", chomp=block.group(2))
        if rest == "" or rest.startswith("#"):
            if not self._skip_blank():
                return None
            child = self._indent(self.pos)
            item = self.lines[self.pos].strip()
            is_item = item.startswith("- ") or item == "-"
            if is_item and child >= indent:
                return self._list(child)
            if child > indent:
                return self._mapping(child)
            return None
        value = self._scalar(rest)
        if isinstance(value, str) and not rest.startswith(("'", '"', "[")):
            value = self._continuation(value, indent)
        return value

    def _list(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while self._skip_blank():
            here = self._indent(self.pos)
            content = self.lines[self.pos].strip()
            if here < indent or (here == indent and not (content.startswith("- ") or content == "-")):
                break
            if here > indent or not (content.startswith("- ") or content == "-"):
                self._fail("unexpected indentation in a list")
            rest = content[1:].strip()
            if rest == "" or self._looks_like_key(rest):
                self._fail("lists of mappings or nested lists are not supported; list plain values")
            self.pos += 1
            value = self._scalar(rest)
            if isinstance(value, str) and not rest.startswith(("'", '"', "[")):
                value = self._continuation(value, indent)
            items.append(value)
        return items

    def _block_scalar(self, indent: int, *, folded: bool, chomp: str) -> str:
        body: list[str] = []
        block_indent: int | None = None
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.strip():
                here = self._indent(self.pos)
                if here <= indent:
                    break
                if block_indent is None:
                    block_indent = here
                if here < block_indent:
                    break
                body.append(line[block_indent:])
            else:
                body.append("")
            self.pos += 1
        while body and body[-1] == "" and chomp != "+":
            body.pop()
        if folded:
            text = _fold(body)
        else:
            text = "\n".join(body)
        return text if chomp == "-" else text + "\n" if text else text

    def _continuation(self, value: str, indent: int) -> str:
        """A plain scalar may go on over more-indented lines, folded with spaces."""
        parts = [value]
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if not line.strip() or self._indent(self.pos) <= indent or line.strip().startswith("#"):
                break
            if self._looks_like_key(line.strip()):  # YAML refuses this too; usually a stray indent
                self._fail("unexpected indentation")
            parts.append(_strip_comment(line.strip()))
            self.pos += 1
        return " ".join(parts)

    # -------------------------------------------------------------- scalars

    def _scalar(self, text: str) -> Any:
        if text.startswith('"'):
            return self._double_quoted(text)
        if text.startswith("'"):
            return self._single_quoted(text)
        if text.startswith("["):
            return self._flow_list(text)
        if text.startswith("{"):
            self._fail("inline mappings ({...}) are not supported")
        if text.startswith(("&", "*", "!")):
            self._fail("anchors, aliases and tags are not supported")
        return _plain(_strip_comment(text))

    def _double_quoted(self, text: str) -> str:
        out: list[str] = []
        i = 1
        while i < len(text):
            ch = text[i]
            if ch == '"':
                self._after_quote(text[i + 1:])
                return "".join(out)
            if ch == "\\" and i + 1 < len(text):
                code = text[i + 1]
                if code == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                    out.append(chr(int(text[i + 2:i + 6], 16)))
                    i += 6
                    continue
                if code not in _ESCAPES:
                    self._fail(f"unknown escape '\\{code}' in a double-quoted string")
                out.append(_ESCAPES[code])
                i += 2
                continue
            out.append(ch)
            i += 1
        self._fail("a double-quoted string is not closed on its line")

    def _single_quoted(self, text: str) -> str:
        out: list[str] = []
        i = 1
        while i < len(text):
            if text[i] == "'":
                if text[i + 1:i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                self._after_quote(text[i + 1:])
                return "".join(out)
            out.append(text[i])
            i += 1
        self._fail("a single-quoted string is not closed on its line")

    def _after_quote(self, rest: str) -> None:
        rest = rest.strip()
        if rest and not rest.startswith("#"):
            self._fail(f"unexpected text after a quoted string: {rest!r}")

    def _flow_list(self, text: str) -> list[Any]:
        text = _strip_comment(text)
        if not text.endswith("]"):
            self._fail("a '[' list is not closed with ']' on its line")
        inner = text[1:-1].strip()
        if not inner:
            return []
        items, current, quote = [], "", ""
        for ch in inner:
            if quote:
                current += ch
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
                current += ch
            elif ch == ",":
                items.append(current.strip())
                current = ""
            elif ch in "[]{}":
                self._fail("nested lists and mappings are not supported inside '[...]'")
            else:
                current += ch
        items.append(current.strip())
        if any(item == "" for item in items):
            self._fail("an empty item in a '[...]' list")
        return [self._scalar(item) for item in items]

    # -------------------------------------------------------------- lines

    def _split_key(self, content: str) -> tuple[str, str]:
        match = re.match(r"""("[^"]*"|'[^']*'|[^\s:#'"][^:#]*?)\s*:(?:\s+(.*)|$)""", content)
        if not match:
            self._fail(f"expected 'key: value', found {content!r}")
        key = match.group(1).strip("'\"") if match.group(1)[0] in "'\"" else match.group(1)
        return key, (match.group(2) or "").strip()

    @staticmethod
    def _looks_like_key(text: str) -> bool:
        return re.match(r"[\w-]+\s*:(\s|$)", text) is not None

    def _skip_blank(self) -> bool:
        """Skip blank and comment lines; whether a line is left."""
        while self.pos < len(self.lines):
            stripped = self.lines[self.pos].strip()
            if stripped and not stripped.startswith("#"):
                return True
            self.pos += 1
        return False

    def _indent(self, index: int) -> int:
        line = self.lines[index]
        if line[: len(line) - len(line.lstrip(" \t"))].count("\t"):
            self.pos = index
            self._fail("tabs are not allowed for indentation")
        return len(line) - len(line.lstrip(" "))

    def _fail(self, problem: str) -> Any:
        line = self.first_line + min(self.pos, max(len(self.lines) - 1, 0))
        raise FrontmatterError(f"line {line}: {problem}")


def _strip_comment(text: str) -> str:
    """A plain value without its trailing ' # comment'."""
    match = re.search(r"(^|\s)#", text)
    return text[: match.start()].rstrip() if match else text.rstrip()


def _plain(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("", "~", "null"):
        return None
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _fold(lines: list[str]) -> str:
    """Folded block scalar: single newlines become spaces, blank lines stay newlines."""
    out = ""
    for i, line in enumerate(lines):
        if i == 0:
            out = line
        elif line == "":
            out += "\n"
        elif lines[i - 1] == "" or line.startswith(" ") or lines[i - 1].startswith(" "):
            out += ("" if out.endswith("\n") else "\n") + line
        else:
            out += " " + line
    return out
