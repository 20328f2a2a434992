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
    private = [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in sorted((PACKAGE / "ui").rglob("*.py"))
        for module in sorted(imported_modules(path))
        if module.startswith("textual") and any(part.startswith("_") for part in module.split("."))
    ]
    assert private == []


def test_the_check_sees_relative_and_absolute_imports():
    """It would have caught what it forbids, such as session.py's ``from ..config import Settings`` of before."""
    session = PACKAGE / "core" / "session.py"
    assert "agentcli.config" in imported_modules(session, "from ..config import Settings\n")
    assert "agentcli.core.engine.subagents" in imported_modules(
        PACKAGE / "core" / "tools" / "__init__.py", "def f():\n    from ..engine.subagents import TaskTool\n"
    )
    assert "agentcli.ui.slash" in imported_modules(session, "from agentcli.ui import slash\n")
    assert "textual.widgets._collapsible" in imported_modules(session, "from textual.widgets._collapsible import X\n")


MAX_LINES = 600  # issue 29: a file longer than this is split on the seams it has


def test_no_module_is_longer_than_600_lines():
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
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
