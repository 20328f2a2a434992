"""The layers point one way: core knows no front end and no config file reader; the tools know no engine."""

from __future__ import annotations

import ast
from pathlib import Path

import agentcli

PACKAGE = Path(agentcli.__file__).parent


def imported_modules(path: Path, source: str | None = None) -> set[str]:
    """Every module a file imports, as an absolute dotted name (relative imports resolved), wherever it stands."""
    package = ".".join(("agentcli", *path.relative_to(PACKAGE).parent.parts))  # where "from ." points
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source, str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # from . import config
    return found


def offenders(folder: str, banned: tuple[str, ...]) -> list[str]:
    out = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for module in sorted(imported_modules(path)):
            if any(module == b or module.startswith(b + ".") for b in banned):
                out.append(f"{path.relative_to(PACKAGE)} imports {module}")
    return out


def test_core_imports_neither_the_config_reader_nor_any_front_end():
    assert offenders("core", ("agentcli.config", "agentcli.ui")) == []


def test_the_tools_import_neither_the_loop_nor_the_subagents():
    assert offenders("core/tools", ("agentcli.core.engine.loop", "agentcli.core.engine.subagents")) == []


def test_no_front_end_imports_a_private_textual_module():
    private = [f"{path.relative_to(PACKAGE)} imports {module}"
               for path in sorted((PACKAGE / "ui").rglob("*.py")) for module in sorted(imported_modules(path))
               if module.startswith("textual") and any(part.startswith("_") for part in module.split("."))]
    assert private == []


def test_the_check_sees_relative_and_absolute_imports():
    """It would have caught what it forbids, such as session.py's ``from ..config import Settings`` of before."""
    session = PACKAGE / "core" / "session.py"
    assert "agentcli.config" in imported_modules(session, "from ..config import Settings\n")
    assert "agentcli.core.engine.subagents" in imported_modules(PACKAGE / "core" / "tools" / "__init__.py",
                                                         "def f():\n    from ..engine.subagents import TaskTool\n")
    assert "agentcli.ui.slash" in imported_modules(session, "from agentcli.ui import slash\n")
    assert "textual.widgets._collapsible" in imported_modules(session, "from textual.widgets._collapsible import X\n")


# What a front end may import from core: the session (which also hands out the few names a front end
# needs to drive it: errors, the workspace, modes, agent types), the events, content blocks and the
# shared formatters. Two process helpers besides, so the file lists for @-completion and the pager run
# the way the tools run processes: with rg's own arguments and a scrubbed environment.
# The TUI draws its first screen before the session's (heavy) import, so the few names it needs by
# then, which the session re-exports, come from where they are defined: credentials, errors and
# context windows (llm), the permission modes, SessionError and whether sessions can be saved (store),
# and how the session is opened in a thread (threads). And the one diff maker (tools.preview): the engine
# sends an approval's diff, and a tool call shown later is diffed from its input the same way.
UI_MAY_IMPORT = {"agentcli.core.door", "agentcli.core.events", "agentcli.core.content", "agentcli.core.units",
                 "agentcli.core.comparison",
                 "agentcli.core.tools.rg", "agentcli.core.system.secret_env", "agentcli.core.tools.preview",
                 "agentcli.core.model.llm", "agentcli.core.policy.permissions", "agentcli.core.storage.store",
                 "agentcli.core.system.threads"}


def core_imports_outside(folder: Path, allowed: set[str]) -> list[str]:
    out = []
    for path in sorted(folder.rglob("*.py")):
        modules = imported_modules(path)
        for module in sorted(modules):
            if module == "agentcli.core" or not module.startswith("agentcli.core."):
                continue  # the package itself is empty; "from ...core import session" names its module too
            if module in allowed or any(module.startswith(a + ".") and module.rsplit(".", 1)[0] == a for a in allowed):
                continue  # a module on the list, or a name imported from one
            out.append(f"{path.relative_to(PACKAGE)} imports {module}")
    return out


def test_front_ends_import_only_the_public_surface_of_core():
    assert core_imports_outside(PACKAGE / "ui", UI_MAY_IMPORT) == []


def test_the_surface_check_sees_storage_imports():
    """It would have caught conversation.py's ``from ....core.history import tool_call_started`` of before."""
    path = PACKAGE / "ui" / "tui" / "widgets" / "conversation.py"
    modules = imported_modules(path, "from ....core.engine.history import tool_call_started\n")
    assert "agentcli.core.engine.history" in modules
    assert not ({m for m in modules if m.startswith("agentcli.core.")} <= UI_MAY_IMPORT)


MAX_LINES = 600  # issue 29: a file longer than this is split on the seams it has


def test_no_module_is_longer_than_600_lines():
    long = {str(path.relative_to(PACKAGE)): lines for path in sorted(PACKAGE.rglob("*.py"))
            if (lines := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def circles(graph) -> list[list[str]]:
    """The import circles of a grimp graph (Tarjan's strongly connected components of two modules or more)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            module, pending = work[-1]
            for imported in pending:
                if imported not in graph.modules or not imported.startswith("agentcli"):
                    continue
                if imported not in index:
                    index[imported] = low[imported] = len(index)
                    stack.append(imported)
                    work.append((imported, iter(sorted(graph.find_modules_directly_imported_by(imported)))))
                    break
                if imported in stack:
                    low[module] = min(low[module], index[imported])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_circle_anywhere_in_agentcli():
    """Beside import-linter's acyclic_siblings contract (pyproject.toml), which compares the modules of each
    folder with each other: this sees a package's own ``__init__`` too (the demo's app once imported its first
    question from the package that imports the app). Imports inside functions count; TYPE_CHECKING ones do not."""
    import grimp

    graph = grimp.build_graph("agentcli", exclude_type_checking_imports=True, cache_dir=None)
    assert circles(graph) == []


def test_the_circle_check_finds_a_circle_through_a_package():
    import grimp

    graph = grimp.ImportGraph()
    for module in ("agentcli", "agentcli.demo", "agentcli.demo.app", "agentcli.cli"):
        graph.add_module(module)
    graph.add_import(importer="agentcli.demo", imported="agentcli.demo.app")
    graph.add_import(importer="agentcli.demo.app", imported="agentcli.demo")
    graph.add_import(importer="agentcli.cli", imported="agentcli.demo")
    assert circles(graph) == [["agentcli.demo", "agentcli.demo.app"]]
# The front ends are typed against the session's public surface (``SessionSurface``, core/surface.py):
# mypy, run by `make test`, then rejects any reach past it (``session.main.…``, ``session.subagents.…``).
# That holds only while no front end names the class itself, which this test keeps so.
FRONT_ENDS = [*sorted((PACKAGE / "ui").rglob("*.py")), PACKAGE / "cli.py", PACKAGE / "scripting.py"]


def names_the_session_class(path: Path, source: str | None = None) -> bool:
    """Whether a file imports ``Session`` (the class, not its Protocol) from agentcli.core.session."""
    return "agentcli.core.session.Session" in imported_modules(path, source)


def test_front_ends_use_the_session_only_through_its_protocol():
    assert [str(p.relative_to(PACKAGE)) for p in FRONT_ENDS if names_the_session_class(p)] == []


def test_the_protocol_check_sees_a_front_end_naming_the_class():
    path = PACKAGE / "ui" / "headless.py"
    assert names_the_session_class(path, "from ..core.session import LLMError, Session\n")
    assert names_the_session_class(path, "if TYPE_CHECKING:\n    from ..core.session import Session\n")
    assert not names_the_session_class(path, "from ..core.session import SessionSurface, SessionError\n")

