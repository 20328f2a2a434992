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
    assert offenders("core/tools", ("agentcli.core.loop", "agentcli.core.subagents")) == []


def test_no_front_end_imports_a_private_textual_module():
    private = [f"{path.relative_to(PACKAGE)} imports {module}"
               for path in sorted((PACKAGE / "ui").rglob("*.py")) for module in sorted(imported_modules(path))
               if module.startswith("textual") and any(part.startswith("_") for part in module.split("."))]
    assert private == []


def test_the_check_sees_relative_and_absolute_imports():
    """It would have caught what it forbids, such as session.py's ``from ..config import Settings`` of before."""
    session = PACKAGE / "core" / "session.py"
    assert "agentcli.config" in imported_modules(session, "from ..config import Settings\n")
    assert "agentcli.core.subagents" in imported_modules(PACKAGE / "core" / "tools" / "__init__.py",
                                                         "def f():\n    from ..subagents import TaskTool\n")
    assert "agentcli.ui.slash" in imported_modules(session, "from agentcli.ui import slash\n")
    assert "textual.widgets._collapsible" in imported_modules(session, "from textual.widgets._collapsible import X\n")
