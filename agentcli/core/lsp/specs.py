"""Which language servers a workspace gets: those found on PATH and those the ``lsp`` setting names (which of
them the workspace has files for: ``present.py``).

A server is a ``ServerSpec``: its command, the languages it serves and the file patterns that are theirs. The
known servers (``KNOWN``) need no configuration: the first of a language's found on PATH serves it. The ``lsp``
setting adds servers or replaces known ones by name (``{"pylsp": false}`` turns one off), in this shape::

    [lsp.ruby]
    command = ["solargraph", "stdio"]
    languages = ["ruby"]
    patterns = ["*.rb"]
    initialization_options = {}
"""

from __future__ import annotations

import fnmatch
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# A file's language id, as LSP names it, by its name's ending.
LANGUAGE_OF = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascriptreact",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
}


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: tuple[str, ...]
    languages: tuple[str, ...]
    patterns: tuple[str, ...]
    initialization_options: Mapping[str, Any] = field(default_factory=dict)
    configured: bool = False  # from the lsp setting (a workspace's own needs trust: config.py) or a plugin
    env: tuple[tuple[str, str], ...] = ()  # set for it beside the environment bash gets (a plugin's)
    plugin_root: str = ""  # a plugin's server: its folder, readable in the sandbox (engine/plugins.py)
    # Files that make a project of their folder (tsconfig.json): without one in a file's folder or above it, the
    # server's project is the open files and what they import, so it misses the references in other files.
    projects: tuple[str, ...] = ()
    # Its answers before it published a file's first diagnostics know only the open files (typescript-language-server
    # routes references and definitions to tsserver's syntax server until its semantic one has reported): a file it
    # opens is waited for until they come, up to the timeout, not only a quiet while (server.py's first_analysis).
    partial_until_diagnostics: bool = False

    def serves(self, path: Path) -> bool:
        return any(fnmatch.fnmatch(path.name, pattern) for pattern in self.patterns)

    def language_id(self, path: Path) -> str:
        return LANGUAGE_OF.get(path.suffix.lower(), self.languages[0])


def _known(
    name: str,
    command: tuple[str, ...],
    languages: tuple[str, ...],
    endings: tuple[str, ...],
    projects: tuple[str, ...] = (),
    partial_until_diagnostics: bool = False,
) -> ServerSpec:
    return ServerSpec(
        name,
        command,
        languages,
        tuple(f"*{ending}" for ending in endings),
        projects=projects,
        partial_until_diagnostics=partial_until_diagnostics,
    )


