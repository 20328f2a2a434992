"""A tool's facts are written on the tool alone (issue 42 §3): policy, hooks, agent files and ``--tools`` read
views of them (core/tool_facts.py), and no table of tool names grows back anywhere else."""

import ast
from pathlib import Path

import agentcli
import agentcli.core.session  # noqa: F401  (a session's modules declare every tool, task's too)
from agentcli.core.engine.tool_catalogue import catalogue
from agentcli.core.policy.hooks import Hooks
from agentcli.core.policy.rules import Rule

SOURCE = Path(agentcli.__file__).parent

# Places that still hold a list of tool names, not yet views of the facts (the front ends' previews, the agent
# types' own tool lists, the names --allowedTools knows beside the default tools): each is
# to go; a new one, or one more in these files, fails.
NOT_YET = {"core/engine/agents.py": 2, "scripting.py": 1}


def _tool_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """The classes that name a tool: the one place its facts are written."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and any(
        isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "name" for t in item.targets)
        for item in node.body)]


def _outside(tree: ast.Module) -> list[ast.AST]:
    """Every node but those of a tool's class and of ``__all__`` (which names a tool's class, not its facts)."""
    exports = [node for node in tree.body if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)]
    inside = {id(node) for top in [*_tool_classes(tree), *exports] for node in ast.walk(top)}
    return [node for node in ast.walk(tree) if id(node) not in inside]


def test_facts_are_written_on_the_tools_alone():
    facts = list(catalogue())
    names = {f.name for f in facts}
    claude = {n for f in facts for n in (f.claude_name, *f.claude_aliases) if n}
    trees = [ast.parse(path.read_text()) for path in SOURCE.rglob("*.py")]
    classes = {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    tools = {cls.name for tree in trees for cls in _tool_classes(tree)}
    spoken = claude - (classes - tools)  # "Agent", "Skill": also other classes of agentcli, in quoted annotations
    tables: dict[str, int] = {}
    named: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        where = path.relative_to(SOURCE).as_posix()
        for node in _outside(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in spoken:
                named.append(f"{where}:{node.lineno} {node.value!r}")
            items = [*node.keys, *node.values] if isinstance(node, ast.Dict) else node.elts \
                if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else []
            if sum(isinstance(i, ast.Constant) and i.value in names | claude for i in items) >= 2:
                tables[where] = tables.get(where, 0) + 1
    assert named == [], "Claude Code's names for tools are written outside the tools' classes"
    assert tables == NOT_YET, "a list of tool names written outside the tools (use the views of core/tool_facts.py)"


def test_the_views_say_what_the_tables_said():
    known = catalogue()
    assert set(known.reading()) == {"read_file", "grep", "glob", "git_status", "git_diff", "git_log", "git_blame"}
    assert set(known.changing()) == {"write_file", "edit_file", "bash"}
    assert Rule.parse("Read(.env)").tools == ("read_file", "grep", "glob")
    assert Rule.parse("MultiEdit").tools == ("edit_file",) and Rule.parse("LS").tools == ("glob",)
    assert Rule.parse("Agent").tools == ("task",) and Rule.parse("KillShell").tools == ("kill_bash",)
    assert known.claude_name("web_search") == "WebSearch" and known.claude_name("mcp__docs__x") == "mcp__docs__x"
    assert known.with_companions(("bash",)) == ("bash", "bash_output", "kill_bash")
    hooks = Hooks([], root=Path("/w"), emit=lambda event: None)
    assert {name for name in known.for_agents() if hooks.claude_input(name, {"path": "a"}) != {"path": "a"}} == \
        {"read_file", "edit_file", "write_file"}
