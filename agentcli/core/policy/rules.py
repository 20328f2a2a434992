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
Claude Code's names work too (each tool declares its own: ``core/tool_facts.py``): ``Read`` (read_file, grep, glob), ``Edit``
(edit_file, write_file), ``Write``, ``Bash``, ``Grep``, ``Glob``, ``Task``/``Agent`` (task), ``TodoWrite``,
``Skill``, ``WebFetch`` (web_fetch, whose ``domain:HOST`` patterns name hosts: ``web_address.fetch_rule_hits``).

Path patterns are matched by a library (pathspec's gitignore rules, which Claude Code's path rules
follow); the wildcard of command and text patterns is not. It is the one these rules define, where
``*`` is the only special character and crosses spaces and ``/``, and a trailing `` *`` or ``:*`` also
matches the bare command. fnmatch and glob libraries differ on exactly the points that decide
what a rule allows: ``?`` and ``[...]`` are special there (a rule ``bash(ls [ab])`` would match
``ls a``), fnmatch folds case on some systems, and none has the optional tail. The matcher is two
short functions over ``re.escape`` (``_wildcard_regex``, ``_command_regex``).
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..tool_facts import KNOWN
from ..vocabulary import LISTS as LISTS  # checked in this order
from .bash_commands import WRITTEN, quote_words
from .bash_commands import CommandLine as CommandLine
from .bash_commands import SimpleCommand as SimpleCommand
from .bash_effects import writing_options
from .bash_syntax import parse

if TYPE_CHECKING:
    import pathspec


def names_tool(name: str, tool: str) -> bool:
    """Whether ``name`` (in a rule or an agent's tool list) names ``tool``: the same name, or an MCP
    server (``mcp__docs``, or Claude Code's ``mcp__docs__*``) naming each of its tools (``mcp__docs__search``)."""
    if name.startswith("mcp__") and name.endswith("__*"):
        name = name[:-3]
    return name == tool or (name.startswith("mcp__") and "__" not in name[5:] and tool.startswith(name + "__"))


_RULE = re.compile(r"\s*([A-Za-z_][\w-]*(?:(?<=__)\*)?)\s*(?:\((.*)\))?\s*", re.DOTALL)


class RuleError(ValueError):
    """A rule a user wrote cannot be understood; the message says why."""


@dataclass(frozen=True)
class Rule:
    text: str  # as written, shown in messages
    name: str  # the tool it names, lower-cased: agentcli's name or Claude Code's (Read covers every reading tool)
    pattern: str | None  # None: every call of the tool

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools it covers, as the tools' own facts say when it is used (``tool_facts.Catalogue.rule_tools``)."""
        return KNOWN.rule_tools(self.name)

    @classmethod
    def parse(cls, text: str) -> Rule:
        if not isinstance(text, str):
            raise RuleError(f"a permission rule must be a string such as 'bash(npm test *)', not {text!r}.")
        match = _RULE.fullmatch(text)
        if not match:
            raise RuleError(
                f"cannot read the permission rule {text!r}; write it like 'bash(npm test *)' or 'write_file(docs/**)'."
            )
        name, pattern = match.group(1).lower(), match.group(2)
        if pattern is not None:
            pattern = pattern.strip()
            if not pattern:
                raise RuleError(
                    f"the permission rule {text!r} has empty parentheses; leave them out "
                    "to match every call of the tool."
                )
            if pattern in ("*", "**"):
                pattern = None
        return cls(text.strip(), name, pattern)

    def covers(self, tool: str) -> bool:
        return any(names_tool(name, tool.lower()) for name in self.tools)

    def matches_command(self, command: str) -> bool:
        return self.pattern is None or _command_regex(self.pattern).fullmatch(command) is not None

    def allows(self, command: SimpleCommand) -> bool:
        """Whether this allow rule covers ``command``: it matches it, and when the command writes files its
        pattern names what it writes (``names_writes``). A pattern never covers a command whose words are
        known only when it runs."""
        if self.pattern is None:
            return True
        if command.dynamic:
            return False
        if command.writes:
            return self.names_writes(command)
        return self.matches_command(command.text) or self.matches_command(command.canonical)

    def names_writes(self, command: SimpleCommand) -> bool:
        """Whether the pattern matches ``command`` with each character of what it writes matched by the
        pattern's own text, never by a ``*``: ``bash(tee *)`` does not cover ``tee notes.txt``, nor
        ``bash(npm test > *)`` ``npm test > ~/.bashrc``; ``bash(tee notes.txt)`` and
        ``bash(npm test * > out.log)`` do. A write by the group around the command (``{ ls; } > f``) is
        named by no rule of its own."""
        if self.pattern is None:
            return True
        if command.writes_around or not (command.written or command.written_redirects):
            return False
        regex = _command_regex(self.pattern, marked=True)
        return any(regex.fullmatch(spelling) for spelling in command.marked_spellings())

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


