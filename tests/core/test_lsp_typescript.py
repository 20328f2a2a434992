"""The lsp tool against typescript-language-server (from npm: `make test` installs it from
tests/lsp_typescript/package-lock.json), on a temporary TypeScript project; one server for the module."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_asyncio

from agentcli.core.lsp.server import LanguageServers
from agentcli.core.lsp.specs import ServerSpec
from agentcli.core.lsp.tool import EditDiagnostics, LspTool
from agentcli.core.system.sandbox import Sandbox
from agentcli.core.system.secret_env import command_env
from tests.core.test_lsp import context

SERVER = Path(__file__).parent.parent / "lsp_typescript" / "node_modules" / ".bin" / "typescript-language-server"
pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.skipif(not SERVER.exists(), reason="typescript-language-server is not installed "
                                 "(make test installs it with npm; without Node this test skips)")]

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
    root = tmp_path_factory.mktemp("lsp-typescript")
    (root / "tsconfig.json").write_text(json.dumps({"compilerOptions": {"strict": True, "noEmit": True},
                                                    "include": ["src"]}))
    (root / "src").mkdir()
    (root / "src" / "a.ts").write_text(A)
    (root / "src" / "b.ts").write_text(B)
    spec = ServerSpec("typescript-language-server", (str(SERVER), "--stdio"), ("typescript",), ("*.ts",))
    servers = LanguageServers([spec], root, command_env(), Sandbox("auto"), timeout=60)
    tool, ctx = LspTool(servers), context(root)
    # A cold tsserver answers its first questions from the opened file's own little project (an import's alias
    # as the definition, no other file's references) while it loads tsconfig's: ask one first.
    await tool.run({"operation": "references", "path": "src/b.ts", "line": 4, "symbol": "handleRequest"}, ctx)
    yield servers, tool, ctx
    await servers.stop()


async def test_definition_references_hover_and_symbols(typescript):
    _, tool, ctx = typescript
    found = await tool.run({"operation": "references", "path": "src/a.ts", "line": 1, "symbol": "handleRequest"}, ctx)
    assert found.splitlines() == [  # not the comment, not Server's method of the same name
        "references of `handleRequest`: 3 places", "src/a.ts:1: export function handleRequest(x: number): number {",
        'src/b.ts:1: import { handleRequest } from "./a";',
        "src/b.ts:4: export const total: number = handleRequest(2) + handleRequest(3);"]
    # (a cold tsserver's first definition in a file gives the import's alias; after the references it is the function)
    found = await tool.run({"operation": "definition", "path": "src/b.ts", "line": 4, "symbol": "handleRequest"}, ctx)
    assert found.splitlines() == ["definition of `handleRequest`: 1 definition",
                                  "src/a.ts:1: export function handleRequest(x: number): number {"]
    found = await tool.run({"operation": "hover", "path": "src/b.ts", "line": 4, "symbol": "handleRequest"}, ctx)
    assert "handleRequest(x: number): number" in found.splitlines()[2]
    found = await tool.run({"operation": "document_symbols", "path": "src/a.ts"}, ctx)
    assert found.splitlines()[:4] == ["symbols of src/a.ts: 3", "src/a.ts:1: function handleRequest",
                                      "src/a.ts:5: class Server", "src/a.ts:6:   method handleRequest"]
    found = await tool.run({"operation": "workspace_symbols", "symbol": "Server"}, ctx)
    assert "src/a.ts:5: class Server" in found.splitlines()


async def test_an_edit_that_breaks_a_type_reports_the_new_error(typescript):
    servers, _, ctx = typescript
    path = ctx.workspace.root / "src" / "b.ts"
    watch = EditDiagnostics(servers, wait=60)  # a loaded machine's tsserver may take seconds: wait for its word
    before = watch.before_edit(path)
    path.write_text(B.replace("handleRequest(3)", 'handleRequest("3")'))
    added = await watch.after_edit(path, before, ctx)
    assert added.splitlines()[2] == "New errors typescript-language-server reports in this file since the edit:"
    assert added.splitlines()[3].startswith("src/b.ts:4: Argument of type 'string' is not assignable")
