"""The ``lsp`` tool: a language server's answers about a symbol, as grep-like ``path:line: text`` lines; and the
new errors a server reports after an edit (``EditDiagnostics``), added to edit_file's and write_file's result.

A position is what the model has: a path, a line and a symbol name on that line (the column is found here).
Its first line says what was looked up and how much was found ("references of `run`: 14 places"): a child's
receipt records it (``core/engine/subagent_record.py``).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import ToolError
from ..system.secret_env import command_env
from ..system.workspace import OutsideWorkspace
from ..tools.base import Tool, ToolContext
from ..tools.rg import COMMON_RG_ARGS, GREP_CHAR_BUDGET, GREP_MAX_LINES, rg_path

if TYPE_CHECKING:
    from .specs import ServerSpec

from .server import SETTLE, LanguageServer, LanguageServers, LspUnavailable, path_of

OPERATIONS = ("definition", "references", "hover", "document_symbols", "workspace_symbols", "diagnostics")
NEEDS_POSITION = ("definition", "references", "hover")
DEFINED_TIMEOUT = 30.0  # seconds rg may take to find a symbol's definition by name
NEARBY = 3  # lines either side searched for the symbol when it is not on the line given
LINE_CAP = 200  # characters of a line shown
HOVER_CAP = 3_000
DIAGNOSTICS_WAIT = 3.0  # seconds an edit waits for a warm server's diagnostics
FIRST_ANALYSIS_WAIT = 15.0  # … and for a server's first analysis of the file (a cold start)
MORE_PASSES = 5  # publications of one file after an edit that are awaited, each for SETTLE seconds at most
NEW_ERRORS_SHOWN = 10
KINDS = {
    1: "file",
    2: "module",
    3: "namespace",
    4: "package",
    5: "class",
    6: "method",
    7: "property",
    8: "field",
    9: "constructor",
    10: "enum",
    11: "interface",
    12: "function",
    13: "variable",
    14: "constant",
    22: "enum member",
    23: "struct",
    24: "event",
    25: "operator",
    26: "type parameter",
}
SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}
METHODS = {
    "definition": "textDocument/definition",
    "references": "textDocument/references",
    "hover": "textDocument/hover",
    "document_symbols": "textDocument/documentSymbol",
    "workspace_symbols": "workspace/symbol",
}
PROVIDERS = {
    "definition": "definitionProvider",
    "references": "referencesProvider",
    "hover": "hoverProvider",
    "document_symbols": "documentSymbolProvider",
    "workspace_symbols": "workspaceSymbolProvider",
}


class LspTool(Tool):
    name = "lsp"
    built_in_types = ("explore",)  # the read-only scout is given it
    list_place = 7  # its place when a built-in agent type's tools are listed
    claude_name = "LSP"
    receipt = "lookup"
    kind = "read"
    key_arg = "symbol"
    brief = "Language server: definition, references, hover, symbols, diagnostics"
    description: ClassVar[str] = (
        "Ask the language server about code: a symbol's definition, its references (callers), hover (type and "
        "docs), a file's symbols, symbols by name across the workspace, a file's diagnostics. Answers are "
        "path:line: text. Prefer it to grep for a symbol; grep for text."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": list(OPERATIONS)},
            "path": {"type": "string", "description": "The file; without path and line, the symbol's definition."},
            "line": {"type": "integer", "minimum": 1, "description": "The 1-based line the symbol is on."},
            "symbol": {"type": "string", "description": "The name on that line; for workspace_symbols, the query."},
        },
        "required": ["operation"],
    }

    def __init__(self, servers: LanguageServers) -> None:
        self.servers = servers

    def summary(self, args: dict[str, Any]) -> str:
        what = " ".join(str(args.get(k)) for k in ("symbol", "path") if args.get(k))
        return f"{args.get('operation', '')} {what}".strip()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        operation, symbol = str(args["operation"]), str(args.get("symbol") or "").strip()
        if operation == "workspace_symbols":
            if not symbol:
                raise ToolError("lsp workspace_symbols needs a symbol: the name to look for.")
            return await self._workspace_symbols(symbol, ctx)
        found_at = ""
        if operation in NEEDS_POSITION and not args.get("path") and symbol:  # found by its definition's name
            path, line, others = await asyncio.to_thread(self._defined, symbol, ctx)
            args, found_at = (
                {**args, "path": str(path), "line": line},
                f" (defined at {ctx.workspace.relative(path)}:{line}"
                + (
                    f"; {_count(others, 'more definition')} of that name: give path and line for another)"
                    if others
                    else ")"
                ),
            )
        path = self._path(args, ctx)
        server = self.servers.for_path(path)
        if server is None:
            raise ToolError(
                f"No language server here serves {path.name} (the servers serve: "
                f"{', '.join(self.servers.languages()) or 'nothing'}); use grep."
            )
        try:
            answer = await self._ask(operation, path, symbol, args, server, ctx)
            head, _, rest = answer.partition("\n")
            return head + found_at + ("\n" + rest if rest else "")
        except LspUnavailable as exc:
            raise ToolError(f"The language server gave no answer: {exc}; use grep and read_file instead.") from None

    def _defined(self, symbol: str, ctx: ToolContext) -> tuple[Path, int, int]:
        """Where ``symbol`` is defined, by name (rg, in files a server serves): the first place, and how many
        others there are. Blocking: run it in a thread."""
        rg = rg_path()
        if rg is None or not re.fullmatch(r"[\w$]+", symbol):
            raise ToolError(f"lsp needs a path and line for `{symbol}`.")
        pattern = (
            rf"^\s*(export\s+)?(default\s+)?(async\s+)?(def|class|function|func|fn|interface|type|struct|enum|"
            rf"const|let|var)\s+{symbol}\b"
        )
        globs = [arg for spec in self.servers.specs for pattern_ in spec.patterns for arg in ("--glob", pattern_)]
        try:
            done = subprocess.run(
                [rg, *COMMON_RG_ARGS, "-n", "--no-heading", "--sort", "path", *globs, "-e", pattern, "."],
                cwd=ctx.workspace.root,
                capture_output=True,
                text=True,
                timeout=DEFINED_TIMEOUT,
                env=command_env(),
            )
        except (OSError, subprocess.TimeoutExpired):
            done = None
        places = []
        for hit in done.stdout.splitlines() if done is not None else []:
            name, number, _ = hit.split(":", 2)
            places.append((ctx.workspace.root / name.removeprefix("./"), int(number)))
        if not places:
            raise ToolError(
                f"No definition of `{symbol}` was found by its name; give the path and line of a place that uses it."
            )
        return places[0][0], places[0][1], len(places) - 1

    def _path(self, args: dict[str, Any], ctx: ToolContext) -> Path:
        given = args.get("path")
        if not isinstance(given, str) or not given.strip():
            raise ToolError(f"lsp {args['operation']} needs a path.")
        try:
            path = ctx.workspace.resolve(given)
        except OutsideWorkspace:
            raise ToolError(f"{given} is outside the workspace.") from None
        if not path.is_file():
            raise ToolError(f"{given} is not a file.")
        if denied(ctx, path):
            raise ToolError(f"{given} is covered by a deny rule ({denied(ctx, path)}), so lsp does not read it.")
        return path

    async def _ask(
        self, operation: str, path: Path, symbol: str, args: dict[str, Any], server: LanguageServer, ctx: ToolContext
    ) -> str:
        from lsprotocol import types

        uri = await server.sync(path)
        shown = ctx.workspace.relative(path)
        if operation == "diagnostics":
            if server.published.get(uri, 0) == 0:
                await server.wait_published(uri, 0, FIRST_ANALYSIS_WAIT)
            found = server.diagnostics.get(uri, [])
            lines = [f"{shown}:{_line(d) + 1}: {_severity(d)}: {_message(d)}" for d in found]
            return _listed(f"diagnostics of {shown}: {_count(len(lines), 'problem')}", sorted(lines, key=_line_key))
        if not server.capabilities.get(PROVIDERS[operation]):
            raise ToolError(f"{server.spec.name} does not answer {operation.replace('_', ' ')}; use grep.")
        document = types.TextDocumentIdentifier(uri=uri)
        if operation == "document_symbols":
            reply = await server.request(METHODS[operation], types.DocumentSymbolParams(text_document=document))
            lines = _symbol_lines(reply or [], shown, path, ctx)
            return _listed(f"symbols of {shown}: {len(lines)}", lines)
        position, line = _position(path, int(args.get("line") or 0), symbol, operation)
        where = types.Position(line=position[0], character=position[1])
        if operation == "hover":
            reply = await server.request(METHODS[operation], types.HoverParams(text_document=document, position=where))
            text = _hover_text((reply or {}).get("contents")) if isinstance(reply, dict) else ""
            head = f"hover of `{symbol}` ({shown}:{line})"
            return f"{head}:\n{text[:HOVER_CAP]}" if text else f"{head}: the server knows nothing about it."
        if operation == "definition":
            params: Any = types.DefinitionParams(text_document=document, position=where)
        else:
            params = types.ReferenceParams(
                text_document=document, position=where, context=types.ReferenceContext(include_declaration=True)
            )
        reply = await server.request(METHODS[operation], params)
        places = _location_lines(reply, ctx)
        noun = "definition" if operation == "definition" else "place"
        unseen = _no_project(server.spec, path, shown) if operation == "references" else ""
        return _listed(f"{operation} of `{symbol}`: {_count(len(places), noun)}", places) + unseen

    async def _workspace_symbols(self, query: str, ctx: ToolContext) -> str:
        from lsprotocol import types

        lines: list[str] = []
        told: list[str] = []
        present = await self.servers.with_files()
        if not present:
            raise ToolError(
                f"The workspace holds no file the language servers serve (they serve: "
                f"{', '.join(self.servers.languages()) or 'nothing'}); use grep."
            )
        for spec in present:
            server = self.servers.for_path(Path(spec.patterns[0].replace("*", "x")))
            if server is None:
                continue
            try:
                await server.ready()
                if not server.capabilities.get("workspaceSymbolProvider"):
                    told.append(f"{spec.name} does not answer workspace symbols")
                    continue
                reply = await server.request("workspace/symbol", types.WorkspaceSymbolParams(query=query))
            except LspUnavailable as exc:
                told.append(str(exc))
                continue
            for item in reply or []:
                location = item.get("location") or {}
                path = path_of(str(location.get("uri", "")))
                if path is None or not ctx.workspace.contains(path.resolve()) or denied(ctx, path):
                    continue
                line = int(((location.get("range") or {}).get("start") or {}).get("line", 0)) + 1
                container = f" (in {item['containerName']})" if item.get("containerName") else ""
                lines.append(
                    f"{ctx.workspace.relative(path)}:{line}: {KINDS.get(item.get('kind'), 'symbol')} "
                    f"{item.get('name')}{container}"
                )
        if not lines and told:
            raise ToolError("; ".join(told) + "; use grep.")
        return _listed(f"workspace_symbols of `{query}`: {_count(len(lines), 'symbol')}", sorted(lines, key=_line_key))


def denied(ctx: ToolContext, path: Path) -> str:
    """The read deny rule (``Read(secrets/**)``) that covers ``path``; "" when none does."""
    return ctx.permissions.read_denial(path, ctx.workspace.root) if ctx.permissions is not None else ""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _position(path: Path, line: int, symbol: str, operation: str) -> tuple[tuple[int, int], int]:
    """((0-based line, column), the 1-based line used) of ``symbol`` on ``line`` or the nearest line to it."""
    if not symbol or line < 1:
        raise ToolError(f"lsp {operation} needs a line and the symbol on it.")
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if line > len(text):
        raise ToolError(f"{path.name} has {len(text)} lines, not {line}.")
    word = re.compile(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])")
    for distance in range(NEARBY + 1):
        for candidate in {line - distance, line + distance}:
            if 1 <= candidate <= len(text) and (found := word.search(text[candidate - 1])):
                return (candidate - 1, found.start()), candidate
    raise ToolError(
        f"`{symbol}` is not on line {line} of {path.name} (nor within {NEARBY} lines); "
        f"line {line} reads: {text[line - 1].strip()[:LINE_CAP]}"
    )


class _Lines:
    """Files' lines, each read once per answer; only files inside the workspace are read."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.read: dict[Path, list[str]] = {}

    def text(self, path: Path, line: int) -> str:
        if path not in self.read:
            try:
                inside = self.ctx.workspace.contains(path.resolve())
                self.read[path] = path.read_text(encoding="utf-8", errors="replace").splitlines() if inside else []
            except OSError:
                self.read[path] = []
        lines = self.read[path]
        return lines[line].strip()[:LINE_CAP] if 0 <= line < len(lines) else ""


def _location_lines(reply: Any, ctx: ToolContext) -> list[str]:
    items = reply if isinstance(reply, list) else [reply] if isinstance(reply, dict) else []
    lines = _Lines(ctx)
    inside: list[tuple[str, int, str]] = []
    outside: list[tuple[str, int, str]] = []
    for item in items:
        uri = item.get("uri") or item.get("targetUri")
        where = item.get("range") or item.get("targetSelectionRange") or {}
        path = path_of(str(uri or ""))
        if path is None:
            continue
        line = int((where.get("start") or {}).get("line", 0))
        if denied(ctx, path):  # a deny rule keeps the file's lines from every tool that reads: left out
            continue
        if ctx.workspace.contains(path.resolve()):
            inside.append((ctx.workspace.relative(path), line + 1, lines.text(path, line)))
        else:
            outside.append((str(path), line + 1, ""))
    return [f"{p}:{n}: {t}" if t else f"{p}:{n}" for p, n, t in [*sorted(set(inside)), *sorted(set(outside))]]


def _symbol_lines(reply: list[Any], shown: str, path: Path, ctx: ToolContext) -> list[str]:
    out: list[str] = []

    def walk(items: list[Any], depth: int) -> None:
        for item in sorted(items, key=lambda i: _start(i)):
            detail = f" {item['detail']}" if item.get("detail") and len(str(item["detail"])) < 80 else ""
            out.append(
                f"{shown}:{_start(item) + 1}: {'  ' * depth}{KINDS.get(item.get('kind'), 'symbol')} "
                f"{item.get('name')}{detail}"
            )
            walk(item.get("children") or [], depth + 1)

    walk([i for i in reply if isinstance(i, dict)], 0)
    return out


def _start(item: dict[str, Any]) -> int:
    where = item.get("selectionRange") or item.get("range") or (item.get("location") or {}).get("range") or {}
    return int((where.get("start") or {}).get("line", 0))


def _hover_text(contents: Any) -> str:
    if isinstance(contents, str):
        return contents.strip()
    if isinstance(contents, dict):
        return str(contents.get("value") or "").strip()
    if isinstance(contents, list):
        return "\n".join(filter(None, (_hover_text(part) for part in contents)))
    return ""


def _line(diagnostic: dict[str, Any]) -> int:
    return int(((diagnostic.get("range") or {}).get("start") or {}).get("line", 0))


def _severity(diagnostic: dict[str, Any]) -> str:
    return SEVERITY.get(diagnostic.get("severity") or 1, "error")


def _message(diagnostic: dict[str, Any]) -> str:
    source = f" [{diagnostic['source']}]" if diagnostic.get("source") else ""
    return " ".join(str(diagnostic.get("message", "")).split())[:LINE_CAP] + source


def _line_key(text: str) -> tuple[str, int, str]:
    path, _, rest = text.partition(":")
    number, _, tail = rest.partition(":")
    return (path, int(number) if number.isdigit() else 0, tail)


def _no_project(spec: ServerSpec, path: Path, shown: str) -> str:
    """A note when no project file of the server's (tsconfig.json) is in ``path``'s folder or above it: the server
    then knows only the open files and what they import, and misses the references of every other file."""
    if not spec.projects or any((folder / name).is_file() for folder in path.parents for name in spec.projects):
        return ""
    return (
        f"\n[{spec.name} found no {' or '.join(spec.projects)} in {shown}'s folder or above it, so its project "
        "is the open files and what they import: references in other files are missing; grep for the rest]"
    )


def _listed(head: str, lines: list[str]) -> str:
    """``head``, then the lines, capped like grep's."""
    shown, size = [], 0
    for line in lines[:GREP_MAX_LINES]:
        size += len(line) + 1
        if size > GREP_CHAR_BUDGET:
            break
        shown.append(line)
    more = f"\n[{len(lines) - len(shown)} more not shown]" if len(shown) < len(lines) else ""
    return "\n".join([head, *shown]) + more


class EditDiagnostics:
    """After edit_file or write_file: the errors the file's server reports that it did not report before."""

    def __init__(self, servers: LanguageServers, wait: float = DIAGNOSTICS_WAIT) -> None:
        self.servers = servers
        self.wait = wait  # seconds a warm server gets to publish the edited file's diagnostics

    def before_edit(self, path: Path) -> str | None:
        """The file's text before the edit, when a server that can still start serves it (else None: no check)."""
        server = self.servers.for_path(path)
        if server is None or server.failed:
            return None
        try:
            return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        except OSError:
            return None

    async def after_edit(self, path: Path, before: str | None, ctx: ToolContext) -> str:
        server = self.servers.for_path(path)
        if before is None or server is None:
            return ""
        try:
            return await self._new_errors(server, path, before, ctx)
        except LspUnavailable as exc:
            return f"\n\n(No check by the language server: {exc}.)"

    async def _new_errors(self, server: LanguageServer, path: Path, before: str, ctx: ToolContext) -> str:
        cold = not server.alive
        await server.ready()
        uri = path.as_uri()
        if uri not in server.documents and before:  # what it reported before the edit, from the text before it
            server.open_text(path, before)
            await server.first_analysis(uri)
        old = Counter(_message(d) for d in server.diagnostics.get(uri, []) if _severity(d) == "error")
        seen = server.published.get(uri, 0)
        await server.sync(path)
        if not await server.wait_published(uri, seen, FIRST_ANALYSIS_WAIT if cold else self.wait):
            return ""
        for _ in range(MORE_PASSES):  # a syntactic pass, then a semantic one (tsserver): the last word counts
            if not await server.wait_published(uri, server.published.get(uri, 0), SETTLE):
                break
        new = []
        for diagnostic in sorted(server.diagnostics.get(uri, []), key=_line):
            message = _message(diagnostic)
            if _severity(diagnostic) != "error":
                continue
            if old[message] > 0:
                old[message] -= 1
                continue
            new.append(f"{ctx.workspace.relative(path)}:{_line(diagnostic) + 1}: {message}")
        if not new:
            return ""
        more = (
            f"\n… and {len(new) - NEW_ERRORS_SHOWN} more (lsp diagnostics lists them)"
            if len(new) > NEW_ERRORS_SHOWN
            else ""
        )
        return (
            f"\n\nNew errors {server.spec.name} reports in this file since the edit:\n"
            + "\n".join(new[:NEW_ERRORS_SHOWN])
            + more
        )


def language_servers(
    setting: dict[str, Any],
    discover: bool,
    plugins: tuple[ServerSpec, ...],
    timeout: float,
    root: Path,
    env: Mapping[str, str] | Callable[[], Mapping[str, str]],
    sandbox: Any,
    on_progress: Callable[[str], None] | None = None,
) -> LanguageServers:
    """The session's servers: those the settings name (``lsp``), the plugins bring, or PATH has (``lsp_discover``),
    each file checked at use (present.py says why). A bad ``lsp`` setting was refused when the settings loaded
    (config.py)."""
    from .specs import available

    try:
        specs = available(setting, discover, plugins)
    except ValueError:
        specs = []
    return LanguageServers(specs, root, env, sandbox, timeout=timeout, on_progress=on_progress)