PY, TS = (".py", ".pyi"), (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
# By preference: the first found on PATH serves its languages.
KNOWN = (
    _known("basedpyright", ("basedpyright-langserver", "--stdio"), ("python",), PY),
    _known("pyright", ("pyright-langserver", "--stdio"), ("python",), PY),
    _known("ty", ("ty", "server"), ("python",), PY),
    _known("pylsp", ("pylsp",), ("python",), PY),
    _known(
        "typescript-language-server",
        ("typescript-language-server", "--stdio"),
        ("typescript", "javascript"),
        TS,
        ("tsconfig.json", "jsconfig.json"),
        partial_until_diagnostics=True,
    ),
    _known("gopls", ("gopls",), ("go",), (".go",)),
    _known("rust-analyzer", ("rust-analyzer",), ("rust",), (".rs",)),
    _known("clangd", ("clangd",), ("c", "cpp"), (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh")),
)


class LspConfigError(ValueError):
    """The lsp setting is wrong; the message says where and why, in one sentence."""


def parse_setting(value: Any, source: str = "lsp") -> dict[str, ServerSpec | None]:
    """The lsp setting as servers by name; None for one turned off (``false``). Raises LspConfigError."""
    if not isinstance(value, dict):
        raise LspConfigError(f"{source}: lsp must be a table of servers by name.")
    servers: dict[str, ServerSpec | None] = {}
    for name, entry in value.items():
        where = f"{source}: lsp.{name}"
        if entry is False:
            servers[name] = None
            continue
        if not isinstance(entry, dict):
            raise LspConfigError(f"{where} must be a table (command, languages, patterns) or false.")
        unknown = set(entry) - {"command", "languages", "patterns", "initialization_options"}
        if unknown:
            raise LspConfigError(f"{where} has no setting {', '.join(sorted(unknown))}.")
        command, languages, patterns = entry.get("command"), entry.get("languages"), entry.get("patterns")
        if isinstance(command, str):
            command = [command]
        for key, got in (("command", command), ("languages", languages), ("patterns", patterns)):
            if not (isinstance(got, list) and got and all(isinstance(x, str) and x for x in got)):
                raise LspConfigError(f"{where}.{key} must be a list of strings, not {got!r}.")
        options = entry.get("initialization_options", {})
        if not isinstance(options, dict):
            raise LspConfigError(f"{where}.initialization_options must be a table.")
        assert isinstance(command, list) and isinstance(languages, list) and isinstance(patterns, list)
        servers[name] = ServerSpec(name, tuple(command), tuple(languages), tuple(patterns), options, configured=True)
    return servers


# What Claude Code's lspServers entry may hold beyond what is read here (its own timeouts and restarts: agentcli has
# its lsp_timeout and restarts once; its settings: agentcli answers workspace/configuration with nothing).
CLAUDE_CODE_IGNORED = {
    "transport",
    "settings",
    "workspaceFolder",
    "startupTimeout",
    "shutdownTimeout",
    "restartOnCrash",
    "maxRestarts",
    "loggingConfig",
}


def parse_claude_code(value: Any, source: str) -> dict[str, ServerSpec]:
    """Claude Code's ``lspServers`` (a plugin's ``.lsp.json`` or plugin.json's): ``{"name": {"command": …, "args":
    […], "extensionToLanguage": {".py": "python"}, "env": {…}, "initializationOptions": {…}}}`` as servers by
    name. Raises LspConfigError naming what is wrong; keys of newer Claude Codes are left unread."""
    if not isinstance(value, dict):
        raise LspConfigError(f"{source}: lspServers must be an object of servers by name.")
    servers: dict[str, ServerSpec] = {}
    for name, entry in value.items():
        where = f"{source}: lspServers.{name}"
        if not isinstance(entry, dict):
            raise LspConfigError(f"{where} must be an object (command, args, extensionToLanguage).")
        command, args = entry.get("command"), entry.get("args", [])
        extensions, env = entry.get("extensionToLanguage"), entry.get("env", {})
        options = entry.get("initializationOptions", {})
        if not (isinstance(command, str) and command.strip()):
            raise LspConfigError(f"{where}.command must be a program's name or path.")
        if not (isinstance(args, list) and all(isinstance(arg, str) for arg in args)):
            raise LspConfigError(f"{where}.args must be a list of strings.")
        if not (
            isinstance(extensions, dict)
            and extensions
            and all(
                isinstance(k, str) and k.startswith(".") and len(k) > 1 and "*" not in k and isinstance(v, str) and v
                for k, v in extensions.items()
            )
        ):
            raise LspConfigError(
                f'{where}.extensionToLanguage must map file endings to languages ({{".py": "python"}}).'
            )
        if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
            raise LspConfigError(f"{where}.env must map names to strings.")
        if not isinstance(options, dict):
            raise LspConfigError(f"{where}.initializationOptions must be an object.")
        if entry.get("transport", "stdio") != "stdio":
            raise LspConfigError(f"{where}.transport: only stdio is supported.")
        servers[name] = ServerSpec(
            name,
            (command, *args),
            tuple(dict.fromkeys(extensions.values())),
            tuple(f"*{ending}" for ending in extensions),
            options,
            configured=True,
            env=tuple(env.items()),
        )
    return servers


def available(
    setting: Any, on_path: bool = True, plugins: list[ServerSpec] | tuple[ServerSpec, ...] = ()
) -> list[ServerSpec]:
    """The servers this machine has: the configured ones, the plugins' (``plugins``) not named in the setting,
    then the known ones found on PATH (``on_path``), one per language, configured first."""
    configured = parse_setting(setting or {})
    chosen = [spec for spec in configured.values() if spec is not None]
    chosen += [spec for spec in plugins if spec.name not in configured]
    taken = {language for spec in chosen for language in spec.languages}
    if on_path:
        for spec in KNOWN:
            if spec.name in configured or taken.intersection(spec.languages):
                continue
            if program := shutil.which(spec.command[0]):
                chosen.append(replace(spec, command=(program, *spec.command[1:])))
                taken.update(spec.languages)
    return chosen
