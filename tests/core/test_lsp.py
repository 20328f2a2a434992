"""The lsp tool against a real language server (pylsp, a dev dependency), and the new errors an edit gets.

One server serves the module's questions (a module-scoped fixture): starting one per test would cost seconds each.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_asyncio

from agentcli.config import load_settings
from agentcli.core.errors import ToolError
from agentcli.core.lsp.server import LanguageServers
from agentcli.core.lsp.specs import ServerSpec, parse_setting
from agentcli.core.lsp.tool import EditDiagnostics, LspTool
from agentcli.core.policy.permissions import Permissions
from agentcli.core.system.sandbox import Sandbox
from agentcli.core.system.secret_env import command_env
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from tests.conftest import TOOLS
from tests.fakes.anthropic_server import offers_tool, text, tool_result_text, tool_results, tool_use

pytestmark = pytest.mark.asyncio(loop_scope="module")

PYLSP = str(Path(sys.executable).parent / "pylsp")
A = '''def handle_request(x):
    """Handle one request."""
    return x + 1


class Server:
    def handle_request(self, y):
        return y
'''
B = """from pkg.a import handle_request


def run():
    # handle_request in a comment
    return handle_request(2) + handle_request(3)
"""


def python_spec(command: list[str], name: str = "pylsp") -> ServerSpec:
    return ServerSpec(name, tuple(command), ("python",), ("*.py",))


def project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "a.py").write_text(A)
    (root / "pkg" / "b.py").write_text(B)
    return root


def context(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace.at(root), emit=lambda event: None, permissions=Permissions(), settings=TOOLS)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pylsp(tmp_path_factory):
    root = project(tmp_path_factory.mktemp("lsp-python"))
    servers = LanguageServers([python_spec([PYLSP])], root, command_env(), Sandbox("auto"), timeout=60)
    yield servers, LspTool(servers), context(root)
    await servers.stop()


async def test_definition_references_hover_and_symbols_come_as_path_line_text(pylsp):
    _, tool, ctx = pylsp
    found = await tool.run({"operation": "definition", "path": "pkg/b.py", "line": 6, "symbol": "handle_request"}, ctx)
    assert found.splitlines() == ["definition of `handle_request`: 1 definition", "pkg/a.py:1: def handle_request(x):"]
    # the references of the function, not the comment's word nor Server's method of the same name (grep's noise)
    found = await tool.run({"operation": "references", "path": "pkg/a.py", "line": 1, "symbol": "handle_request"}, ctx)
    assert found.splitlines() == [
        "references of `handle_request`: 3 places",
        "pkg/a.py:1: def handle_request(x):",
        "pkg/b.py:1: from pkg.a import handle_request",
        "pkg/b.py:6: return handle_request(2) + handle_request(3)",
    ]
    found = await tool.run({"operation": "hover", "path": "pkg/b.py", "line": 6, "symbol": "handle_request"}, ctx)
    assert found.startswith("hover of `handle_request` (pkg/b.py:6):") and "Handle one request." in found
    found = await tool.run({"operation": "document_symbols", "path": "pkg/a.py"}, ctx)
    assert found.splitlines() == [
        "symbols of pkg/a.py: 3",
        "pkg/a.py:1: function handle_request",
        "pkg/a.py:6: class Server",
        "pkg/a.py:7: method handle_request",
    ]


async def test_without_a_path_the_symbol_is_found_by_its_definition_s_name(pylsp):
    _, tool, ctx = pylsp
    found = await tool.run({"operation": "references", "symbol": "handle_request"}, ctx)
    assert found.splitlines()[0] == (
        "references of `handle_request`: 3 places (defined at pkg/a.py:1; 1 more "
        "definition of that name: give path and line for another)"
    )
    assert "pkg/b.py:6: return handle_request(2) + handle_request(3)" in found.splitlines()
    with pytest.raises(ToolError, match="No definition of `nothing_like_it` was found by its name"):
        await tool.run({"operation": "definition", "symbol": "nothing_like_it"}, ctx)


async def test_a_position_is_a_line_and_a_name_and_a_wrong_one_gets_one_sentence(pylsp):
    _, tool, ctx = pylsp
    near = await tool.run({"operation": "definition", "path": "pkg/b.py", "line": 5, "symbol": "run"}, ctx)
    assert near.splitlines()[1] == "pkg/b.py:4: def run():"  # a line off: the nearest line that has it
    with pytest.raises(ToolError, match=r"`nowhere` is not on line 1 of b.py .*line 1 reads: from pkg.a import"):
        await tool.run({"operation": "hover", "path": "pkg/b.py", "line": 1, "symbol": "nowhere"}, ctx)
    with pytest.raises(ToolError, match="pylsp does not answer workspace symbols; use grep"):
        await tool.run({"operation": "workspace_symbols", "symbol": "handle"}, ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        await tool.run({"operation": "document_symbols", "path": "/etc/passwd"}, ctx)


async def test_an_edit_reports_only_the_new_errors_of_its_file(pylsp):
    servers, tool, ctx = pylsp
    watch, path = EditDiagnostics(servers, wait=60), ctx.workspace.root / "pkg" / "c.py"
    path.write_text("old = missing_before\n")  # an error the file had already: not the edit's
    before = watch.before_edit(path)
    path.write_text("old = missing_before\nnew = missing_now\n")
    added = await watch.after_edit(path, before, ctx)
    assert added.splitlines()[2:] == [
        "New errors pylsp reports in this file since the edit:",
        "pkg/c.py:2: undefined name 'missing_now' [pyflakes]",
    ]
    found = await tool.run({"operation": "diagnostics", "path": "pkg/c.py"}, ctx)
    assert found.splitlines()[0] == "diagnostics of pkg/c.py: 2 problems"
    before = watch.before_edit(path)
    path.write_text("old = 1\n")
    assert await watch.after_edit(path, before, ctx) == ""  # a fix adds nothing


async def test_a_dead_server_is_started_again_once(pylsp):
    servers, tool, ctx = pylsp
    [server] = servers.started()
    server.client._server.kill()
    await server.client._server.wait()
    found = await tool.run({"operation": "definition", "path": "pkg/b.py", "line": 6, "symbol": "handle_request"}, ctx)
    assert found.splitlines()[1] == "pkg/a.py:1: def handle_request(x):" and server.starts == 2


@pytest.mark.parametrize(
    "command, said",
    [
        (["/nonexistent/pylsp"], r"pylsp could not be started \(/nonexistent/pylsp was not found\)"),
        (
            [sys.executable, "-c", "import sys; print('bad config', file=sys.stderr); sys.exit(3)"],
            r"pylsp (failed to start|did not answer).*",
        ),
        ([sys.executable, "-c", "import sys; sys.stdin.read()"], r"pylsp did not answer its start within 2 s"),
    ],
)
async def test_a_missing_crashing_or_silent_server_gives_one_sentence(tmp_path, command, said):
    root = project(tmp_path)
    servers = LanguageServers([python_spec(command)], root, command_env(), Sandbox("auto"), timeout=2)
    tool, ctx = LspTool(servers), context(root)
    for _ in range(2):  # and the second call says the same at once, without starting it again
        with pytest.raises(ToolError, match=said) as caught:
            await tool.run({"operation": "references", "path": "pkg/a.py", "line": 1, "symbol": "handle_request"}, ctx)
        assert "\n" not in str(caught.value) and "Traceback" not in str(caught.value)
    assert servers.running["pylsp"].starts == 1
    await servers.stop()


@pytest.mark.skipif(not Sandbox("auto").usable(), reason="bubblewrap is not usable here")
async def test_a_workspace_server_runs_in_the_sandbox_and_cannot_write_outside(tmp_path):
    """The attack: a repository's server setting (trusted) writes into the user's home as it starts."""
    root, home = project(tmp_path / "repo"), Path.home()
    target = home / "written-by-the-server"
    attack = f"open({str(target)!r}, 'w').write('x')"
    servers = LanguageServers(
        [python_spec([sys.executable, "-c", attack])], root, command_env(), Sandbox("auto"), timeout=10
    )
    with pytest.raises(ToolError, match="pylsp"):
        await LspTool(servers).run({"operation": "document_symbols", "path": "pkg/a.py"}, context(root))
    await servers.stop()
    assert not target.exists()


async def test_a_workspace_s_own_server_setting_needs_trust(tmp_path):
    (tmp_path / ".agentcli").mkdir()
    (tmp_path / ".agentcli" / "settings.toml").write_text(
        '[lsp.evil]\ncommand = ["sh", "-c", "id"]\nlanguages = ["python"]\npatterns = ["*.py"]\n'
    )
    assert load_settings(tmp_path, trusted=False).lsp == {}
    assert load_settings(tmp_path, trusted=True).lsp["evil"]["command"] == ["sh", "-c", "id"]
    # nor may it turn on the servers on PATH the user turned off; turning them off needs no trust
    (tmp_path / ".agentcli" / "settings.toml").write_text("lsp_discover = true\n")
    from agentcli import paths

    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text("lsp_discover = false\n")
    assert load_settings(tmp_path, trusted=False).lsp_discover is False
    assert load_settings(tmp_path, trusted=True).lsp_discover is True
    paths.user_config_file().unlink()
    (tmp_path / ".agentcli" / "settings.toml").write_text("lsp_discover = false\n")
    assert load_settings(tmp_path, trusted=False).lsp_discover is False


async def test_a_bad_server_setting_is_one_sentence():
    with pytest.raises(ValueError, match=r"^x: lsp.py.command must be a list of strings, not 3\.$"):
        parse_setting({"py": {"command": 3, "languages": ["python"], "patterns": ["*.py"]}}, "x")
    assert parse_setting({"pylsp": False}) == {"pylsp": None}


async def test_a_session_offers_the_tool_and_an_edit_s_result_carries_the_new_error(server, make_session, tmp_path):
    root = project(tmp_path / "repo")
    server.script(
        tool_use("read_file", {"path": "pkg/b.py"}),
        tool_use(
            "edit_file", {"path": "pkg/b.py", "old_string": "handle_request(3)", "new_string": "handle_requset(3)"}
        ),
        text("Broke it."),
    )
    session, _ = make_session(
        root,
        permission_mode="acceptEdits",
        lsp={"pylsp": {"command": [PYLSP], "languages": ["python"], "patterns": ["*.py"]}},
    )
    try:
        await session.send("Break it")
    finally:
        await session.lsp.stop()
    assert "lsp" in [tool["name"] for tool in server.requests[0]["tools"]]
    [result] = tool_results(server.requests[2])
    assert tool_result_text(result).endswith(
        "New errors pylsp reports in this file since the edit:\npkg/b.py:6: undefined name 'handle_requset' [pyflakes]"
    )


async def test_where_no_server_has_files_the_tool_says_so_in_one_sentence_and_starts_none(
    server, make_session, tmp_path
):
    """The tool is offered when a server is found, with no walk of the workspace at the start (an empty folder
    gets it for the project the model writes there); a question no server can answer here is one sentence."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("nothing to serve\n")
    server.script(
        tool_use("lsp", {"operation": "workspace_symbols", "symbol": "notes"}),
        tool_use("lsp", {"operation": "document_symbols", "path": "notes.txt"}),
        text("Nothing."),
    )
    session, _ = make_session(
        tmp_path / "docs", lsp={"pylsp": {"command": [PYLSP], "languages": ["python"], "patterns": ["*.py"]}}
    )
    await session.send("hello")
    assert "lsp" in [tool["name"] for tool in server.requests[0]["tools"]]
    assert [tool_result_text(block) for body in server.requests[1:] for block in tool_results(body)] == [
        "The workspace holds no file the language servers serve (they serve: python); use grep.",
        "No language server here serves notes.txt (the servers serve: python); use grep.",
    ]
    assert session.lsp.running == {}