def _command_regex(pattern: str, marked: bool = False) -> re.Pattern[str]:
    """A bash pattern as a regex. ``marked``: for ``SimpleCommand.marked_spellings``, where a character
    after WRITTEN may be matched by the pattern's text only (WRITTEN then the character), never by a ``*``."""
    pattern = " ".join(pattern.split())
    optional_tail = pattern.endswith((" *", ":*")) and len(pattern) > 2
    if optional_tail:
        pattern = pattern[:-2]
    if not marked:
        return re.compile(_wildcard_regex(pattern).pattern + (r"(?: .*)?" if optional_tail else ""), re.DOTALL)
    mark = re.escape(WRITTEN)
    anything = f"[^{mark}]*"

    def literal(piece: str) -> str:
        return "".join(f"{mark}?{re.escape(c)}" for c in piece)

    body = anything.join(literal(piece) for piece in pattern.split("*"))
    return re.compile(body + (f"(?:{literal(' ')}{anything})?" if optional_tail else ""), re.DOTALL)


_SPECS: dict[str, pathspec.GitIgnoreSpec] = {}


def _path_spec(pattern: str) -> pathspec.GitIgnoreSpec:
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
    def parse(cls, lists: dict[str, list[str]] | None) -> RuleSet:
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
            raise RuleError(f'permissions.{name} must be a list of rules such as ["bash(npm test *)"].')
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


def split_command(command: str) -> CommandLine:
    """The simple commands of a bash command line (``bash_syntax.parse``), each with what it writes:
    its redirections, and the options that make its program write or run files."""
    line = parse(command)
    return replace(line, commands=tuple(_with_options(c) for c in line.commands))


def _with_options(command: SimpleCommand) -> SimpleCommand:
    found, places = writing_options(command.words)
    program = os.path.basename(command.words[0]) if command.words and command.words[0] else ""
    if program in _WRAPPERS:  # ``sudo tee f``, ``timeout 5 sort -o f``: the command it runs may start at any word
        for at in range(1, len(command.words)):
            more, their = writing_options(command.words[at:])
            found, places = found + more, places + tuple(at + place for place in their)
        found = tuple(dict.fromkeys(found))
    if not found:
        return command
    return replace(
        command, writes=tuple(dict.fromkeys(command.writes + found)), written=tuple(sorted({*command.written, *places}))
    )


# Programs that run the command named in their later words: a deny rule looks at those words too.
_WRAPPERS = {
    "env",
    "command",
    "builtin",
    "nice",
    "nohup",
    "timeout",
    "sudo",
    "doas",
    "xargs",
    "stdbuf",
    "setsid",
    "ionice",
    "exec",
    "time",
    "chronic",
    "unbuffer",
    "watch",
    "strace",
    "flock",
}
_SHELLS = {"bash", "sh", "dash", "zsh", "ksh"}


def rule_hits(rule: Rule, command: SimpleCommand, depth: int = 0) -> str:
    """Whether a deny or ask rule names ``command``: "yes"; "maybe" when a part known only when it
    runs could make it so; "" when it cannot. Looks through wrappers (``sudo rm``, ``env X=1 rm``)
    and into ``bash -c '...'``."""
    if rule.pattern is None or any(rule.matches_command(s) for s in command.spellings()):
        return "yes"
    found = "maybe" if command.dynamic and _could_start(rule.pattern, command.static_prefix()) else ""
    words = [None if i in command.globs else w for i, w in enumerate(command.words)]  # a pattern may be anything
    program = os.path.basename(command.words[0]) if command.words and command.words[0] else ""
    if program in _WRAPPERS:
        for i in range(1, len(words)):
            rest = words[i:]
            if None not in rest:
                if rule.matches_command(quote_words(rest)) or rule.matches_command(" ".join(rest)):  # type: ignore[arg-type]
                    return "yes"
            elif _could_start(rule.pattern, SimpleCommand("", "", tuple(rest)).static_prefix()):
                found = "maybe"
    if program == "find":  # find -exec CMD ... ; and its kin run CMD
        for at, word in enumerate(words):
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                rest = list(itertools.takewhile(lambda w: w not in (";", "+"), words[at + 1 :]))
                hit = rule_hits(rule, SimpleCommand("", "", tuple(rest)), depth + 1) if rest else ""
                if hit == "yes":
                    return "yes"
                found = found or hit
    if program in _SHELLS and "-c" in words[1:]:
        at = words.index("-c")
        script = words[at + 1] if at + 1 < len(words) else ""
        nested = split_command(script) if script is not None and depth < 4 else None
        if nested is None or nested.unknown:
            found = "maybe"
        else:
            for inner in nested.commands:
                hit = rule_hits(rule, inner, depth + 1)
                if hit == "yes":
                    return "yes"
                found = found or hit
    return found


