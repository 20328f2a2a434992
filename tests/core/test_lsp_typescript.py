"""The lsp tool against typescript-language-server (from npm: `make test` installs it from
tests/lsp_typescript/package-lock.json), on a temporary TypeScript project; one server for the module."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio

from agentcli.core.lsp import server as lsp_server
from agentcli.core.lsp.server import LanguageServers
from agentcli.core.lsp.specs import KNOWN
from agentcli.core.lsp.tool import EditDiagnostics, LspTool
from agentcli.core.system.sandbox import Sandbox
from agentcli.core.system.secret_env import command_env
from tests.core.test_lsp import context

SERVER = Path(__file__).parent.parent / "lsp_typescript" / "node_modules" / ".bin" / "typescript-language-server"
pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(
        not SERVER.exists(),
        reason="typescript-language-server is not installed "
        "(make test installs it with npm; without Node this test skips)",
    ),
]

A = """export function handleRequest(x: number): number {
  return x + 1;
}

export class Server {
  handleRequest(y: string): string {
    return y;
  }
}
"""
B = """import { handleRequest } from "./a";

// handleRequest in a comment
export const total: number = handleRequest(2) + handleRequest(3);
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def typescript(tmp_path_factory):
    root = tmp_path_factory.mktemp("lsp-typescript")  # a project in app/ (its tsconfig.json), loose files in loose/
    (root / "app" / "src").mkdir(parents=True)
    (root / "app" / "tsconfig.json").write_text(
        json.dumps({"compilerOptions": {"strict": True, "noEmit": True}, "include": ["src"]})
    )
    (root / "loose").mkdir()
    for folder in (root / "app" / "src", root / "loose"):
        (folder / "a.ts").write_text(A)
        (folder / "b.ts").write_text(B)
    known = next(spec for spec in KNOWN if spec.name == "typescript-language-server")
    spec = replace(known, command=(str(SERVER), "--stdio"))
    servers = LanguageServers([spec], root, command_env(), Sandbox("auto"), timeout=60)
    tool, ctx = LspTool(servers), context(root)
    # Asked at once, with no quiet while allowed (OPEN_WAIT 0): a cold typescript-language-server answers from
    # tsserver's syntax server, which knows only the open file, until its first diagnostics of it; the tool waits.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lsp_server, "OPEN_WAIT", 0.0)
        cold = await tool.run(
            {"operation": "references", "path": "app/src/b.ts", "line": 4, "symbol": "handleRequest"}, ctx
        )
    yield servers, tool, ctx, cold
    await servers.stop()


REFERENCES = [  # not the comment, not Server's method of the same name
    "references of `handleRequest`: 3 places",
    "app/src/a.ts:1: export function handleRequest(x: number): number {",
    'app/src/b.ts:1: import { handleRequest } from "./a";',
    "app/src/b.ts:4: export const total: number = handleRequest(2) + handleRequest(3);",
]


async def test_a_cold_servers_first_references_come_from_the_whole_project(typescript):
    *_, cold = typescript
    assert cold.splitlines() == REFERENCES  # not b.ts's two places alone


async def test_definition_references_hover_and_symbols(typescript):
    _, tool, ctx, _ = typescript
    found = await tool.run(
        {"operation": "references", "path": "app/src/a.ts", "line": 1, "symbol": "handleRequest"}, ctx
    )
    assert found.splitlines() == REFERENCES
    # (tsserver's syntax server gives the import's alias as the definition: the semantic one gives the function)
    found = await tool.run(
        {"operation": "definition", "path": "app/src/b.ts", "line": 4, "symbol": "handleRequest"}, ctx
    )
    assert found.splitlines() == [
        "definition of `handleRequest`: 1 definition",
        "app/src/a.ts:1: export function handleRequest(x: number): number {",
    ]
    found = await tool.run({"operation": "hover", "path": "app/src/b.ts", "line": 4, "symbol": "handleRequest"}, ctx)
    assert "handleRequest(x: number): number" in found.splitlines()[2]
    found = await tool.run({"operation": "document_symbols", "path": "app/src/a.ts"}, ctx)
    assert found.splitlines()[:4] == [
        "symbols of app/src/a.ts: 3",
        "app/src/a.ts:1: function handleRequest",
        "app/src/a.ts:5: class Server",
        "app/src/a.ts:6:   method handleRequest",
    ]
    found = await tool.run({"operation": "workspace_symbols", "symbol": "Server"}, ctx)
    assert "app/src/a.ts:5: class Server" in found.splitlines()


async def test_references_without_a_tsconfig_say_that_other_files_are_missing(typescript):
    # Without a tsconfig.json above it, tsserver's project of a file is the open files and what they import: b.ts,
    # which imports a.ts, is not among them however long it is given, so its two places are missing; the answer says so.
    _, tool, ctx, _ = typescript
    found = await tool.run({"operation": "references", "path": "loose/a.ts", "line": 1, "symbol": "handleRequest"}, ctx)
    assert found.splitlines() == [
        "references of `handleRequest`: 1 place",
        "loose/a.ts:1: export function handleRequest(x: number): number {",
        "[typescript-language-server found no tsconfig.json or jsconfig.json in loose/a.ts's folder or above it, so its "
        "project is the open files and what they import: references in other files are missing; grep for the rest]",
    ]


async def test_an_edit_that_breaks_a_type_reports_the_new_error(typescript):
    servers, _, ctx, _ = typescript
    path = ctx.workspace.root / "app" / "src" / "b.ts"
    watch = EditDiagnostics(servers, wait=60)  # a loaded machine's tsserver may take seconds: wait for its word
    before = watch.before_edit(path)
    path.write_text(B.replace("handleRequest(3)", 'handleRequest("3")'))
    added = await watch.after_edit(path, before, ctx)
    assert added.splitlines()[2] == "New errors typescript-language-server reports in this file since the edit:"
    assert added.splitlines()[3].startswith("app/src/b.ts:4: Argument of type 'string' is not assignable")
