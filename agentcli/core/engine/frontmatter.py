"""Markdown files with a YAML frontmatter block, as Claude Code's agent and command files are:

    ---
    name: finder
    description: "Quoted, with \\n escapes"
    tools: [grep, read_file]
    disallowed_tools:
      - bash
    notes: |
      Several lines.
    ---
    The body.

The block is read with PyYAML's safe loader (plain data only: no tags that build objects), so anchors,
aliases, merge keys and multi-line strings work as in any YAML file. What a cloned repository can put
there is bounded: the file is at most DEFINITION_FILE_CAP bytes, values nest at most MAX_DEPTH deep,
and the document, with every alias counted each time it is used, holds at most MAX_VALUES values (so a
"billion laughs" file is refused before anything walks it); an alias inside the value it names is refused.

Two things YAML refuses are read as Claude Code's files mean them: a key that appears twice is an error
(YAML would keep the last), and a top-level ``key: value`` whose plain value holds ': ' (as in
``description: Use when: ...``, common in shared agent files) is read as that text. Keys are the text
written (``1:`` is the key '1'). Whatever does not parse raises FrontmatterError with one sentence that
names the line.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # PyYAML is imported on the first file read: startup does without it
    import yaml
    from yaml.nodes import Node

DEFINITION_FILE_CAP = 256 * 1024  # bytes: a command or agent file larger than this is skipped
MAX_DEPTH = 32  # nesting of lists and mappings in a frontmatter
MAX_VALUES = 10_000  # values in a frontmatter, each alias counted as the values it stands for


class FrontmatterError(ValueError):
    """The frontmatter does not parse; the message says where and why."""


def user_bases() -> tuple[Path, ...]:
    """The folders a user's own definition and memory files may lead into: the config folder and home."""
    from ... import paths

    return tuple(dict.fromkeys(folder.resolve() for folder in (paths.config_home(), Path.home())))


def confinement(root: Path | None, project: bool) -> tuple[tuple[Path, ...], str]:
    """Where a definition or memory file may lead, and what that is called: inside the workspace (``root``) for
    the workspace's own files (a cloned ``CLAUDE.md -> ~/.ssh/id_ed25519`` is nothing to read), the user's
    folders for the user's."""
    if project and root is not None:
        return (root,), "the workspace"
    return user_bases(), "your own folders"


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
    """The text of a command or agent file, read as read_file reads (``tools.file_access.read_confined``):
    confined to ``bases``, no FIFO or device, at most DEFINITION_FILE_CAP bytes. Raises OSError, or
    ValueError with the reason (leads elsewhere, not a regular file, too large, not UTF-8)."""
    from ..tools.file_access import Unreadable, read_confined

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
    meta = _load("\n".join(lines[1:end]), first_line=2)
    return meta, "\n".join(lines[end + 1 :]).strip()


def _load(source: str, first_line: int) -> dict[str, Any]:
    import yaml

    loader = _loader()
    try:
        try:
            data = yaml.load(source, Loader=loader)  # a SafeLoader: data only
        except yaml.MarkedYAMLError as exc:
            quoted = _COLON_VALUE.sub(_quoted_value, source)
            if exc.problem != "mapping values are not allowed here" or quoted == source:
                raise
            try:
                data = yaml.load(quoted, Loader=loader)
            except yaml.YAMLError:
                try:  # values over several lines, with ': ' in them, as Claude Code's own plugins write them
                    data = yaml.load(_as_blocks(source), Loader=loader)
                except yaml.YAMLError:
                    raise exc from None
    except _Refused as exc:
        raise FrontmatterError(f"line {first_line + exc.line}: {exc.problem}") from None
    except yaml.MarkedYAMLError as exc:
        raise FrontmatterError(_sentence(exc, first_line)) from None
    except yaml.YAMLError as exc:  # unmarked: none of PyYAML's parse errors are, but say it anyway
        raise FrontmatterError(f"its frontmatter does not parse: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(
            f"line {first_line}: the frontmatter must be 'key: value' lines, "
            f"not a {'list' if isinstance(data, list) else 'single value'}"
        )
    return data


class _Refused(Exception):
    """A bound or rule of ours; ``line`` counts from 0 in the frontmatter."""

    def __init__(self, node: Node, problem: str) -> None:
        super().__init__(problem)
        self.line, self.problem = node.start_mark.line, problem


@functools.cache
def _loader() -> type:
    """PyYAML's safe loader (pure Python: the C one cannot be bounded) with the bounds of this module."""
    import yaml
    from yaml.nodes import MappingNode, ScalarNode

    class Loader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._depth = 0

        def compose_node(self, parent: Node | None, index: Any) -> Node | None:
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise _Refused(
                        ScalarNode("", "", self.peek_event().start_mark),  # type: ignore[no-untyped-call]  # stubs leave it untyped
                        f"values nest more than {MAX_DEPTH} deep",
                    )
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def compose_document(self) -> Node | None:
            node = super().compose_document()
            if node is not None:
                _count(node, {}, set())
            return node

        def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: set[str] = set()
            for key_node, _ in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise _Refused(key_node, "a key must be plain text, not a list or mapping")
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                if key_node.value in seen:
                    raise _Refused(key_node, f"the key '{key_node.value}' appears twice")
                seen.add(key_node.value)
            self.flatten_mapping(node)  # merge keys (<<: *base); the mapping's own keys win
            return {key.value: self.construct_object(value, deep=deep) for key, value in node.value}

    return Loader


