"""Permission rules such as ``bash(npm test *)`` or ``write_file(docs/**)``, and bash command splitting.

A rule is a tool name with an optional pattern in parentheses. What the pattern is matched
against depends on the tool:

- ``bash``: each simple command of the command line (see ``split_command``), as a wildcard
  pattern where ``*`` matches anything; a trailing `` *`` (or Claude Code's ``:*``) also
  matches the bare command, so ``bash(git diff *)`` allows ``git diff`` and ``git diff a.py``.
- tools with a ``path`` argument: the real path, as a gitignore-style pattern relative to the
  workspace root (``docs/**``, ``.env``, ``*.md``); patterns starting with ``/``, ``~`` or
  ``..`` name places outside it.
- any other tool: its main argument, as a wildcard pattern.

A rule without a pattern (``bash``, ``edit_file``) or with ``*`` matches every call of the tool.
Claude Code's names work too: ``Read`` (read_file, grep, glob), ``Edit`` (edit_file,
write_file), ``Write``, ``Bash``, ``Grep``, ``Glob``, ``Task``/``Agent`` (task).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

LISTS = ("deny", "ask", "allow")  # checked in this order

# Claude Code's tool names, and the tools they cover.
ALIASES: dict[str, tuple[str, ...]] = {
    "read": ("read_file", "grep", "glob"),
    "edit": ("edit_file", "write_file"),
    "write": ("write_file",),
    "multiedit": ("edit_file",),
    "ls": ("glob",),
    "agent": ("task",),
}

def names_tool(name: str, tool: str) -> bool:
    """Whether ``name`` (in a rule or an agent's tool list) names ``tool``: the same name, or an MCP
    server (``mcp__docs``) naming each of its tools (``mcp__docs__search``)."""
    return name == tool or (name.startswith("mcp__") and "__" not in name[5:] and tool.startswith(name + "__"))


_RULE = re.compile(r"\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*", re.DOTALL)


class RuleError(ValueError):
    """A rule a user wrote cannot be understood; the message says why."""


@dataclass(frozen=True)
class Rule:
    text: str  # as written, shown in messages
    tools: tuple[str, ...]
    pattern: str | None  # None: every call of the tool

    @classmethod
    def parse(cls, text: str) -> "Rule":
        if not isinstance(text, str):
            raise RuleError(f"a permission rule must be a string such as 'bash(npm test *)', not {text!r}.")
        match = _RULE.fullmatch(text)
        if not match:
            raise RuleError(f"cannot read the permission rule {text!r}; write it like 'bash(npm test *)' "
                            "or 'write_file(docs/**)'.")
        name, pattern = match.group(1).lower(), match.group(2)
        if pattern is not None:
            pattern = pattern.strip()
            if not pattern:
                raise RuleError(f"the permission rule {text!r} has empty parentheses; leave them out "
                                "to match every call of the tool.")
            if pattern in ("*", "**"):
                pattern = None
        return cls(text.strip(), ALIASES.get(name, (name,)), pattern)

    def covers(self, tool: str) -> bool:
        return any(names_tool(name, tool.lower()) for name in self.tools)

    def matches_command(self, command: str) -> bool:
        return self.pattern is None or _command_regex(self.pattern).fullmatch(command) is not None

    def matches_text(self, value: str) -> bool:
        return self.pattern is None or _wildcard_regex(self.pattern).fullmatch(value) is not None

    def matches_path(self, path: Path, root: Path, is_dir: bool = False) -> bool:
        """Whether ``path`` (absolute, normalized) matches; relative patterns only match inside ``root``."""
        if self.pattern is None:
            return True
        pattern = self.pattern
        if pattern.startswith(("/", "~", "..")):
            pattern = "/" + os.path.normpath(root / os.path.expanduser(pattern)).lstrip("/")
            subject = str(path).lstrip("/")
        else:
            try:
                subject = path.relative_to(root).as_posix()
            except ValueError:
                return False
            if subject == ".":
                return False
        spec = _path_spec(pattern)
        return spec.match_file(subject) or (is_dir and spec.match_file(subject + "/"))


def _wildcard_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(piece) for piece in pattern.split("*")), re.DOTALL)


def _command_regex(pattern: str) -> re.Pattern[str]:
    pattern = " ".join(pattern.split())
    optional_tail = pattern.endswith((" *", ":*")) and len(pattern) > 2
    if optional_tail:
        pattern = pattern[:-2]
    body = _wildcard_regex(pattern).pattern
    return re.compile(body + (r"(?: .*)?" if optional_tail else ""), re.DOTALL)


_SPECS: dict[str, "pathspec.GitIgnoreSpec"] = {}


def _path_spec(pattern: str) -> "pathspec.GitIgnoreSpec":
    spec = _SPECS.get(pattern)
    if spec is None:
        import pathspec  # on the first path rule checked: startup does without it

        spec = _SPECS[pattern] = pathspec.GitIgnoreSpec.from_lines([pattern])
    return spec


@dataclass
class RuleSet:
    """The deny, ask and allow lists, in that order of precedence."""

    deny: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    allow: list[Rule] = field(default_factory=list)

    @classmethod
    def parse(cls, lists: dict[str, list[str]] | None) -> "RuleSet":
        lists = check_lists(lists or {})
        return cls(**{name: [Rule.parse(text) for text in lists.get(name, [])] for name in LISTS})

    def of(self, kind: str, tool: str) -> list[Rule]:
        return [rule for rule in getattr(self, kind) if rule.covers(tool)]


def check_lists(lists: object) -> dict[str, list[str]]:
    """``lists`` as read from a settings file, checked: only allow/ask/deny lists of valid rules."""
    if not isinstance(lists, dict):
        raise RuleError("'permissions' must be a table with allow, ask and deny lists.")
    for name, rules in lists.items():
        if name not in LISTS:
            raise RuleError(f"unknown permissions list '{name}'; use allow, ask or deny.")
        if not isinstance(rules, list):
            raise RuleError(f"permissions.{name} must be a list of rules such as [\"bash(npm test *)\"].")
        for text in rules:
            Rule.parse(text)
    return lists


def merge_lists(current: dict[str, list[str]], new: object) -> dict[str, list[str]]:
    """Rule lists from two settings files together: later files add rules, they never drop earlier ones."""
    new = check_lists(new)
    merged = {name: list(rules) for name, rules in current.items()}
    for name, rules in new.items():
        merged[name] = merged.get(name, []) + [r for r in rules if r not in merged.get(name, [])]
    return merged


# ---------------------------------------------------------------- bash command lines


@dataclass(frozen=True)
class SimpleCommand:
    text: str  # whitespace collapsed, leading shell keywords dropped
    bare: str  # also without leading VAR=value assignments (for deny and ask rules only)
    writes: tuple[str, ...] = ()  # how it writes files: ">" for a redirection, or the options, e.g. "--output"

    @property
    def writes_file(self) -> bool:
        """It writes to a file it names: a redirection (not to /dev/null or a descriptor), or an option."""
        return bool(self.writes)


@dataclass(frozen=True)
class CommandLine:
    commands: tuple[SimpleCommand, ...]  # every simple command, those inside $(...) and backticks too
    substitution: bool  # $(...), backticks, <(...) or >(...)

    @cached_property
    def writes_file(self) -> bool:
        return any(c.writes_file for c in self.commands)


_KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done", "esac", "time"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*\s+")
_REDIRECT = re.compile(r"(?:\d*|&)>>?\|?\s*([^\s;&|<>()]*)")


def split_command(command: str) -> CommandLine:
    """Split a bash command line into its simple commands.

    Splits on ``&&``, ``||``, ``;``, ``|``, ``&``, newlines and parentheses outside quotes, and
    parses the inside of command substitutions as command lines of their own. It errs towards
    more, smaller pieces: every piece must be allowed for the whole line to be.
    """
    pieces: list[str] = []
    inner: list[SimpleCommand] = []
    substitution = False
    current: list[str] = []
    i, n = 0, len(command)
    quote = ""  # "'" or '"' while inside quotes

    def cut() -> None:
        pieces.append("".join(current))
        current.clear()

    while i < n:
        ch = command[i]
        if quote == "'":
            current.append(ch)
            quote = "" if ch == "'" else quote
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if command[i + 1] == "\n":  # line continuation
                current.append(" ")
            else:
                current.append(command[i : i + 2])
            i += 2
            continue
        if ch == "$" and command.startswith("((", i + 1):  # arithmetic, not a command
            end = _closing(command, i + 1)
            current.append(command[i:end])
            i = end
            continue
        if (ch == "$" or (ch in "<>" and not quote)) and command.startswith("(", i + 1):
            end = _closing(command, i + 1)
            substitution = True
            inner.extend(split_command(command[i + 2 : end - 1]).commands)
            current.append(command[i:end])
            i = end
            continue
        if ch == "`":
            end = command.find("`", i + 1)
            while end != -1 and command[end - 1] == "\\":
                end = command.find("`", end + 1)
            end = n if end == -1 else end + 1
            substitution = True
            inner.extend(split_command(command[i + 1 : end - 1]).commands)
            current.append(command[i:end])
            i = end
            continue
        if quote == '"':
            current.append(ch)
            quote = "" if ch == '"' else quote
            i += 1
            continue
        if ch in "'\"":
            quote = ch
            current.append(ch)
            i += 1
            continue
        if ch in ";\n()":
            cut()
            i += 1
            continue
        if ch in "|&":
            before = command[i - 1] if i else ""
            if ch == "&" and (before in "<>" or command.startswith(">", i + 1)):  # >&2, 2>&1, &>file
                current.append(ch)
                i += 1
                continue
            cut()
            i += 2 if command.startswith(("&&", "||", "|&"), i) else 1
            continue
        current.append(ch)
        i += 1
    cut()
    commands = [c for c in (_simple(piece) for piece in pieces) if c is not None]
    return CommandLine(tuple(commands + inner), substitution)


def _closing(text: str, start: int) -> int:
    """The index just past the parenthesis that closes the one at ``start`` (or the end of text)."""
    depth = 0
    quote = ""
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == "\\":
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _simple(piece: str) -> SimpleCommand | None:
    words = piece.split()
    while words and words[0] in _KEYWORDS:
        words.pop(0)
    if not words:
        return None
    text = " ".join(words)
    bare = text
    while match := _ASSIGNMENT.match(bare + " "):
        bare = (bare + " ")[match.end():].strip()
    redirects = any(target and not target.startswith("&") and target != "/dev/null"
                    for target in _REDIRECT.findall(_unquoted(text)))
    writes = ((">",) if redirects else ()) + _writing_options((bare or text).split())
    return SimpleCommand(text, bare or text, writes)


# Options that make a command write (or delete, or run) files named on its command line, so that
# an allow rule written for reading, such as ``bash(git diff *)``, does not cover
# ``git diff --output=/elsewhere``. A rule covers them only when its pattern names the option.
_WRITING_LONG = re.compile(r"--(output|output-file|output-document|out-file|outfile|out|log-file|logfile"
                           r"|in-place|cookie-jar|dump-header|remote-name)(?==|$)")
_WRITING_SHORT = {  # command: short options (or find's single-dash words) that write
    "sort": ("-o",), "curl": ("-o", "-O", "-D", "-c"), "wget": ("-O", "-o", "-a"), "sed": ("-i",),
    "perl": ("-i",), "cc": ("-o",), "gcc": ("-o",), "g++": ("-o",), "clang": ("-o",), "c++": ("-o",),
    "find": ("-fprint", "-fprint0", "-fprintf", "-fls", "-delete", "-exec", "-execdir", "-ok", "-okdir"),
}


def _writing_options(words: list[str]) -> tuple[str, ...]:
    if not words:
        return ()
    program = os.path.basename(words[0])
    short = _WRITING_SHORT.get(program, ())
    if program == "git" and len(words) > 1 and words[1] == "format-patch":
        short = ("-o",)
    found: list[str] = []
    for word in words[1:]:
        if match := _WRITING_LONG.match(word):
            found.append("--" + match.group(1))
        elif program == "find":
            found += [word] if word in short else []
        elif program == "tee" and not word.startswith("-"):
            found.append("tee")  # every file argument is written
        elif word.startswith("-") and not word.startswith("--"):
            found += [option for option in short if _sets_short(word, option[1])]
    return tuple(dict.fromkeys(found))


def _sets_short(word: str, letter: str) -> bool:
    """Whether ``word`` sets ``-letter``: as its first option (``-ofile``, ``-i.bak``) or in a cluster (``-ni``)."""
    return word[1:2] == letter or (word[1:].isalpha() and letter in word[1:])


def _unquoted(text: str) -> str:
    """``text`` with quoted spans blanked, so '>' inside quotes is not taken for a redirection."""
    return re.sub(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", lambda m: "_" * len(m.group()), text)


# ---------------------------------------------------------------- suggestions

# Commands whose second word picks what they do: a session rule keeps both words.
SUBCOMMAND_TOOLS = {
    "git", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "docker", "kubectl", "make", "uv", "poetry",
    "pip", "pip3", "gh", "dotnet", "mvn", "gradle", "./gradlew", "bundle", "rake", "mix", "terraform", "helm",
    "just", "nix", "swift", "flutter", "rustup", "conda", "tox", "nox", "hatch", "pdm",
}


def command_rule(command: SimpleCommand) -> str:
    """The narrowest useful rule for a command: ``bash(git diff *)`` for tools with subcommands,
    else the exact command, so allowing ``python x.py`` never allows every ``python`` run.
    "" when no rule can say exactly that command (it contains a ``*``)."""
    words = command.text.split()
    if len(words) >= 2 and words[0] in SUBCOMMAND_TOOLS and re.fullmatch(r"[A-Za-z][\w:.-]*", words[1]):
        return f"bash({words[0]} {words[1]} *)"
    return "" if "*" in command.text else f"bash({command.text})"


# ---------------------------------------------------------------- saving "always allow" rules


def save_allow_rule(settings_file: Path, rule: str) -> None:
    """Add ``rule`` to the ``allow`` list of ``[permissions]`` in a TOML settings file.

    The file is edited as text, so the rest of it (comments included) stays as it was; the
    result is parsed again and written only if it says exactly what it said before plus the
    rule. Raises OSError or RuleError when that cannot be done.
    """
    import tomllib

    try:
        text = settings_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{settings_file} is not valid TOML ({exc})") from None
    table = before.get("permissions", {})
    allow = list(table.get("allow", [])) if isinstance(table, dict) else []
    if rule in allow:
        return
    new_text = _with_rule(text, allow + [rule])
    expected = {**before, "permissions": {**table, "allow": allow + [rule]}}
    try:
        ok = tomllib.loads(new_text) == expected
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        raise RuleError(f"cannot add the rule to {settings_file} without rewriting it; "
                        f"add {rule!r} to permissions.allow by hand")
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = settings_file.with_name(settings_file.name + ".tmp")
    tmp.write_text(new_text, encoding="utf-8")
    os.replace(tmp, settings_file)


_HEADER = re.compile(r"^[ \t]*\[[ \t]*permissions[ \t]*\][ \t]*(?:#.*)?$", re.MULTILINE)
_ANY_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)
_ALLOW_KEY = re.compile(r"^[ \t]*allow[ \t]*=[ \t]*\[", re.MULTILINE)


def _toml_array(items: list[str]) -> str:
    import json

    if len(items) <= 3:
        return "[" + ", ".join(json.dumps(i, ensure_ascii=False) for i in items) + "]"
    return "[\n" + "".join(f"    {json.dumps(i, ensure_ascii=False)},\n" for i in items) + "]"


def _with_rule(text: str, allow: list[str]) -> str:
    line = f"allow = {_toml_array(allow)}\n"
    header = _HEADER.search(text)
    if header is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{sep}[permissions]\n{line}"
    start = header.end()
    if not text.startswith("\n", start):
        text = text[:start] + "\n" + text[start:]
    start += 1
    following = _ANY_HEADER.search(text, start)
    end = following.start() if following else len(text)
    key = _ALLOW_KEY.search(text, start, end)
    if key is None:
        return text[:start] + line + text[start:]
    close = _array_end(text, key.end() - 1)
    after = text[close:]
    return text[: key.start()] + line.rstrip("\n") + after


def _array_end(text: str, start: int) -> int:
    """The index just past the ``]`` closing the TOML array that opens at ``start``."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "#":
            i = text.find("\n", i)
            if i == -1:
                return len(text)
            continue
        if ch in "'\"":
            triple = text.startswith(ch * 3, i)
            delim = ch * 3 if triple else ch
            j = i + len(delim)
            while j < len(text) and not text.startswith(delim, j):
                j += 2 if ch == '"' and text[j] == "\\" else 1
            i = j + len(delim)
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)