def _could_start(pattern: str, prefix: str) -> bool:
    """Whether a command line that starts with ``prefix`` (and goes on unknown) could match ``pattern``."""
    pattern = " ".join(pattern.split())
    if pattern.endswith(":*"):
        pattern = pattern[:-2] + " *"
    literal = pattern.split("*", 1)[0]
    start = prefix + " " if prefix else ""
    return literal.startswith(start) or start.startswith(literal)


# ---------------------------------------------------------------- suggestions

# Commands whose second word picks what they do: a session rule keeps both words.
SUBCOMMAND_TOOLS = {
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "cargo",
    "go",
    "docker",
    "kubectl",
    "make",
    "uv",
    "poetry",
    "pip",
    "pip3",
    "gh",
    "dotnet",
    "mvn",
    "gradle",
    "./gradlew",
    "bundle",
    "rake",
    "mix",
    "terraform",
    "helm",
    "just",
    "nix",
    "swift",
    "flutter",
    "rustup",
    "conda",
    "tox",
    "nox",
    "hatch",
    "pdm",
}
# Subcommands that launch another program, named next: a session rule names that program too.
LAUNCHERS = {
    "uv": {"run"},
    "go": {"run"},
    "docker": {"run", "exec"},
    "podman": {"run", "exec"},
    "poetry": {"run"},
    "conda": {"run"},
    "mamba": {"run"},
    "pixi": {"run"},
    "nix": {"run", "shell", "develop"},
    "deno": {"run"},
    "cargo": {"run"},
    "pipenv": {"run"},
    "hatch": {"run"},
    "pdm": {"run"},
    "rye": {"run"},
    "kubectl": {"exec"},
    "dotnet": {"run"},
    "npm": {"exec"},
    "pnpm": {"exec", "dlx"},
    "yarn": {"exec", "dlx"},
    "bun": {"x"},
    "pipx": {"run"},
}
# Subcommands that run a script the project names (``npm run test``): the rule keeps the script's name.
SCRIPT_RUNNERS = {"npm": {"run", "run-script"}, "pnpm": {"run"}, "yarn": {"run"}, "bun": {"run"}, "deno": {"task"}}
PROGRAM_LAUNCHERS = {"npx", "uvx", "bunx", "pnpx"}  # they launch the program named next
# Programs whose rule is the exact command, never ``bash(PROGRAM *)``: what they run or touch is in their
# words (``bash -c``, ``python -c``, ``xargs``, ``sudo``, ``valgrind CMD``; ``rm -rf``; a host to reach), so
# allowing one line of them must not allow every line. Any other program's rule is the program and what follows.
EXACT_ONLY = (
    _SHELLS
    | _WRAPPERS
    | {
        "fish",
        "csh",
        "tcsh",
        "pwsh",
        "eval",
        "source",
        "trap",
        "busybox",
        "su",
        "runuser",
        "chroot",
        "nsenter",
        "unshare",
        "firejail",
        "bwrap",
        "systemd-run",
        "taskset",
        "setarch",
        "at",
        "batch",
        "crontab",
        "parallel",
        "script",
        "expect",
        "find",
        "sed",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "ed",
        "vim",
        "vi",
        "nvim",
        "emacs",
        "gdb",
        "lldb",
        "valgrind",
        "ltrace",
        "perf",
        "hyperfine",
        "entr",
        "watchexec",
        "nodemon",
        "osascript",
    }
    | {
        "rm",
        "rmdir",
        "mv",
        "cp",
        "dd",
        "ln",
        "chmod",
        "chown",
        "chgrp",
        "truncate",
        "shred",
        "install",
        "touch",
        "tar",
        "unzip",
        "zip",
        "gzip",
        "gunzip",
        "bzip2",
        "xz",
        "7z",
        "patch",
        "split",
        "kill",
        "pkill",
        "killall",
    }
    | {"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "socat", "telnet", "ftp"}
)
# Interpreters (any version: python3.11), which run code given on their command line (-c, -e, a script).
INTERPRETER = re.compile(
    r"(?:python|pypy|perl|ruby|irb|node|ts-node|tsx|php|lua|luajit|tclsh|java|jshell|julia|"
    r"scala|groovy|kotlin|ghci|runghc|Rscript|R)[\d.]*"
)
_NAME = re.compile(r"[A-Za-z][\w:.-]*")


def command_rule(command: SimpleCommand, tool: str) -> str:
    """The rule of ``tool`` (the one that runs command lines) a user means for a command: ``bash(git diff *)``
    for tools with subcommands, the launched program too for ``uv run pytest *``, ``bash(pytest *)`` for another program, but the exact command for
    one that runs or touches what its words say (EXACT_ONLY, INTERPRETER), so allowing ``python x.py``
    never allows every ``python`` run. "" when no rule can say exactly that command: it is known only
    when it runs, it is fed a heredoc, it only assigns variables, or it contains a ``*``."""
    if command.dynamic or command.stdin or not command.words or command.assignments:
        return ""
    words = [w or "" for w in command.words]
    if any(re.search(r"[\t\n\r]|  ", w) for w in words):
        return ""  # rules collapse runs of whitespace, so this exact command could not be said
    rule = _words_rule(words, " ".join(command.redirects))
    return f"{tool}({rule})" if rule else ""


def _words_rule(words: list[str], redirects: str = "") -> str:
    first, second = words[0], words[1] if len(words) > 1 else ""
    exact = " ".join(filter(None, [quote_words(words), redirects]))
    if redirects:
        return "" if "*" in exact else exact
    if first in PROGRAM_LAUNCHERS and second and not second.startswith("-"):
        inner = _words_rule(words[1:])
        return f"{first} {inner}" if inner else ""
    if second in LAUNCHERS.get(first, ()) and len(words) > 2:
        inner = _words_rule(words[2:])
        return f"{first} {second} {inner}" if inner else ""
    if second in SCRIPT_RUNNERS.get(first, ()) and len(words) > 2 and _NAME.fullmatch(words[2]):
        return f"{first} {second} {words[2]} *"
    if second in LAUNCHERS.get(first, ()) or second in SCRIPT_RUNNERS.get(first, ()):
        return "" if "*" in exact else exact
    if first in SUBCOMMAND_TOOLS and _NAME.fullmatch(second):
        return f"{first} {second} *"
    if first.startswith("python") and second == "-m" and len(words) > 2 and _NAME.fullmatch(words[2]):
        inner = _words_rule(words[2:])  # python -m pytest tests/x.py: as pytest tests/x.py is
        if inner.endswith(" *") and INTERPRETER.fullmatch(first):
            return f"{first} -m {inner}"
    if _NAME.fullmatch(first) and not (
        first in EXACT_ONLY
        or INTERPRETER.fullmatch(first)
        or first in SUBCOMMAND_TOOLS
        or first in LAUNCHERS
        or first in SCRIPT_RUNNERS
    ):
        return f"{first} *"  # pytest tests/x.py: the next run names another file, and the user meant pytest
    return "" if "*" in exact else exact


# ---------------------------------------------------------------- saving "always allow" rules


def save_allow_rule(settings_file: Path, rule: str) -> None:
    """Add ``rule`` to the ``allow`` list of ``[permissions]`` in a TOML settings file.

    tomlkit edits the file's document, so the rest of it (comments, blank lines, order, the way
    the list is laid out) stays as it was; a one-line list that grows past three rules is laid out
    one rule a line. The result is parsed again and written only if it says exactly what it said
    before plus the rule. Raises OSError or RuleError when that cannot be done.
    """
    import tomllib

    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    from tomlkit.items import Array, InlineTable

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
    cannot = RuleError(
        f"cannot add the rule to {settings_file} without rewriting it; add {rule!r} to permissions.allow by hand"
    )
    try:
        document = tomlkit.parse(text)
        if "permissions" not in document:
            document.add("permissions", tomlkit.table())
        permissions = document["permissions"]
        if not isinstance(permissions, dict):  # a string, or an array of tables
            raise cannot
        if "allow" not in permissions:
            permissions["allow"] = tomlkit.array()
        rules = permissions["allow"]
        if not isinstance(rules, Array):
            raise cannot
        rules.append(rule)
        if len(rules) > 3 and "\n" not in rules.as_string() and not isinstance(permissions, InlineTable):
            rules.multiline(True)
        new_text = tomlkit.dumps(document)
        ok = tomllib.loads(new_text) == {**before, "permissions": {**table, "allow": allow + [rule]}}
    except (TOMLKitError, tomllib.TOMLDecodeError):
        ok = False
    if not ok:
        raise cannot
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = settings_file.with_name(settings_file.name + ".tmp")
    tmp.write_text(new_text, encoding="utf-8")
    os.replace(tmp, settings_file)