def _count(node: Node, counted: dict[int, tuple[int, int]], open_nodes: set[int], depth: int = 1) -> int:
    """How many values ``node`` stands for, each alias counted in full; _Refused past MAX_VALUES, or
    where aliases nest values more than MAX_DEPTH deep (the composer bounds only what is written out).
    ``counted`` keeps each node's count and height, so a shared node is walked once."""
    if id(node) in open_nodes:
        raise _Refused(node, "an alias stands for the value that holds it")
    from yaml.nodes import MappingNode, SequenceNode

    total, height = counted.get(id(node), (1, 1))
    if id(node) not in counted and isinstance(node, (SequenceNode, MappingNode)):
        open_nodes.add(id(node))
        children = node.value if isinstance(node, SequenceNode) else [part for pair in node.value for part in pair]
        for child in children:
            total += _count(child, counted, open_nodes, depth + 1)
            height = max(height, 1 + counted[id(child)][1])
            if total > MAX_VALUES:
                raise _Refused(node, f"it holds more than {MAX_VALUES} values, counting what each alias stands for")
        open_nodes.discard(id(node))
    if depth - 1 + height > MAX_DEPTH:
        raise _Refused(node, f"values nest more than {MAX_DEPTH} deep")
    counted[id(node)] = (total, height)
    return total


# `key: text: more` at the top level, on one line, plain: YAML refuses the second ': '; Claude Code's files mean text.
_COLON_VALUE = re.compile(
    r"""^([A-Za-z0-9_-]+:[ \t]+)([^\s"'\[{|>&*!%@`#][^\n]*?:\s[^\n]*?)(?:[ \t]+#[^\n]*)?[ \t]*$(?!\n[ \t])""",
    re.MULTILINE,
)


_KEY_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*))?$")


def _as_blocks(source: str) -> str:
    """Frontmatter whose values run over lines that YAML cannot read plain (``description: Use this when… Examples:``,
    then ``Context: …`` lines): each new ``key:`` at the start of a line begins a field, every other line continues
    the value before it, and each value that is not a one-line list or quoted string becomes a literal block."""
    fields: list[tuple[str, list[str]]] = []
    for line in source.split("\n"):
        match = _KEY_LINE.match(line)
        match = match if match and match.group(1) not in (key for key, _ in fields) else None  # a key again: text
        if match or not fields:
            fields.append((match.group(1) if match else "", [(match.group(2) or "") if match else line]))
        else:
            fields[-1][1].append(line)
    out = []
    for key, lines in fields:
        value = "\n".join(lines).strip()
        if not key:
            return source  # text before any key: not this shape
        if "\n" not in value and (value[:1] in ("[", '"', "'") or not value):
            out.append(f"{key}: {value}")
        else:
            out.append(f"{key}: |-\n" + "\n".join(f"  {line}" for line in value.split("\n")))
    return "\n".join(out)


def _quoted_value(match: re.Match[str]) -> str:
    return match.group(1) + '"' + match.group(2).replace("\\", "\\\\").replace('"', '\\"') + '"'


# What PyYAML says, as a sentence a user can act on: (its context, the start of its problem) -> ours.
_PROBLEMS = [
    ("while parsing a flow sequence", "expected ','", "a '[' list is not closed with ']'"),
    ("while parsing a flow mapping", "expected ','", "a '{{' mapping is not closed with '}}'"),
    ("while scanning a quoted scalar", "found unexpected end", "a {quote} string is not closed"),
    ("while scanning a simple key", "could not find expected ':'", "expected 'key: value', found {line!r}"),
    (None, "mapping values are not allowed", "unexpected indentation, or a ': ' inside a value that needs quotes"),
    (None, "found character '\\t'", "tabs are not allowed for indentation"),
    (None, "found undefined alias", "the alias {found} names no anchor"),
    (None, "could not determine a constructor", "the tag {found} is not allowed: only plain values are read"),
]


def _sentence(exc: yaml.MarkedYAMLError, first_line: int) -> str:
    """``line N: what is wrong``, at the line where the thing that is wrong starts."""
    mark = exc.context_mark if exc.context_mark is not None and exc.context else exc.problem_mark
    problem = exc.problem or ""
    where = mark.line if mark is not None else 0
    text = (mark.buffer or "") if mark is not None else ""
    found = re.search(r"'([^']*)'", problem)
    for context, start, ours in _PROBLEMS:
        if (context is None or exc.context == context) and problem.startswith(start):
            opened = text[mark.pointer] if mark is not None and mark.pointer < len(text) else ""
            line = text.split("\n")[where].strip() if mark is not None and text else ""
            problem = ours.format(
                quote="single-quoted" if opened == "'" else "double-quoted",
                line=line,
                found=repr(found.group(1)) if found else "",
            )
            break
    else:
        problem = f"{exc.context}: {problem}" if exc.context else problem
    return f"line {first_line + where}: {problem.rstrip('.')}"
