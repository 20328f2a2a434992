"""The door (core/door.py): what mypy reads of its later names is what a front end gets, and opening it loads no engine."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

from agentcli.core import door


def test_each_later_name_is_the_one_its_module_defines():
    """What loads on first use is read from door.py's ``if TYPE_CHECKING:`` block (what mypy reads): every name of it
    comes from the module the block names."""
    tree = ast.parse(Path(door.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    names = {
        alias.asname or alias.name: (node.module, alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert len(names) > 20 and set(names) == set(door.later())
    for name, (module, attribute) in names.items():
        assert getattr(door, name) is getattr(importlib.import_module(f"agentcli.core.{module}"), attribute)


def test_a_name_the_door_lacks_is_an_attribute_error():
    try:
        door.Session  # noqa: B018 (the class stays behind the door)
    except AttributeError as exc:
        assert "Session" in str(exc)
    else:
        raise AssertionError("the door handed out the Session class")


def test_opening_the_door_loads_no_engine_module():
    code = (
        "import sys, agentcli.core.door; "
        "print(sorted(m for m in sys.modules if m.startswith(('agentcli.core.engine', 'agentcli.core.tools', "
        "'agentcli.core.mcp', 'agentcli.core.lsp', 'agentcli.core.session', 'agentcli.core.assembly'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