async def test_an_explore_child_s_receipt_records_its_lookups(server, make_session, tmp_path):
    root = project(tmp_path / "repo")
    is_main = lambda body: offers_tool(body, "task")  # noqa: E731
    server.when(
        is_main,
        tool_use(
            "task",
            {"description": "Find callers", "prompt": "Every caller of handle_request.", "subagent_type": "explore"},
        ),
        text("Done."),
    )
    server.when(
        lambda body: not is_main(body),
        tool_use("lsp", {"operation": "references", "path": "pkg/a.py", "line": 1, "symbol": "handle_request"}),
        text("Callers: pkg/b.py:6."),
    )
    session, _ = make_session(root, lsp={"pylsp": {"command": [PYLSP], "languages": ["python"], "patterns": ["*.py"]}})
    try:
        await session.send("delegate")
    finally:
        await session.lsp.stop()
    [block] = tool_results([body for body in server.requests if is_main(body)][1])
    assert "Looked up: references of `handle_request`: 3 places" in tool_result_text(block)
    assert "lsp ×" not in tool_result_text(block)  # said once, with what it found


async def test_a_deny_rule_on_reading_a_file_holds_for_the_lsp_tool(tmp_path):
    """The attack: `Read(pkg/secret.py)` is denied, and the model asks the server for the references of a
    function that file calls (or for the file's own symbols) to read its lines anyway."""
    from agentcli.core.policy.permissions import Permissions

    root = project(tmp_path)
    (root / "pkg" / "secret.py").write_text('from pkg.a import handle_request\nTOKEN = handle_request("hunter2")\n')
    servers = LanguageServers([python_spec([PYLSP])], root, command_env(), Sandbox("auto"), timeout=60)
    ctx = ToolContext(
        workspace=Workspace.at(root),
        emit=lambda event: None,
        permissions=Permissions.from_settings("default", {"deny": ["Read(pkg/secret.py)"]}, False),
        settings=TOOLS,
    )
    tool = LspTool(servers)
    try:
        found = await tool.run(
            {"operation": "references", "path": "pkg/a.py", "line": 1, "symbol": "handle_request"}, ctx
        )
        with pytest.raises(ToolError, match=r"pkg/secret.py is covered by a deny rule \(Read\(pkg/secret.py\)\)"):
            await tool.run({"operation": "document_symbols", "path": "pkg/secret.py"}, ctx)
    finally:
        await servers.stop()
    assert "hunter2" not in found and "secret.py" not in found
    assert found.splitlines()[0] == "references of `handle_request`: 3 places"


async def test_a_server_counts_for_the_workspace_by_its_files_outside_dependency_and_hidden_folders(tmp_path):
    from agentcli.core.lsp.present import WorkspaceLanguages

    rust = ServerSpec("rust-analyzer", ("rust-analyzer",), ("rust",), ("*.rs",))
    for folder in ("node_modules/x", ".hidden", "venv/lib", "docs"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    (tmp_path / "docs" / "a.py").unlink()
    assert await WorkspaceLanguages(tmp_path, [python_spec([PYLSP]), rust]).found(wait=60) == []
    (tmp_path / "docs" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "docs" / "deep" / "er" / "b.py").write_text("y = 2\n")
    assert await WorkspaceLanguages(tmp_path, [python_spec([PYLSP]), rust]).found(wait=60) == [python_spec([PYLSP])]
